"""A revision's manifest as the generator writes it, assembled from the run (issue 43: moved out of
run/pipeline.py, which runs the stages, into the room that writes revisions): the store it is made for, the
description of its content that `reproduce` compares (config, sources, transformations, seeds, the
generator's and the judge's identities, the rows it was made by), and the counts of its items, retries,
fallbacks, errors and engine calls. The contract seals and checks it (hteb_contract.revision)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.records import ItemRecord
from hteb_contract.revision import Variant, manifest_source
from hteb_contract.sources import SourceDataset

from hteb_generate import __version__
from hteb_generate.checks.detectors import ERROR_TYPES
from hteb_generate.checks.judge import JUDGE_PROMPTS
from hteb_generate.engine import Engines
from hteb_generate.setup.config import GenerateConfig
from hteb_generate.setup.engine_plan import with_found
from hteb_generate.sources.sources_table import SOURCES
from hteb_generate.transform import noise
from hteb_generate.transform.transformations import PROMPT_SETS


def repo_id(cfg: GenerateConfig) -> str:
    """The store a revision is made for, as its manifest records it."""
    return cfg.store if "://" in cfg.store else f"file://{Path(cfg.store).resolve()}"


def rows(tables: dict[Variant, pa.Table]) -> int:
    return sum(table.num_rows for table in tables.values())


def counters(records: list[ItemRecord], tables: dict[Variant, pa.Table]) -> dict[str, Any]:
    """The manifest's counts of items, retries, fallbacks and errors, over records and tables alike."""
    attempts = sum(len(r.attempts) for r in records) + sum(
        pc.sum(pc.list_value_length(t.column("attempts"))).as_py() or 0 for t in tables.values()
    )
    errors = {e: sum(1 for r in records if e in r.errors) for e in ERROR_TYPES}
    for table in tables.values():  # an error type is in a row's errors at most once (uniqueItems)
        for found in pc.value_counts(pc.list_flatten(table.column("errors"))).to_pylist():
            errors[found["values"]] = errors.get(found["values"], 0) + found["counts"]
    items = len(records) + rows(tables)
    return {
        "items": items,
        "retries": attempts - items,
        "fallbacks": sum(1 for r in records if r.fallback)
        + sum(pc.sum(t.column("fallback")).as_py() or 0 for t in tables.values()),
        "errors": errors,
    }


def generator_block(cfg: GenerateConfig, engines: Engines | None) -> dict[str, Any]:
    """The manifest's generator: the LLM's, or the rules' when no LLM made a text."""
    if engines is None:
        return noise.generator_block(cfg.noise_rules, cfg.sensitivity_rules if cfg.pair_transformations else None)
    generator, prompts = engines.generator, PROMPT_SETS.get(cfg.prompt_set)
    return {
        "model_id": generator.model_id,
        "revision": generator.revision,
        "engine": generator.name,
        "prompt_set": prompts.id,
        "prompt_set_hash": prompts.sha256,
        "sampling": {
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "max_tokens": cfg.max_tokens,
            "max_tokens_ceiling": cfg.max_tokens_ceiling,
            "retry_temperature": cfg.retry_temperature,
            "max_attempts": cfg.max_attempts,
            # the retries' published sampling defaults, where the run has them (absent: as before them)
            **{k: v for k, v in (("retry_top_k", cfg.retry_top_k), ("retry_top_p", cfg.retry_top_p)) if v is not None},
        },
    }


def content_description(
    cfg: GenerateConfig, datasets: dict[str, SourceDataset], engines: Engines | None
) -> dict[str, Any]:
    """The manifest's description of the content (what `reproduction` compares): config, sources,
    transformations, seeds, models and prompt sets. Needs no loaded model: the engines' identities only."""
    sources = []
    for name, dataset in datasets.items():
        entry = cfg.dataset_spec(name)
        origin = (
            f"hf://{entry.hf_path}@{entry.hf_revision}"
            if cfg.source == "hub"
            else f"{'shared/data' if entry.name in SOURCES else 'local'}/{entry.local}"
        )
        info = replace(dataset.info, mteb_task=entry.mteb_task, hf_path=entry.hf_path, hf_revision=entry.hf_revision)
        sources.append(manifest_source(info, origin=origin, sample=cfg.sample))
    judge = None
    if engines is not None and engines.judge is not None:
        judge = {
            "model_id": engines.judge.model_id,
            "revision": engines.judge.revision,
            "engine": engines.judge.name,
            "prompt_set": cfg.judge_prompts,
            "prompt_set_hash": JUDGE_PROMPTS.get(cfg.judge_prompts).sha256,
        }
    return {
        "config": cfg.content_config(),
        "config_hash": cfg.config_hash(),
        "sources": sources,
        "transformations": list(cfg.transformations),
        "seeds": list(cfg.seeds),
        "generator": generator_block(cfg, engines),
        "judge": judge,
        "corpus_perturbed": cfg.corpus_noise,
        **({"specs": cfg.specs()} if cfg.record_specs else {}),
    }


def manifest_fields(
    cfg: GenerateConfig,
    datasets: dict[str, SourceDataset],
    records: list[ItemRecord],
    by_rules: dict[Variant, pa.Table],
    state: dict[str, Any],
    engines: Engines | None,
) -> dict[str, Any]:
    """Every field of the manifest but those sealing adds (files, content hash, change shares): `records` what
    the LLM made, `by_rules` what the Noise rules made, `state` the run's start (created, runtime)."""
    fields = {
        "repo_id": repo_id(cfg),
        "label": cfg.label,
        "created": state["created"],
        "hteb_generate_version": __version__,
        "runtime": with_found(state["runtime"], state.get("found", {})),
        **content_description(cfg, datasets, engines),
    }
    counted = counters(records, by_rules)
    fields["counters"] = {
        "items": counted["items"],
        "llm_calls": sum(e.calls for e in engines.distinct()) if engines else 0,
        "cache_hits": sum(e.hits for e in engines.distinct()) if engines else 0,
        **{key: counted[key] for key in ("retries", "fallbacks", "errors")},
    }
    return fields
