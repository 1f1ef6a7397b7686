"""One scoring run: every dataset's original and transformed variants, every unique text embedded
once, each variant evaluated, drift measured per transformed text.

Data flows one way: revision (or source folder) -> variants (SourceDataset.with_texts under the
--on-error policy) -> union of texts -> EmbeddingTable.fill (once) -> evaluators -> score records.
Retrieval and reranking transform queries only, so their corpus is embedded once for all variants.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from hteb_contract.errors import HtebError, IntegrityError
from hteb_contract.item_columns import ItemColumns
from hteb_contract.revision import Revision
from hteb_contract.sources import DatasetInfo, SourceDataset
from hteb_contract.tasks import TextRef
from hteb_score.encoding.encoder import EmbeddingTable, Request
from hteb_score.evaluators import EVALUATORS, EvaluationContext, TaskScore
from hteb_score.evaluators.protocol import Protocol
from hteb_score.flags import Flag
from hteb_score.scoring.error_policy import ErrorPolicyCount
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.scoring.selection import judge_kept, judge_means
from hteb_score.scoring.statistics import drift_row

ON_ERROR = ("original", "drop", "keep")
QUERY_TABLES = ("queries",)


@dataclass
class Variant:
    """One evaluable version of a dataset: `original` (seed None, no items) or (transformation, seed)
    with the items it scores (those --min-judge keeps), whose drift is measured."""

    dataset: SourceDataset
    transformation: str
    seed: int | None
    items: ItemColumns | None = None


def _policy_lookup(items: ItemColumns, on_error: str, where: str, keep: Sequence[bool]):
    by_ref = {ref: at for at, ref in enumerate(items.refs())}

    def lookup(ref: TextRef) -> str | None:
        at = by_ref.get((ref.table, ref.item_id, ref.field))
        if at is None:
            raise IntegrityError(f"{where}: no item record for {ref.table}/{ref.item_id}/{ref.field}")
        if not keep[at]:  # below --min-judge: the item is not scored
            return None
        if not items.with_errors[at]:
            return items.transformed_text[at]
        return {"original": ref.text, "drop": None, "keep": items.transformed_text[at]}[on_error]

    return lookup


def revision_variants(revision: Revision, name: str, *, transformations: Sequence[str] | None,
                      seeds: Sequence[int] | None, on_error: str,
                      min_judge: float | None = None) -> tuple[list[Variant], list[ErrorPolicyCount]]:
    """The original and each selected (transformation, seed) of one dataset, plus error-policy counts
    (and, with `min_judge`, how many items the judge filter dropped and how many no judge rated)."""
    source = revision.source(name)
    available = revision.variants(name)
    chosen = [(t, s) for t, s in available
              if (transformations is None or t in transformations) and (seeds is None or s in seeds)]
    variants = [Variant(source, "original", None)]
    counts: list[ErrorPolicyCount] = []
    for transformation, seed in chosen:
        items = revision.item_columns(name, transformation, seed)
        means = judge_means(items)
        keep = judge_kept(means, min_judge)
        where = f"{name}/{transformation}_{seed}"
        data = source.with_texts(_policy_lookup(items, on_error, where, keep))
        variants.append(Variant(data, transformation, seed, items if min_judge is None else items.where(keep)))
        filtered = min_judge is not None  # the judge counts are kept with --min-judge only
        counts.append(ErrorPolicyCount(name, transformation, seed, len(items), sum(items.with_errors), on_error,
                                       keep.count(False) if filtered else None,
                                       means.count(None) if filtered else None))
    return variants, counts


def check_selection(revision: Revision, names: Sequence[str], transformations: Sequence[str] | None,
                    seeds: Sequence[int] | None) -> None:
    """Refuse a transformation or seed that the revision does not hold, naming what it has."""
    present = {v for name in names for v in revision.variants(name)}
    if transformations is not None:
        known = sorted({t for t, _ in present})
        unknown = [t for t in transformations if t not in known]
        if unknown:
            raise HtebError(f"revision {revision.label} has no transformation {unknown[0]!r}; it has: {', '.join(known)}")
    if seeds is not None:
        known_seeds = sorted({s for _, s in present})
        unknown_seeds = [s for s in seeds if s not in known_seeds]
        if unknown_seeds:
            raise HtebError(f"revision {revision.label} has no seed {unknown_seeds[0]}; it has: {', '.join(map(str, known_seeds))}")


@dataclass
class ScoreRun:
    """What a run produced, before it becomes a card."""

    scores: list[ScoreRecord]
    results: dict[tuple[str, str, int | None], TaskScore]
    settings: dict[str, dict[str, Any]]  # dataset -> the evaluation settings (the same for all its variants)
    drift: list[dict[str, Any]]
    timings: dict[str, float]
    flags: list[Flag] = field(default_factory=list)  # what the checks and evaluators stated, per variant


def _prompt_of(table: str) -> str | None:
    return "query" if table in QUERY_TABLES else None


def check_variants(groups: Iterable[list[Variant]], protocol: Protocol, *, filtered: bool = False) -> list[Flag]:
    """Every variant through its evaluator's `check`, before any model loads or text is embedded:
    data no model could score is a one-line HtebError; the flags of what is scored with a caveat.
    `filtered` (--min-judge): a transformed variant the filter left unscorable is flagged
    `filtered_too_far` (and not scored) instead, as the filter, not the data, emptied it."""
    flags = []
    for variants in groups:
        evaluator = EVALUATORS.get(variants[0].dataset.info.task_type)
        for variant in variants:
            where = (variant.dataset.info.name, variant.transformation, variant.seed)
            try:
                found = evaluator.check(variant.dataset, protocol)
            except HtebError as err:
                if filtered and variant.seed is not None:
                    flags.append(Flag("filtered_too_far", str(err), *where))
                    continue
                raise type(err)(f"{err} (variant: {_variant_name(variant)})") from None
            flags.extend(f.of(*where) for f in found)
    return flags


def _variant_name(variant: Variant) -> str:
    return variant.transformation if variant.seed is None else f"{variant.transformation} seed {variant.seed}"


class DatasetGroups:
    """The variants of a run, dataset by dataset, read again from the revision each time they are
    iterated: a run holds one dataset's records and texts at a time (beside the embeddings), never
    the whole revision's. A plain list of variant lists serves as well where data is small."""

    def __init__(self, names: Sequence[str], load: Callable[[str], list[Variant]],
                 infos: Sequence[DatasetInfo], variants: int) -> None:
        self.names, self._load, self.infos = list(names), load, list(infos)
        self.variants = variants  # how many variants the datasets hold together (the progress bar's total)

    def __iter__(self) -> Iterator[list[Variant]]:
        return (self._load(name) for name in self.names)

    def __len__(self) -> int:
        return len(self.names)


def score_variants(groups: DatasetGroups | Sequence[list[Variant]], table: EmbeddingTable, *, protocol: Protocol,
                   progress: bool = True, filtered: bool = False, flags: Sequence[Flag] | None = None) -> ScoreRun:
    """Per dataset: embed the texts its variants need that are not embedded yet (each unique text
    once in the run), then evaluate each variant under `protocol` (estimator seed 42; one classifier
    cache for the run, so variants share fitted classifiers). `flags`: what `check_variants` found,
    when the caller checked before the model loaded; otherwise it is checked here. An undefined
    score is recorded as None, with its evaluator's flag."""
    flags = check_variants(groups, protocol, filtered=filtered) if flags is None else list(flags)
    unscorable = {(f.dataset, f.transformation, f.seed) for f in flags if f.code == "filtered_too_far"}
    context = EvaluationContext(protocol)
    scores: list[ScoreRecord] = []
    results: dict[tuple[str, str, int | None], TaskScore] = {}
    settings: dict[str, dict[str, Any]] = {}
    drift: list[dict[str, Any]] = []
    spent = {"read_s": 0.0, "embed_s": 0.0, "evaluate_s": 0.0}
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
                    prompt = _prompt_of(split)  # drift needs the kept output even where it is not scored
                    texts.append((task, original, prompt))
                    texts.append((task, transformed, prompt))
            table.fill(texts, progress=progress)
            lap("embed_s")
            for variant in variants:
                info = variant.dataset.info
                bar.set_postfix_str(f"{info.name}/{variant.transformation}")
                drift.extend(_drift(variant, table))
                bar.update(1)
                if (info.name, variant.transformation, variant.seed) in unscorable:  # flagged, written as null
                    scores.append(ScoreRecord(info.name, info.task_type, "all", variant.transformation, variant.seed,
                                              results[(info.name, "original", None)].main_metric, None))
                    continue
                result = evaluator.evaluate(variant.dataset, table.view(info), context)
                results[(info.name, variant.transformation, variant.seed)] = result
                settings.setdefault(info.name, result.settings)
                records = [("all", result.value)]
                if len(result.subsets) > 1:
                    records += sorted(result.subsets.items())
                flags.extend(f.of(info.name, variant.transformation, variant.seed) for f in result.flags)
                for subset, value in records:
                    scores.append(ScoreRecord(info.name, info.task_type, subset, variant.transformation, variant.seed,
                                              result.main_metric, None if value is None else float(value)))
            del variants, variant, texts  # let this dataset go before the next one is read, not after
            lap("evaluate_s")
    timings = {**spent, "texts_requested": table.requested, "unique_texts": table.unique, "texts_encoded": table.encoded}
    return ScoreRun(scores, results, settings, drift, timings, flags)


def _drift(variant: Variant, table: EmbeddingTable) -> list[dict[str, Any]]:
    """1 - cos(emb(original), emb(transformed)) for every transformed text of a variant."""
    items = variant.items
    if not items:
        return []
    out: list[dict[str, Any]] = []
    embed = table.view(variant.dataset.info)
    by_prompt: dict[str | None, list[int]] = {}
    for at, split in enumerate(items.split):
        by_prompt.setdefault(_prompt_of(split), []).append(at)
    for prompt, rows in by_prompt.items():
        originals, transformed = [items.original_text[at] for at in rows], [items.transformed_text[at] for at in rows]
        a, b = embed(originals, prompt), embed(transformed, prompt)
        norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
        cos = np.einsum("ij,ij->i", a, b) / np.where(norms == 0, 1.0, norms)
        out.extend({"dataset": items.dataset,  # a part keeps its own
                    **drift_row(items.transformation, items.quality[at], original, kept, float(1.0 - value))}
                   for at, original, kept, value in zip(rows, originals, transformed, cos))
    return out
