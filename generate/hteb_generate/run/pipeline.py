"""One generation run, end to end: sources -> units -> transform + retry -> judge -> item records
-> revision folder (sources, items, card, manifest) -> publish (or keep the published revision this
run reproduces) -> MANIFEST.md.

Why the revision is rebuilt from the cache every time: after kill -9 the rerun replays every
finished call from the cache and writes the same files, so the result is the same revision
(same file hashes), and `created` comes from the run state kept beside the cache.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pyarrow as pa

from hteb_contract.common import json_input
from hteb_contract.card import HUB_CARD
from hteb_contract.common.atomic import atomic_write_json
from hteb_contract.errors import ContractError, HtebError, IntegrityError, StoreError
from hteb_contract.records import ItemRecord, Judge, Sampling
from hteb_contract.common.locks import exclusive
from hteb_contract.reproduction import Tolerance, compare_revisions
from hteb_contract.revision import (
    CORPUS_TASK_TYPES,
    MANIFEST,
    Revision,
    Variant,
    file_entries,
    write_revision,
)
from hteb_contract.sources import SourceDataset, write_source_parquet
from hteb_contract.stores import PublishResult, RevisionStore, open_store


from hteb_generate.revision import manifest_md

from hteb_generate.transform import noise
from hteb_generate.revision.card_info import dataset_info
from hteb_generate.revision.card import card_body
from hteb_generate.revision.card_configs import check_configs_load
from hteb_generate.revision.manifest_fields import manifest_fields, repo_id, rows
from hteb_generate.setup.config import GenerateConfig
from hteb_generate.engine import ENGINES, CachedEngine, CallCache, Engines, create_engine
from hteb_generate.setup.engine_plan import EngineSlot, engine_setup, engine_slots, runtime
from hteb_generate.revision.reproduce import differences_line
from hteb_generate.run.generation import Decoding, TextJob, judge_units, transform_units
from hteb_generate.checks.judge import JUDGE_PROMPTS, PARAPLUIE_TEMPLATES
from hteb_generate.setup.machine import Facts, probe
from hteb_generate.progress import bar
from hteb_generate.setup.pins import resolve_pins, unpinned_problem
from hteb_generate.setup.placement import Placement, placement
from hteb_generate.sources.source_loading import load_source
from hteb_generate.sources.sources_table import source_task_ids
from hteb_generate.transform.transformations import PROMPT_SETS
from hteb_generate.run.units import PlannedItem, plan_units


@dataclass
class RunResult:
    manifest: dict[str, Any]
    folder: Path  # the sealed revision (staging copy)
    published: PublishResult | None


def _engine(cfg: GenerateConfig, slot: EngineSlot, cache: CallCache, where: Placement, facts: Facts) -> CachedEngine:
    """A lazily loaded engine for `slot`, at the commit its model is pinned to (by the registry, or
    its branch resolved once for the run: `facts.pins`), since the commit keys every cached call;
    in this process, or one per worker of the Ray cluster `where` names."""
    problem = unpinned_problem(slot.spec, facts)
    if problem is not None:
        raise HtebError(problem)
    spec = slot.spec
    cache_dir = Path(cfg.cache_dir)
    backend = ENGINES.get(cfg.engine)
    # --batch-size is the engine's batch for a backend that batches itself (transformers), else only the commit chunk.
    batching = {"batch_size": cfg.batch_size} if "batch_size" in backend.options else {}
    planned = {k: v for k, v in slot.options().items() if k in backend.options}  # context and memory share
    options = {**batching, **cfg.engine_options, **planned}

    def load():
        kwargs = dict(model_path=spec.resolve(cache_dir), model_id=spec.model_id, revision=spec.revision, **options)
        if where.address is None:
            return create_engine(cfg.engine, **kwargs)
        from hteb_generate.engine.ray_engine import RayEngine

        return RayEngine(
            partial(create_engine, cfg.engine, **kwargs),
            model_id=spec.model_id,
            revision=spec.revision,
            address=where.address,
            workers=where.workers,
            resources=backend.worker_resources(options),
        )

    return CachedEngine(
        load,
        cache,
        model_id=spec.model_id,
        revision=spec.revision,
        name=cfg.engine,
        commit_every=cfg.batch_size,
        setup=engine_setup(cfg.engine, options, facts),  # answers of another setup are keyed apart
    )


def build_engines(cfg: GenerateConfig, cache: CallCache, facts: Facts, slots: list[EngineSlot]) -> Engines | None:
    """The run's engines, none loaded until its first uncached call (so making both costs nothing);
    None without slots (noise rules make every text)."""
    if not slots:
        return None
    where = placement(cfg, facts)
    by_role = {}
    for slot in slots:
        engine = _engine(cfg, slot, cache, where, facts)
        by_role.update(dict.fromkeys(slot.roles, engine))
    return Engines(by_role["generator"], by_role.get("judge"))


def load_datasets(cfg: GenerateConfig) -> dict[str, SourceDataset]:
    """The run's source datasets by name, sampled and capped as `cfg` says."""
    datasets = {}
    for name in bar(cfg.datasets, "reading sources", len(cfg.datasets), "dataset"):
        entry = cfg.dataset_spec(name)
        datasets[entry.name] = load_source(
            entry,
            source=cfg.source,
            data_dir=Path(cfg.data_dir),
            sample=cfg.sample,
            max_texts=cfg.max_texts,
            max_list=cfg.max_list,
        )
    return datasets


def _state_path(cfg: GenerateConfig) -> Path:
    """Where a configuration's run state (its creation time, runtime and what its engines found) is kept."""
    return Path(cfg.cache_dir) / "runs" / f"{cfg.config_hash()}.json"


def _run_state(cfg: GenerateConfig, runtime: dict[str, Any], log: Callable[[str], None]) -> dict[str, Any]:
    """The run's creation time, fixed on its first start so a resumed run reproduces the manifest, and the
    runtime of this start: the call cache keys answers by their setup (engine/cache.py), so every answer
    this start reads was made on this runtime, and the manifest records it. A start on another runtime
    than the previous one is said in the log (the earlier setup's answers are not reused)."""
    path = _state_path(cfg)
    if path.is_file():
        state = json_input.read(path)
    else:
        created = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
        state = {"created": created, "config": cfg.content_config()}
    before = state.get("runtime")
    if before is not None and before != runtime:
        log(
            f"note: this run last started with {json.dumps(before)}; it now runs with {json.dumps(runtime)}: "
            "answers cached under an engine setup that differs are keyed apart and made again here, and "
            "the manifest records this runtime"
        )
    if before != runtime:
        state["runtime"] = runtime
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, state)
    return state


def _record_found(cfg: GenerateConfig, state: dict[str, Any], engines: Engines, log: Callable[[str], None]) -> None:
    """What each engine that loaded found (its KV cache, sized by profiling: it decides when a batch is preempted,
    so it is part of what a GPU regeneration must match), kept in the run's state beside its runtime for the
    manifest (`engine_plan.with_found`); a start that finds another than the last is said in the log."""
    found = {e.model_id: e.found for e in engines.distinct() if e.found}
    before = state.get("found", {})
    for model, facts in found.items():
        if before.get(model) not in (None, facts):
            log(f"note: {model}'s engine found {json.dumps(facts)}, its last start {json.dumps(before[model])}")
    if found and {**before, **found} != before:
        state["found"] = {**before, **found}
        atomic_write_json(_state_path(cfg), state)


PARAPLUIE_DIGITS = 3


def _rounded(value: float | None) -> float | None:
    """Log-probabilities differ in their last bits between machines (CPU kernels, BLAS, threads) and, on a
    GPU, by more with the batch they were computed in (which deterministic scheduling makes a function of
    the chunk: engine/vllm_engine.py `CORE_ENV`). Rounding hides most such differences from the published
    bytes, not one beside a rounding step, so `reproduce` compares ParaPLUIE within a tolerance
    (docs/reproducing.md)."""
    return None if value is None else round(value, PARAPLUIE_DIGITS)


def _sampling(cfg: GenerateConfig) -> Sampling:
    """The first attempt's decoding settings, as the run uses them and each item record keeps them."""
    return Sampling(cfg.temperature, cfg.top_p, cfg.max_tokens)


def _transform(cfg: GenerateConfig, units: list[TextJob], engines: Engines) -> None:
    """Every LLM unit transformed, then judged; the engines closed whatever happens."""
    decoding = Decoding(
        _sampling(cfg),
        cfg.retry_temperature,
        cfg.max_attempts,
        cfg.max_tokens_ceiling,
        retry_top_k=cfg.retry_top_k,
        retry_top_p=cfg.retry_top_p,
    )
    try:
        transform_units(units, engines.generator, PROMPT_SETS.get(cfg.prompt_set), decoding)
        if engines.judge is not None:
            if engines.judge is not engines.generator:  # its workers' GPUs go to the judge's
                engines.generator.close()
            judge_units(
                units,
                engines.judge,
                prompts=JUDGE_PROMPTS.get(cfg.judge_prompts),
                template=PARAPLUIE_TEMPLATES.get(cfg.parapluie_template),
            )
    finally:
        for engine in engines.distinct():
            engine.close()


def item_record(cfg: GenerateConfig, engines: Engines, item: PlannedItem) -> ItemRecord:
    """The published record of one planned item: its unit's kept output, attempts and judge scores."""
    prompts = PROMPT_SETS.get(cfg.prompt_set)
    ref, unit = item.ref, item.unit
    scores = unit.judge
    return ItemRecord(
        dataset=item.dataset,
        task_type=item.task_type,
        subset=ref.subset,
        split=ref.table,
        item_id=ref.item_id,
        field=ref.field,
        source_language=ref.language,
        transformation=item.transformation,
        seed=item.seed,
        target_language=unit.plan.target,
        intermediate_language=unit.plan.pivot,
        original_text=ref.text,
        transformed_text=unit.kept.output,
        generator_model=engines.generator.model_id,
        generator_revision=engines.generator.revision or None,
        prompt_set=prompts.id,
        prompt_template_id=prompts.template_id(unit.transformation),
        prompt_hash=prompts.hash_of(unit.transformation.template_keys),
        sampling=_sampling(cfg),
        attempts=tuple(unit.attempts),
        errors=unit.kept.errors,
        judge=Judge(
            model=engines.judge.model_id if engines.judge is not None else None,
            quality=scores.quality if scores else None,
            fluency=scores.fluency if scores else None,
            parapluie=_rounded(scores.parapluie) if scores else None,
        ),
        fallback=all(a.errors for a in unit.attempts),
    )


def run(cfg: GenerateConfig, *, log=print, facts: Facts | None = None) -> RunResult:
    """Generate, write, seal and (unless disabled) publish the revision `cfg` describes (`facts`: this
    machine's, probed when not given).

    One run of a configuration at a time per cache: its staging folder is rebuilt from scratch, so
    a second run of it (two shells on the default cache) is refused in one line while the first
    holds the staging lock; run again once it is done, and its work is reused from the cache."""
    lock = staging_folder(cfg).with_suffix(".lock")
    busy = (
        f"another hteb-generate run is making this configuration's revision ({cfg.config_hash()[:12]}) in "
        f"{cfg.cache_dir}; let it finish, then run again (its work is reused)"
    )
    with exclusive(lock, wait=False, busy=busy):
        return _run(cfg, log=log, facts=facts)


def staging_folder(cfg: GenerateConfig) -> Path:
    """Where a configuration's revision is written and sealed before it is published; a rule-only run's also
    names the rules' code (`noise.rules_code_digest`), since it is reused whole by the next run of the
    configuration (`_staged_by_rules`) and a rule edited in between would otherwise be served as it was."""
    name = cfg.config_hash()
    if not cfg.llm_transformations:
        name = f"{name}-rules-{noise.rules_code_digest()[:12]}"
    return Path(cfg.cache_dir) / "staging" / name


def _run(cfg: GenerateConfig, *, log, facts: Facts | None) -> RunResult:
    cache_dir = Path(cfg.cache_dir)
    cache = CallCache(cache_dir / "calls.sqlite")
    facts = resolve_pins(cfg, probe() if facts is None else facts)  # the CLI's doctor resolved them already
    slots = engine_slots(cfg, facts) if cfg.llm_transformations else []  # noise rules alone load no model
    state = _run_state(cfg, runtime(facts, slots), log)
    datasets = load_datasets(cfg)
    units, items = plan_units(cfg, datasets)
    if cfg.llm_transformations:
        log(
            f"{len(items)} items, {len(units)} distinct texts to transform ({len(datasets)} datasets x "
            f"{len(cfg.llm_transformations)} LLM transformations x {len(cfg.seeds)} seeds)"
        )

    engines = build_engines(cfg, cache, facts, slots)
    if engines is not None:
        _transform(cfg, units, engines)
        _record_found(cfg, state, engines, log)
    folder = staging_folder(cfg)
    manifest = None if slots else _staged_by_rules(cfg, folder, datasets)
    if manifest is None:
        # no engines: no LLM transformation, so no planned item either
        records = (
            []
            if engines is None
            else [item_record(cfg, engines, item) for item in bar(items, "item records", len(items), "rec")]
        )
        rules = [t for t in cfg.transformations if noise.is_rule(t)]
        made_by_rules = _rule_tables(cfg, datasets, rules)
        if rules:
            log(f"{rows(made_by_rules)} items made by the {cfg.rules_name} ({', '.join(rules)})")
        corpus = _corpus_tables(cfg, datasets, rules)
        if cfg.corpus_noise:
            log(f"{rows(corpus)} corpus titles and texts made by the noise rules (--corpus-noise)")
        manifest = _write_revision(cfg, folder, datasets, records, made_by_rules, state, engines, corpus)
        try:  # a revision whose card datasets cannot read is never published
            configs = check_configs_load(folder)
        except ContractError as err:
            raise ContractError(f"{err}; not published, the revision is kept at {folder}") from None
        log(f"the dataset card's {configs} configs load with datasets.load_dataset")
    else:
        log(f"the noise rules made this configuration's records from these very sources before: reusing {folder}")
    cache.close()
    c = manifest["counters"]
    log(
        f"sealed {manifest['label']} ({manifest['content_hash'][:12]}): {c['items']} items, {c['llm_calls']} LLM calls, "
        f"{c['cache_hits']} cache hits, {c['retries']} retries, {c['fallbacks']} fallbacks"
    )
    published = None
    if cfg.publish:
        store = open_store(cfg.store)
        if cfg.manifest_md and manifest["label"] not in store.labels():  # before anything is published
            try:
                manifest_md.refuse_moving(Path(cfg.manifest_md), manifest, store.uri)
            except StoreError as err:
                raise StoreError(f"{err}; this run's revision is kept at {folder}") from None
        manifest, published = _publish(store, folder, manifest, log)
        if cfg.manifest_md:
            manifest_md.update(Path(cfg.manifest_md), manifest, published.uri, published.revision_id)
        else:
            log(
                "MANIFEST.md not updated: hteb-generate runs from an installed package, not its repository "
                "(--manifest-md PATH names one)"
            )
        log(f"published {published.label} to {published.uri} ({'new' if published.created else 'already there'})")
    return RunResult(manifest, folder, published)


def _publish(
    store: RevisionStore, folder: Path, manifest: dict[str, Any], log: Callable[[str], None]
) -> tuple[dict[str, Any], PublishResult]:
    """Publish the sealed `folder`, or, when its label already holds other content, keep the published
    revision if this run reproduces it (`hteb_contract.reproduction`: texts identical, judge numbers
    within the default tolerance) and return its manifest. Another machine's last-bit log-probability
    differences must not fail the documented command; a label never moves. A run that does not
    reproduce is a one-line StoreError; its staged revision stays in `folder`."""
    label = manifest["label"]
    if label in store.labels():
        try:
            theirs = store.fetch(label)
        except (ContractError, IntegrityError) as err:  # e.g. a revision of an older format
            raise StoreError(
                f"label {label!r} already holds a revision this run cannot compare with ({err}); this "
                f"run's revision is kept at {folder}: publish it under a new label"
            ) from None
        digest = theirs.manifest["content_hash"]
        if digest != manifest["content_hash"]:
            tolerance = Tolerance()
            report = compare_revisions(Revision.open(folder), theirs, tolerance, limit=3)
            if not report.reproduced:
                raise StoreError(
                    f"label {label!r} already holds other content ({digest[:12]}) that this run does not "
                    f"reproduce ({report.differences_total} differences: {report.first(3)}; "
                    f"{differences_line(manifest, theirs.manifest)}); this run's "
                    f"revision is kept at {folder}: publish it under a new label"
                )
            log(
                f"label {label}: this run reproduces the published revision {digest[:12]} (texts identical; "
                f"{report.judge_values_within_tolerance} judge values within the tolerance: {tolerance.describe()}); "
                "the published revision stays"
            )
            return theirs.manifest, PublishResult(store.uri, label, theirs.revision_id, digest, created=False)
    return manifest, store.publish(folder)


def _staged_by_rules(cfg: GenerateConfig, folder: Path, datasets: dict[str, SourceDataset]) -> dict[str, Any] | None:
    """The manifest of a rule-only run's revision staged by an earlier run of this configuration,
    when its sources are byte for byte today's (written as the revision writes them) and its card's
    configs load, else None.

    Why: the rules make the same records from the same sources, so a rerun takes seconds instead of
    making and validating every record again; an LLM run's answers come from its call cache instead."""
    if not (folder / MANIFEST).is_file():
        return None
    try:
        staged = Revision.open(folder)  # every file's sha256 checked
    except (ContractError, IntegrityError):
        return None
    made_for = {key: staged.manifest.get(key) for key in ("config_hash", "label", "repo_id")}
    if made_for != {"config_hash": cfg.config_hash(), "label": cfg.label, "repo_id": repo_id(cfg)}:
        return None  # the label and store are no part of the configuration's hash, and are the manifest's
    with tempfile.TemporaryDirectory(dir=folder.parent) as tmp:
        for dataset in datasets.values():
            write_source_parquet(dataset, Path(tmp) / "source" / dataset.name)
        today = {entry["path"]: entry["sha256"] for entry in file_entries(Path(tmp))}
    staged_sources = {f["path"]: f["sha256"] for f in staged.manifest["files"] if f["path"].startswith("source/")}
    if today != staged_sources:
        return None
    try:
        check_configs_load(folder)
    except ContractError:
        return None  # its card does not load (a faulty writer staged it): made again, and checked again
    return staged.manifest


def _rule_tables(
    cfg: GenerateConfig, datasets: dict[str, SourceDataset], rules: list[str], *, corpus: bool = False
) -> dict[Variant, pa.Table]:
    """Every text (`corpus`: corpus title and text) of each dataset under each noise rule and seed,
    an item table per (dataset, rule, seed)."""
    if not rules:  # an LLM-only run: no bar for a stage that has nothing to do
        return {}
    jobs = [(seed, name, dataset) for seed in cfg.seeds for name, dataset in datasets.items()]
    what = "noise rules on the corpus" if corpus else cfg.rules_name
    return {
        (name, rule, seed): table
        for seed, name, dataset in bar(jobs, what, len(jobs), "dataset")
        for rule, table in noise.noise_tables(
            seed, name, dataset, rules, corpus=corpus, rules=cfg.noise_rules, sensitivity_rules=cfg.sensitivity_rules
        ).items()
    }


def _corpus_tables(
    cfg: GenerateConfig, datasets: dict[str, SourceDataset], rules: list[str]
) -> dict[Variant, pa.Table]:
    """--corpus-noise: every corpus title and text of each retrieval dataset under each noise rule
    and seed, seeded per text as the queries are; none without the flag."""
    if not cfg.corpus_noise:
        return {}
    retrieval = {name: d for name, d in datasets.items() if d.info.task_type in CORPUS_TASK_TYPES}
    return _rule_tables(cfg, retrieval, rules, corpus=True)


def _write_revision(
    cfg: GenerateConfig,
    folder: Path,
    datasets: dict[str, SourceDataset],
    records: list[ItemRecord],
    by_rules: dict[Variant, pa.Table],
    state: dict[str, Any],
    engines: Engines | None,
    corpus: dict[Variant, pa.Table],
) -> dict[str, Any]:
    """`records`: what the LLM made; `by_rules`: what the noise rules made, a table per items file
    (`engines` None: the rules made every text, no model, no judge); `corpus`: the perturbed corpus
    (--corpus-noise)."""
    if folder.exists():
        shutil.rmtree(folder)  # rebuilt from the cache: stale files must not survive
    manifest_like = manifest_fields(cfg, datasets, records, by_rules, state, engines)
    missing = {name: cfg.dataset_spec(name).languages_not_in_mteb for name in datasets}
    licenses = [cfg.dataset_spec(name).source_license for name in datasets]
    body = card_body(
        manifest_like,
        records,
        sorted({rule for _, rule, _ in by_rules}),
        missing,
        {variant: table.num_rows for variant, table in corpus.items()},
        licenses,
    )
    return write_revision(
        folder,
        datasets.values(),
        records,
        manifest_like,
        body,
        tables=by_rules,
        corpus_tables=corpus,
        licenses=licenses,
        task_ids=[i for name in datasets for i in source_task_ids(name)],
        describe=dataset_info if cfg.card == HUB_CARD else None,
        progress=bar,
    )
