"""A generation run's configuration: profile defaults, overrides, and validation before any work.

Why validate first: a bad dataset name, model or store found after an hour of generation wastes
the hour; every check here is cheap and writes nothing.
"""

from __future__ import annotations

import importlib.util
import os
import site
import sysconfig
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hteb_contract.card import CARD_VERSIONS, FIRST_CARD, HUB_CARD
from hteb_contract.common.atomic import nearest_existing
from hteb_contract.errors import HtebError, unknown_name
from hteb_contract.common.paths import default_cache_dir, expand_home
from hteb_contract.revision import CORPUS_TASK_TYPES, config_hash
from hteb_contract.specs.datasets import DatasetSpec
from hteb_contract.specs.resolved import specs_block, specs_hash
from hteb_contract.specs.transformations import is_pair_rule, transformation_spec
from hteb_contract.stores import check_label, check_store_uri
from hteb_contract.stores.local import enclosing_store

from hteb_generate.bounds import CONFIG_BOUNDS, COUNT, ENGINE_BOUNDS, SHARE, check_number, check_seeds
from hteb_generate.engine import check_engine_options
from hteb_generate.checks.judge import DEFAULT_PROMPTS, JUDGE_PROMPTS, PARAPLUIE_TEMPLATES
from hteb_generate.engine.models import ModelSpec, lookup_model
from hteb_generate.transform import sensitivity
from hteb_generate.transform.noise import (
    CURRENT_RULES,
    FIRST_RULES,
    PERTURBATIONS,
    RULE_LABELS,
    definitions_hash,
    is_rule,
    rule_set,
)
from hteb_generate.sources.source_loading import load_source
from hteb_generate.sources.sources_table import SAMPLE_DATASETS, SOURCES, lookup_source
from hteb_generate.transform.transformations import PROMPT_SETS, TRANSFORMATIONS

LOCAL_STORE = "file://.hteb/store"
NO_RAY = "none"  # --ray-address none: one engine in this process, whatever the GPUs
NO_JUDGE = "none"  # --judge-model none: no judge scores


def repository_root() -> Path | None:
    """The HTEB repository this hteb-generate runs from (a checkout or an editable install), else None
    (an installed package: its files sit in site-packages, beside no repository)."""
    root = Path(__file__).resolve().parents[3]
    layout = ("generate/pyproject.toml", "schemas/pyproject.toml", "score/pyproject.toml")
    return root if all((root / part).is_file() for part in layout) else None


def default_manifest_md() -> str | None:
    """The repository's MANIFEST.md (the table papers cite), or None for an installed package: a
    run writes one elsewhere only where --manifest-md tells it to."""
    root = repository_root()
    return None if root is None else str(root / "MANIFEST.md")


def installed_package_folders() -> tuple[Path, ...]:
    """Where installed packages live (site-packages and the like): nothing a run writes goes there."""
    paths = sysconfig.get_paths()
    folders = {paths["purelib"], paths["platlib"], *site.getsitepackages()}
    if site.ENABLE_USER_SITE:
        folders.add(site.getusersitepackages())
    return tuple(sorted(Path(f).resolve() for f in folders))


def check_outside_packages(path: Path, what: str) -> None:
    """Refuse a path inside an installed package folder (a store or MANIFEST.md there would be lost
    or overwritten with the next install, and is not where a user looks)."""
    resolved = expand_home(path, what).resolve()
    inside = next((f for f in installed_package_folders() if resolved.is_relative_to(f)), None)
    if inside is not None:
        raise HtebError(f"{what} {path} is inside the installed packages at {inside}; give a folder of your own")


def default_data_dir() -> Path:
    """$HTEB_DATA_DIR, else `../shared/data` seen from where the command runs (the repository root)."""
    return Path(os.environ.get("HTEB_DATA_DIR") or Path("..") / "shared" / "data")


@dataclass(frozen=True)
class GenerateConfig:
    seeds: tuple[int, ...]
    profile: str
    datasets: tuple[str, ...]
    transformations: tuple[str, ...]
    model: str
    engine: str
    prompt_set: str
    judge_model: str | None  # None: no judge scores
    judge_prompts: str
    parapluie_template: str
    temperature: float
    top_p: float
    max_tokens: int
    max_tokens_ceiling: int | None  # budget.step_max_tokens; None: every step gets max_tokens
    retry_temperature: float
    max_attempts: int
    sample: int | None  # rows per language subset; None = all rows
    max_texts: int | None  # cap on transformed texts per dataset after sampling (CPU profile; >= 1 row kept)
    max_list: int | None  # cap on elements of list fields per row, e.g. SummEval summaries (CPU profile)
    source: str  # "local" or "hub"
    data_dir: str
    store: str
    label: str
    cache_dir: str
    publish: bool
    batch_size: int
    manifest_md: str | None = None  # the published-revisions table to update (None: none; see default_manifest_md)
    engine_options: dict[str, Any] = field(default_factory=dict)  # backend options (--threads, ...), checked per engine
    #: where the engines run: None, one per GPU of this machine (setup/placement.py); NO_RAY, one in this process;
    #: "local", "auto" or an address, a Ray cluster's workers
    ray_address: str | None = None
    ray_workers: int | None = None  # engines on the cluster (None: as many as its GPUs or CPUs hold)
    corpus_noise: bool = False  # also the retrieval corpora under each noise rule (SAGE Task 5; opt-in)
    noise_rules: str = CURRENT_RULES  # the noise rules' version (transform.noise.RULE_SETS); "1" is noise-1339's
    #: the Sensitivity axis's minimal-pair rules' version (transform.sensitivity.RULE_SETS)
    sensitivity_rules: str = sensitivity.CURRENT_RULES
    #: the manifest records the rows the run is made by (`specs`, folded into the config hash); False only
    #: to rebuild a revision made before the block (`reproduce`), whose config hash has no rows in it
    record_specs: bool = True
    #: the dataset card's version (hteb_contract.card.CARD_VERSIONS): 1, every revision's before the setting and
    #: the noise and sensitivity profiles' default (their published labels remake byte for byte); 2, the gpu and
    #: cpu profiles' default, the Hub's conventions (source_datasets, language_creators, dataset_info, citations)
    card: str = FIRST_CARD
    #: what retries sample from: the generator's published sampling defaults (ModelSpec.top_k, top_p), set by
    #: build_config; None, a retry keeps the first attempt's top_p and the whole vocabulary, as every run made
    #: before the settings (a config naming neither is rebuilt so, and keeps its config hash)
    retry_top_k: int | None = None
    retry_top_p: float | None = None

    def dataset_spec(self, name: str) -> DatasetSpec:
        """A registered dataset, or (local sources) a folder of the data dir that no entry names."""
        return lookup_source(name, data_dir=Path(self.data_dir) if self.source == "local" else None)

    @property
    def llm_transformations(self) -> tuple[str, ...]:
        """The transformations an LLM makes (the others are rules): no model loads without one."""
        return tuple(t for t in self.transformations if not is_rule(t))

    @property
    def noise_transformations(self) -> tuple[str, ...]:
        """The Noise rules among the transformations."""
        return tuple(t for t in self.transformations if is_rule(t) and not is_pair_rule(t))

    @property
    def pair_transformations(self) -> tuple[str, ...]:
        """The Sensitivity axis's minimal-pair rules among the transformations."""
        return tuple(t for t in self.transformations if is_pair_rule(t))

    @property
    def engine_per_gpu(self) -> bool:
        """Whether the run starts an engine per GPU of this machine (vLLM on the gpu profile, no cluster named)."""
        return self.ray_address is None and self.profile == "gpu" and self.engine == "vllm"

    @property
    def rules_name(self) -> str:
        """What made the run's rule-made texts, as its log and progress bar say it (a revision holds one kind)."""
        return "sensitivity rules" if self.pair_transformations else "noise rules"

    def content_config(self) -> dict[str, Any]:
        """What decides the revision's content (no paths, store, label or cache location): without an
        LLM transformation, no model, prompt, judge or decoding setting, and the noise rules' hash."""
        data = asdict(self)
        for key in (
            "data_dir",
            "store",
            "label",
            "cache_dir",
            "publish",
            "batch_size",
            "engine_options",
            "profile",
            "manifest_md",
            "ray_address",
            "ray_workers",
            "record_specs",
        ):
            data.pop(key)
        if self.record_specs:
            data["specs_sha256"] = specs_hash(self.specs())
        if not self.corpus_noise:  # off, it is left out: a revision without it keeps its config hash
            data.pop("corpus_noise")
        if self.card == FIRST_CARD:  # likewise: every revision made before the setting has card 1
            data.pop("card")
        # version 1 (or no noise rule at all) is left out, as before versions: noise-1339 keeps its config hash
        if self.noise_rules == FIRST_RULES or not self.noise_transformations:
            data.pop("noise_rules")
        if self.noise_transformations:
            data["noise_rules_sha256"] = definitions_hash(self.noise_rules)
        if self.pair_transformations:  # absent from every revision without them: their config hashes stay
            data["sensitivity_rules_sha256"] = sensitivity.definitions_hash(self.sensitivity_rules)
        else:
            data.pop("sensitivity_rules")
        for key in ("retry_top_k", "retry_top_p"):  # unset: left out, as in every config made before them
            if data[key] is None or not self.llm_transformations:
                data.pop(key)
        if not self.llm_transformations:
            for key in LLM_SETTINGS:
                data.pop(key)
            return data
        data["prompt_set_sha256"] = PROMPT_SETS.get(self.prompt_set).sha256
        return data

    def specs(self) -> dict[str, Any]:
        """The rows the run is made by (the manifest's `specs` block, `hteb_contract.specs.resolved`)."""
        detector = None
        if any("wrong_language" in transformation_spec(t).detectors for t in self.llm_transformations):
            from hteb_generate.transform.langid import detector_info  # lingua, only for a run that checks languages

            detector = detector_info()
        scripts = self.noise_rules != FIRST_RULES and bool(self.noise_transformations)
        return specs_block(self.datasets, self.transformations, noise_scripts=scripts, language_detector=detector)

    def config_hash(self) -> str:
        return config_hash(self.content_config())


#: Settings that only an LLM transformation reads.
LLM_SETTINGS = (
    "model",
    "engine",
    "prompt_set",
    "judge_model",
    "judge_prompts",
    "parapluie_template",
    "temperature",
    "top_p",
    "max_tokens",
    "max_tokens_ceiling",
    "retry_temperature",
    "max_attempts",
)

PROFILES: dict[str, dict[str, Any]] = {
    "gpu": {
        "datasets": tuple(SOURCES.names()),
        "model": "gemma-3-27b-it-int4-awq",
        "engine": "vllm",
        "prompt_set": "paper",
        "judge_model": "gemma-3-27b-it-int4-awq",
        "parapluie_template": "parapluie-fs-direct",
        "max_tokens": 1024,
        "max_tokens_ceiling": 4096,
        "sample": None,
        "max_texts": None,
        "max_list": None,
        "source": "hub",
        "batch_size": 4096,
        "max_attempts": 3,
        "card": HUB_CARD,
    },
    "cpu": {
        "datasets": SAMPLE_DATASETS,
        "model": "smollm2",
        "engine": "transformers",
        "prompt_set": "smollm2-fewshot",
        "judge_model": "smollm2",
        "parapluie_template": "parapluie-direct",
        "max_tokens": 48,
        "max_tokens_ceiling": None,
        "sample": 4,
        "max_texts": 8,
        "max_list": 2,
        "source": "local",
        "batch_size": 32,
        "max_attempts": 2,
        "card": HUB_CARD,
    },
}

# The Noise axis: the rules of noise.py on every dataset of the data dir, at full size, no LLM; the cpu
# profile's model settings are read only if an LLM transformation is added with --transformations.
PROFILES["noise"] = {
    **PROFILES["cpu"],
    "datasets": None,
    "transformations": tuple(PERTURBATIONS.names()),
    "judge_model": None,
    "sample": None,
    "max_texts": None,
    "max_list": None,
    "card": FIRST_CARD,  # noise2-1339's, noise3-1339's: the profile's command remakes them byte for byte
}

# The Sensitivity axis (issue 45): its minimal-pair rules on every dataset of the data dir, at full size, no LLM.
PROFILES["sensitivity"] = {**PROFILES["noise"], "transformations": tuple(sensitivity.RULES.names())}

#: The noise profile's: transform.noise.RULE_LABELS.
DEFAULT_LABELS = {"gpu": "hteb", "cpu": "sample", "sensitivity": sensitivity.LABEL_STEM}
#: The card a profile's bare default label names (another card adds `-card<N>`): card 1 where the profile published
#: under it (sample-1339, noise3-1339, sensitivity-1339: a label never moves), card 2 for gpu, which published none.
BARE_LABEL_CARDS = {"gpu": HUB_CARD}


def data_dir_datasets(data_dir: Path) -> tuple[str, ...]:
    """Every dataset folder (one holding a dataset.json) of a data dir, by name."""
    return tuple(sorted(p.parent.name for p in Path(data_dir).glob("*/dataset.json")))


def parse_seeds(text: str) -> tuple[int, ...]:
    """`1339` or `1337,1338,1339`; anything else is a user error."""
    parts = [p.strip() for p in str(text).split(",") if p.strip()]
    try:
        seeds = tuple(int(p) for p in parts)
    except ValueError:
        raise HtebError(f"--seed must be an integer or a comma-separated list of integers, got {text!r}") from None
    if not seeds:
        raise HtebError("--seed is empty")
    return tuple(dict.fromkeys(seeds))


def _names(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(n.strip() for n in text.split(",") if n.strip())


def _default_store(profile: str) -> str:
    repo = os.environ.get("HTEB_HUB_REPO")
    token = os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN")
    if profile == "gpu" and repo and token:
        return f"hf://{repo}"
    return LOCAL_STORE


def build_config(
    *,
    seed: str,
    profile: str,
    overrides: dict[str, Any],
) -> GenerateConfig:
    """Profile defaults, then the options the user gave (None = not given; judge model "none" = no judge),
    then validation."""
    if profile not in PROFILES:
        raise HtebError(f"unknown profile {profile!r}; known: {', '.join(PROFILES)}")
    seeds = parse_seeds(seed)
    base = dict(PROFILES[profile])
    given = {k: v for k, v in overrides.items() if v is not None}
    if "datasets" in given:
        given["datasets"] = _names(given["datasets"])
    if "transformations" in given:
        given["transformations"] = _names(given["transformations"])
    if given.get("judge_model") == NO_JUDGE:
        given["judge_model"] = None
    rules = given.get("noise_rules", CURRENT_RULES)  # an unknown version is refused by validate()
    stem = RULE_LABELS.get(rules, "noise") if profile == "noise" else DEFAULT_LABELS[profile]
    card = given.get("card", base["card"])  # a card of another version is another revision: another label
    named = "" if card == BARE_LABEL_CARDS.get(profile, FIRST_CARD) else f"-card{card}"
    default_label = f"{stem}{named}-{'-'.join(map(str, seeds))}"
    label = given.pop("label", default_label)  # an empty --label is refused, not replaced
    config = GenerateConfig(
        seeds=seeds,
        profile=profile,
        datasets=base["datasets"] or data_dir_datasets(Path(given.get("data_dir") or default_data_dir())),
        transformations=base.get("transformations", tuple(TRANSFORMATIONS.names())),
        model=base["model"],
        engine=base["engine"],
        prompt_set=base["prompt_set"],
        judge_model=base["judge_model"],
        judge_prompts=DEFAULT_PROMPTS.id,
        parapluie_template=base["parapluie_template"],
        temperature=0.0,
        top_p=1.0,
        max_tokens=base["max_tokens"],
        max_tokens_ceiling=base["max_tokens_ceiling"],
        retry_temperature=0.7,
        max_attempts=base["max_attempts"],
        sample=base["sample"],
        max_texts=base["max_texts"],
        max_list=base["max_list"],
        source=base["source"],
        data_dir=str(default_data_dir()),
        store=_default_store(profile),
        label=label,
        cache_dir=str(default_cache_dir()),
        publish=True,
        batch_size=base["batch_size"],
        manifest_md=default_manifest_md(),
        card=base["card"],
    )
    config = validate(replace(config, **given))
    if config.llm_transformations and "retry_top_k" not in given and "retry_top_p" not in given:
        spec = lookup_model(config.model)  # retries sample with the generator's published defaults
        config = replace(config, retry_top_k=spec.top_k, retry_top_p=spec.top_p)
    return config


def validate(config: GenerateConfig) -> GenerateConfig:
    """Every check that needs no model and writes nothing; names are normalised. What passes here
    does not fail later for a reason seen here: numbers in range (bounds.py), names known, label
    and store URI accepted by the store, paths writable, and the local sources read. A path the
    filesystem refuses to even look at (a name too long, a loop of links) is a one-line error too."""
    try:
        return _validate(config)
    except OSError as err:
        shown = str(err.filename) if len(str(err.filename)) <= 80 else f"{str(err.filename)[:77]}..."
        raise HtebError(f"cannot use {shown!r}: {err.strerror}") from None


def _validate(config: GenerateConfig) -> GenerateConfig:
    _check_numbers(config)
    data_dir = (
        Path(config.data_dir) if config.source == "local" else None
    )  # a local folder of one's own names a dataset

    def entry(name: str) -> DatasetSpec:
        return lookup_source(name, data_dir=data_dir)

    datasets = tuple(dict.fromkeys(entry(n).name for n in config.datasets))
    if not datasets:
        raise HtebError("--datasets is empty")
    transformations = tuple(dict.fromkeys(_transformation(n) for n in config.transformations))
    if not transformations:
        raise HtebError("--transformations is empty")
    if any(not is_rule(t) for t in transformations):  # only an LLM transformation reads the model settings
        _check_llm_settings(config)
    if config.source not in ("local", "hub"):
        raise HtebError(f"unknown source {config.source!r}; known: local, hub")
    rule_set(config.noise_rules)  # an unknown rules version is a one-line error
    if config.sensitivity_rules not in sensitivity.RULE_SETS:
        raise HtebError(
            f"unknown sensitivity rules version {config.sensitivity_rules!r}; known: {', '.join(sensitivity.RULE_SETS)}"
        )
    pairs = [t for t in transformations if is_pair_rule(t)]
    if pairs and len(pairs) < len(transformations):
        raise HtebError(
            "the Sensitivity axis's rules make a revision of their own (--profile sensitivity): "
            f"{', '.join(t for t in transformations if not is_pair_rule(t))} cannot join them"
        )
    if pairs:
        sensitivity.adjective_pairs()  # WordNet missing is one line here, before anything is read
    if config.card not in CARD_VERSIONS:
        raise HtebError(f"unknown card version {config.card!r}; known: {', '.join(CARD_VERSIONS)}")
    if config.corpus_noise:
        _check_corpus_noise(transformations, [entry(n) for n in datasets])
    check_label(config.label)
    check_store_uri(config.store)
    _check_paths(config)
    _check_ray(config)
    if config.source == "local":
        missing = [n for n in datasets if not entry(n).local]
        if missing:
            raise HtebError(
                f"no local copy of {', '.join(missing)} in the sources table; use the gpu profile (Hub sources)"
            )
        root = Path(config.data_dir)
        absent = [n for n in datasets if not (root / str(entry(n).local) / "dataset.json").is_file()]
        if absent:
            raise HtebError(f"data folder {root} lacks {', '.join(absent)} (set --data-dir or HTEB_DATA_DIR)")
        for name in datasets:  # read as the run reads them: a bad row fails here, not after the model loads
            load_source(
                entry(name),
                source="local",
                data_dir=root,
                sample=config.sample,
                max_texts=config.max_texts,
                max_list=config.max_list,
            )
    return replace(config, datasets=datasets, transformations=transformations)


def _check_numbers(config: GenerateConfig) -> None:
    """Seeds and every numeric option in its range (bounds.py), and the ceiling above max_tokens."""
    if not config.seeds:
        raise HtebError("--seed is empty")
    check_seeds(config.seeds)
    for name, (option, bounds) in CONFIG_BOUNDS.items():
        value = getattr(config, name)
        if value is not None:
            check_number(option, value, bounds)
    for name, bounds in (("retry_top_k", COUNT), ("retry_top_p", SHARE)):  # no option: a manifest's config
        value = getattr(config, name)
        if value is not None:
            check_number(name, value, bounds)
    for name, value in config.engine_options.items():
        if name in ENGINE_BOUNDS and value is not None:
            option, bounds = ENGINE_BOUNDS[name]
            check_number(option, value, bounds)
    if config.max_tokens_ceiling is not None and config.max_tokens_ceiling < config.max_tokens:
        raise HtebError(
            f"--max-tokens-ceiling ({config.max_tokens_ceiling}) must be at least --max-tokens ({config.max_tokens})"
        )


def _transformation(name: str) -> str:
    """An LLM transformation's canonical name, or a noise rule's; an unknown one names both kinds."""
    if is_rule(name):
        return name
    try:
        return TRANSFORMATIONS.canonical(name)
    except HtebError:
        raise unknown_name(
            "transformation", name, [*TRANSFORMATIONS.names(), *PERTURBATIONS.names(), *sensitivity.RULES.names()]
        ) from None


def _check_corpus_noise(transformations: tuple[str, ...], entries: list[DatasetSpec]) -> None:
    """--corpus-noise perturbs retrieval corpora with the noise rules: the run needs both."""
    if not any(is_rule(t) and not is_pair_rule(t) for t in transformations):
        raise HtebError(
            f"--corpus-noise needs a noise rule among the transformations ({', '.join(PERTURBATIONS.names())})"
        )
    if not any(e.task_type in CORPUS_TASK_TYPES for e in entries):
        raise HtebError(
            f"--corpus-noise needs a {' or '.join(CORPUS_TASK_TYPES)} dataset among the datasets "
            f"(e.g. SciFact); none of {', '.join(e.name for e in entries)} has a corpus to perturb"
        )


def _check_llm_settings(config: GenerateConfig) -> None:
    """The model, engine, prompts and judge of the LLM transformations."""
    check_engine_options(config.engine, config.engine_options)  # an unknown engine or option, before any model
    spec = lookup_model(config.model)
    if config.engine not in spec.engines:
        raise HtebError(
            f"model {config.model!r} does not run on engine {config.engine!r} (it runs on: {', '.join(spec.engines)})"
        )
    if config.judge_model is not None and config.engine not in lookup_model(config.judge_model).engines:
        raise HtebError(f"judge model {config.judge_model!r} does not run on engine {config.engine!r}")
    _check_context(config, spec)
    PROMPT_SETS.canonical(config.prompt_set)
    JUDGE_PROMPTS.canonical(config.judge_prompts)
    PARAPLUIE_TEMPLATES.canonical(config.parapluie_template)


def _check_ray(config: GenerateConfig) -> None:
    """Ray options make sense together and Ray is installed (the cluster is reached when the engine loads;
    the doctor checks Ray where the engine per GPU needs it)."""
    if config.ray_address == NO_RAY and config.ray_workers is not None:
        raise HtebError("--ray-workers sizes a Ray cluster; --ray-address none runs one engine in this process")
    if config.ray_address in (None, NO_RAY):
        if config.ray_workers is not None and not config.engine_per_gpu:
            raise HtebError("--ray-workers needs --ray-address (local, auto or a cluster address)")
        return
    if not config.ray_address.strip():
        raise HtebError("--ray-address is empty; give local, auto or a cluster address")
    if importlib.util.find_spec("ray") is None:
        raise HtebError("--ray-address needs Ray: pip install 'hteb-generate[ray]'")


def _check_context(config: GenerateConfig, spec: ModelSpec) -> None:
    """On vLLM, every request asks for at least --max-tokens new tokens; at or above the context
    length, every reply would be cut at it (vLLM cuts without an error: finish reason "length").
    A larger --max-tokens-ceiling only caps the long inputs' budgets, which the context caps too."""
    if config.engine != "vllm":
        return
    context = config.engine_options.get("max_model_len") or spec.max_model_len
    if context is not None and config.max_tokens >= context:
        raise HtebError(
            f"--max-tokens ({config.max_tokens}) leaves no room for a prompt in the {context}-token "
            f"context of {config.model} (lower it, or raise --max-model-len)"
        )


def _check_paths(config: GenerateConfig) -> None:
    """The folders and files a run writes: the cache, the store (when publishing) and MANIFEST.md."""
    for option, value in (
        ("--data-dir", config.data_dir),
        ("--cache-dir", config.cache_dir),
        ("--manifest-md", config.manifest_md),
    ):
        if value is not None and (not value.strip() or "\0" in value):
            raise HtebError(f"{option} {value!r} is not a path")
    _check_writable(Path(config.cache_dir), "cache dir")
    local = [_store_path(config.store)] if "://" not in config.store or config.store.startswith("file://") else []
    for option, value in (("--cache-dir", config.cache_dir), ("--manifest-md", config.manifest_md)):
        store = enclosing_store(Path(value), *local) if value is not None else None
        if store is not None:
            raise HtebError(f"{option} {value} is inside the store {store}: a store holds published revisions only")
    if not config.publish:
        return
    if "://" not in config.store or config.store.startswith("file://"):
        check_outside_packages(_store_path(config.store), "store")
        _check_writable(_store_path(config.store), "store")
    if config.manifest_md is not None:
        check_outside_packages(Path(config.manifest_md), "--manifest-md")
        _check_manifest_md(Path(config.manifest_md))


def _store_path(uri: str) -> Path:
    return expand_home(uri[len("file://") :] if uri.startswith("file://") else uri, "--store")


def _check_manifest_md(path: Path) -> None:
    """MANIFEST.md is read, then replaced, at the very end of a run."""
    check_output_file(path, "--manifest-md")
    if path.exists():
        try:
            path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise HtebError(f"--manifest-md {path} is not readable UTF-8 text ({type(err).__name__})") from None


def check_output_file(path: Path, option: str) -> None:
    """A file written (atomically, beside itself) at the end of a command: not a folder, and in a
    folder that is writable or can be made."""
    _check_writable(path.parent, f"folder of {option}")
    if path.is_dir():
        raise HtebError(f"{option} {path} is a folder, not a file")


def _check_writable(path: Path, what: str) -> None:
    """The nearest existing ancestor must be a writable folder (nothing is created here)."""
    try:
        probe = nearest_existing(path.resolve())
        writable = probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)
    except OSError as err:  # e.g. a name too long for the filesystem
        raise HtebError(f"{what} {path} is not usable ({err.strerror})") from None
    if not writable:
        raise HtebError(f"{what} {path} is not writable")
