"""One scoring run over the variants `scoring.data` read: every unique text embedded once, each
variant evaluated, drift measured per transformed text.

Data flows one way: revision (or source folder) -> variants (SourceDataset.with_texts under the
--on-error policy) -> union of texts -> EmbeddingTable.fill (once) -> evaluators -> score records.
Retrieval and reranking transform queries only, so their corpus is embedded once for all variants.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tqdm.auto import tqdm

from hteb_score.encoding.encoder import EmbeddingTable, Request
from hteb_score.evaluators import EVALUATORS, EvaluationContext, TaskScore
from hteb_score.evaluators.protocol import Protocol
from hteb_score.flags import Flag
from hteb_score.scoring.collapse import collapse_flag
from hteb_score.scoring.coverage import Coverage, adjusted_value, variant_coverage
from hteb_score.scoring.data import DatasetGroups, Variant, check_variants
from hteb_score.scoring.hard_twin_source import HardTwins
from hteb_score.scoring.hard_twins import hard_requests, hard_rows
from hteb_score.scoring.item_measures import Baseline, baseline, measure_variant, prompt_of, text_languages
from hteb_score.scoring.sensitivity import pair_rows
from hteb_score.scoring.score_record import ScoreRecord


@dataclass
class ScoreRun:
    """What a run produced, before it becomes a card."""

    scores: list[ScoreRecord]
    results: dict[tuple[str, str, int | None], TaskScore]
    settings: dict[str, dict[str, Any]]  # dataset -> the evaluation settings (the same for all its variants)
    drift: list[dict[str, Any]]  # one row per transformed text, with its per-item measures (scoring/item_measures.py)
    timings: dict[str, float]
    flags: list[Flag] = field(default_factory=list)  # what the checks and evaluators stated, per variant
    coverage: list[Coverage] = field(default_factory=list)  # per transformed variant: the subsets its figure rests on
    explorer: list[dict[str, Any]] = field(default_factory=list)  # the items the explorer shows, with their texts
    #: one row per item both rules of a minimal pair edited (scoring/sensitivity.py)
    sensitivity: list[dict[str, Any]] = field(default_factory=list)
    #: with --hard-twins-from: one row per item and hard twin (scoring/hard_twins.py)
    hard: list[dict[str, Any]] = field(default_factory=list)


def score_variants(
    groups: DatasetGroups | Sequence[list[Variant]],
    table: EmbeddingTable,
    *,
    protocol: Protocol,
    progress: bool = True,
    filtered: bool = False,
    flags: Sequence[Flag] | None = None,
    hard: HardTwins | None = None,
) -> ScoreRun:
    """Per dataset: embed the texts its variants need that are not embedded yet (each unique text
    once in the run), then evaluate each variant under `protocol` (estimator seed 42; one classifier
    cache for the run, so variants share fitted classifiers). `flags`: what `check_variants` found,
    when the caller checked before the model loaded; otherwise it is checked here. An undefined
    score is recorded as None, with its evaluator's flag. `hard`: --hard-twins-from's revision, whose twins of
    the minimal pairs' items are embedded with each dataset's texts and asked as the rule twins are."""
    flags = check_variants(groups, protocol, filtered=filtered) if flags is None else list(flags)
    unscorable = {(f.dataset, f.transformation, f.seed) for f in flags if f.code == "filtered_too_far"}
    context = EvaluationContext(protocol)
    scores: list[ScoreRecord] = []
    results: dict[tuple[str, str, int | None], TaskScore] = {}
    settings: dict[str, dict[str, Any]] = {}
    drift: list[dict[str, Any]] = []
    coverage: list[Coverage] = []
    explorer: list[dict[str, Any]] = []
    sensitivity: list[dict[str, Any]] = []
    hard_found: list[dict[str, Any]] = []
    spent = {"read_s": 0.0, "embed_s": 0.0, "evaluate_s": 0.0, "item_measures_s": 0.0}
    mark = time.perf_counter()

    def lap(phase: str) -> None:  # the time since the last lap goes to `phase`
        nonlocal mark
        now = time.perf_counter()
        spent[phase], mark = spent[phase] + now - mark, now

    total = groups.variants if isinstance(groups, DatasetGroups) else sum(len(g) for g in groups)
    with tqdm(desc="evaluating", total=total, unit="variant", disable=not progress) as bar:
        for variants in groups:
            lap("read_s")
            evaluator = EVALUATORS.get(variants[0].dataset.info.task_type)
            texts: list[Request] = []
            for variant in variants:
                task = variant.dataset.info
                if (task.name, variant.transformation, variant.seed) not in unscorable:
                    texts.extend((task, text, prompt) for text, prompt in evaluator.texts(variant.dataset))
                items = variant.items
                if items is None:
                    continue
                for split, original, transformed in zip(items.split, items.original_text, items.transformed_text):
                    prompt = prompt_of(split)  # drift needs the kept output even where it is not scored
                    texts.append((task, original, prompt))
                    texts.append((task, transformed, prompt))
            twins = None if hard is None else hard.twins(variants[0].dataset.info.name)
            if twins:
                texts.extend(hard_requests(variants, twins))
            table.fill(texts, progress=progress)
            lap("embed_s")
            collapsed = collapse_flag(texts, table)  # its per-item measures would read as perfect robustness
            if collapsed is not None:
                flags.append(collapsed.of(variants[0].dataset.info.name, None, None))
            unchanged = next((v.dataset for v in variants if v.transformation == "original"), None)
            dataset_context = dataclasses.replace(context, original=unchanged)
            documents: dict[str, Any] = {}  # a retrieval corpus's embeddings, for every variant's top-10
            base = None if collapsed is not None else baseline(variants, unchanged, table)  # the drift's own scale
            for variant in variants:
                info = variant.dataset.info
                bar.set_postfix_str(f"{info.name}/{variant.transformation}")
                lap("evaluate_s")
                found = (
                    None
                    if variant.seed is None
                    else variant_coverage(
                        info.name,
                        variant.transformation,
                        variant.seed,
                        variant.shares,
                        protocol.name,
                        axis=variant.axis,
                        recorded=variant.recorded,
                    )
                )
                if base is not None:
                    measured = measure_variant(
                        variant,
                        unchanged,
                        table,
                        evaluator,
                        documents,
                        base=base,
                        left_out=() if found is None else {s for s, _, _ in found.left_out},
                    )
                    drift.extend(measured.rows)
                    explorer.extend(measured.explorer)
                lap("item_measures_s")
                bar.update(1)
                if (info.name, variant.transformation, variant.seed) in unscorable:  # flagged, written as null
                    scores.append(
                        ScoreRecord(
                            info.name,
                            info.task_type,
                            "all",
                            variant.transformation,
                            variant.seed,
                            results[(info.name, "original", None)].main_metric,
                            None,
                        )
                    )
                    continue
                result = evaluator.evaluate(variant.dataset, table.view(info), dataset_context)
                if found is not None:
                    result = _covered(found, result, results[(info.name, "original", None)], coverage)
                results[(info.name, variant.transformation, variant.seed)] = result
                settings.setdefault(info.name, result.settings)
                records = [("all", result.value)]
                if len(result.subsets) > 1:
                    records += sorted(result.subsets.items())
                flags.extend(f.of(info.name, variant.transformation, variant.seed) for f in result.flags)
                for subset, value in records:
                    scores.append(
                        ScoreRecord(
                            info.name,
                            info.task_type,
                            subset,
                            variant.transformation,
                            variant.seed,
                            result.main_metric,
                            None if value is None else float(value),
                        )
                    )
            if any(v.pair is not None for v in variants):  # a collapsed model too: it hears nothing, 0.5
                lap("evaluate_s")
                known = base or Baseline({} if unchanged is None else text_languages(unchanged), {})
                sensitivity.extend(pair_rows(variants, table, known, documents))
                if twins:
                    hard_found.extend(hard_rows(variants, table, known, twins))
                lap("item_measures_s")
            # let this dataset go before the next one is read, not after
            del variants, variant, texts, unchanged, documents, dataset_context, base, twins
            lap("evaluate_s")
    timings = {
        **spent,
        "texts_requested": table.requested,
        "unique_texts": table.unique,
        "texts_encoded": table.encoded,
    }
    flags.extend(f for c in coverage for f in c.flags())
    return ScoreRun(scores, results, settings, drift, timings, flags, coverage, explorer, sensitivity, hard_found)


def _covered(found: Coverage, result: TaskScore, original: TaskScore, coverage: list[Coverage]) -> TaskScore:
    """The variant's result with its figure over the subsets its coverage `found` keeps (`scoring.coverage`);
    `found` joins `coverage`. A variant that leaves nothing out keeps its evaluator's value as it is."""
    coverage.append(found)
    if not found.left_out:
        return result
    return dataclasses.replace(result, value=adjusted_value(result.subsets, original.subsets, original.value, found))
