"""A generation run's configuration: profile defaults, overrides, and validation before any work.

Why validate first: a bad dataset name, model or store found after an hour of generation wastes
the hour; every check here is cheap and writes nothing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hteb_contract.errors import HtebError

from .engine import check_engine_options
from .judge import DEFAULT_PROMPTS, JUDGE_PROMPTS, PARAPLUIE_TEMPLATES
from .models import lookup_model
from .registry import SAMPLE_DATASETS, SOURCES, SourceEntry, lookup_source
from .transformations import PROMPT_SETS, TRANSFORMATIONS

LOCAL_STORE = "file://.hteb/store"
NO_JUDGE = "none"  # --judge-model none: no judge scores


def default_data_dir() -> Path:
    """$HTEB_DATA_DIR, else `../shared/data` seen from where the command runs (the repository root)."""
    return Path(os.environ.get("HTEB_DATA_DIR") or Path("..") / "shared" / "data")


def default_cache_dir() -> Path:
    return Path(os.environ.get("HTEB_CACHE_DIR") or Path.home() / ".cache" / "hteb")


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
    manifest_md: str | None = "MANIFEST.md"  # the published-revisions table to update (None: none)
    engine_options: dict[str, Any] = field(default_factory=dict)  # backend options (--threads, ...), checked per engine
    allow_unpinned: bool = False  # gpu profile: run a Hub model named by a branch (its commit is resolved and recorded)
    ray_address: str | None = None  # engine calls spread over a Ray cluster ("local", "auto" or an address)
    ray_workers: int | None = None  # engines on the cluster (None: as many as its GPUs or CPUs hold)

    def content_config(self) -> dict[str, Any]:
        """What decides the revision's content (no paths, store, label or cache location)."""
        data = asdict(self)
        for key in ("data_dir", "store", "label", "cache_dir", "publish", "batch_size", "engine_options", "profile",
                    "manifest_md", "allow_unpinned", "ray_address", "ray_workers"):
            data.pop(key)
        data["prompt_set_sha256"] = PROMPT_SETS.get(self.prompt_set).sha256
        return data

    def config_hash(self) -> str:
        text = json.dumps(self.content_config(), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()


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
    },
}


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
    label = given.pop("label", None) or (
        f"sample-{'-'.join(map(str, seeds))}" if profile == "cpu" else f"hteb-{'-'.join(map(str, seeds))}"
    )
    config = GenerateConfig(
        seeds=seeds,
        profile=profile,
        datasets=base["datasets"],
        transformations=tuple(TRANSFORMATIONS.names()),
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
    )
    config = replace(config, **given)
    return validate(config)


def validate(config: GenerateConfig) -> GenerateConfig:
    """Every check that needs no model and writes nothing; names are normalised."""
    data_dir = Path(config.data_dir) if config.source == "local" else None  # a local folder of one's own names a dataset

    def entry(name: str) -> SourceEntry:
        return lookup_source(name, data_dir=data_dir)

    datasets = tuple(dict.fromkeys(entry(n).name for n in config.datasets))
    if not datasets:
        raise HtebError("--datasets is empty")
    transformations = tuple(dict.fromkeys(TRANSFORMATIONS.canonical(n) for n in config.transformations))
    if not transformations:
        raise HtebError("--transformations is empty")
    check_engine_options(config.engine, config.engine_options)  # an unknown engine or option, before any model
    spec = lookup_model(config.model)
    if config.engine not in spec.engines:
        raise HtebError(f"model {config.model!r} does not run on engine {config.engine!r} (it runs on: {', '.join(spec.engines)})")
    if config.judge_model is not None and config.engine not in lookup_model(config.judge_model).engines:
        raise HtebError(f"judge model {config.judge_model!r} does not run on engine {config.engine!r}")
    PROMPT_SETS.canonical(config.prompt_set)
    JUDGE_PROMPTS.canonical(config.judge_prompts)
    PARAPLUIE_TEMPLATES.canonical(config.parapluie_template)
    if not 0 <= config.temperature or not 0 <= config.retry_temperature:
        raise HtebError("temperatures must be >= 0")
    if not 0 < config.top_p <= 1:
        raise HtebError(f"--top-p must be in (0, 1], got {config.top_p}")
    if config.max_tokens < 1 or config.max_attempts < 1 or config.batch_size < 1:
        raise HtebError("--max-tokens, --max-attempts and the batch size must be at least 1")
    if config.max_tokens_ceiling is not None and config.max_tokens_ceiling < config.max_tokens:
        raise HtebError(f"--max-tokens-ceiling ({config.max_tokens_ceiling}) must be at least --max-tokens "
                        f"({config.max_tokens})")
    if config.sample is not None and config.sample < 1:
        raise HtebError(f"--sample must be at least 1, got {config.sample}")
    if config.source not in ("local", "hub"):
        raise HtebError(f"unknown source {config.source!r}; known: local, hub")
    if config.source == "local":
        missing = [n for n in datasets if not entry(n).local]
        if missing:
            raise HtebError(f"no local copy of {', '.join(missing)} in the registry; use the gpu profile (Hub sources)")
        root = Path(config.data_dir)
        absent = [n for n in datasets if not (root / str(entry(n).local) / "dataset.json").is_file()]
        if absent:
            raise HtebError(f"data folder {root} lacks {', '.join(absent)} (set --data-dir or HTEB_DATA_DIR)")
    _check_ray(config)
    _check_store(config.store)
    _check_writable(Path(config.cache_dir), "cache dir")
    return replace(config, datasets=datasets, transformations=transformations)


def _check_ray(config: GenerateConfig) -> None:
    """Ray options make sense together and Ray is installed (the cluster is reached when the engine loads)."""
    if config.ray_workers is not None and config.ray_workers < 1:
        raise HtebError(f"--ray-workers must be at least 1, got {config.ray_workers}")
    if config.ray_address is None:
        if config.ray_workers is not None:
            raise HtebError("--ray-workers needs --ray-address (local, auto or a cluster address)")
        return
    if not config.ray_address.strip():
        raise HtebError("--ray-address is empty; give local, auto or a cluster address")
    if importlib.util.find_spec("ray") is None:
        raise HtebError("--ray-address needs Ray: pip install 'hteb-generate[ray]'")


def _check_store(uri: str) -> None:
    if uri.startswith("hf://"):
        return
    path = Path(uri[len("file://"):] if uri.startswith("file://") else uri).expanduser()
    _check_writable(path, "store")


def _check_writable(path: Path, what: str) -> None:
    """The nearest existing ancestor must be a writable folder (nothing is created here)."""
    probe = path.resolve()
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK | os.X_OK):
        raise HtebError(f"{what} {path} is not writable")
