"""An HTEB revision as an mteb `Benchmark`: its variants as tasks (`tasks.tasks_from_revision`), HTEB's
citation, and HTEB's aggregation in place of mteb's means, so `mteb.evaluate(model, benchmark)`,
`BenchmarkResults.get_aggregated_scores()` and `get_benchmark_result()` give the card's figures.

    benchmark = get_benchmark("sample-1339")
    result = mteb.evaluate(model, benchmark, cache=None)
    mteb.BenchmarkResults(model_results=[result], benchmark=benchmark).get_benchmark_result()

Why a subclass: mteb's own aggregations (`BenchmarkAggregation`, `CustomGrouping`) are flat means over
tasks, and HTEB's are nested (seeds, then transformations, then axes, then the HTEB total of the paper's
axes, Noise beside it; `hteb_score.scoring.aggregate`), so HTEB overrides `get_score` and
`_create_summary_table` as mteb's RTEB, HUME, MIEB and ViDoRe benchmarks override theirs (mteb's own
per-task-type means look each task up in mteb's registry, which knows no HTEB task). Its numbers are
on mteb's 0-1 scale (the leaderboard shows them x 100, the card's points). mteb 2.26 has no public way
to add a task or a benchmark to its registries (`mteb.get_task`, `mteb.get_benchmark` and `mteb run`
read only its own modules), so `get_benchmark` here is the route (docs/mteb-results.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl
from mteb import Benchmark
from mteb.benchmarks._create_table import SummaryTable  # the type every mteb summary builder returns
from mteb.results import BenchmarkResults, ModelResult, TaskResult

from hteb_contract.card import HTEB_CITATION
from hteb_contract.errors import HtebError
from hteb_contract.taxonomy import BEFORE_SPECS, Taxonomy, of_manifest
from hteb_score import DEFAULT_STORE, SAMPLE_REVISION
from hteb_score.mteb_interop.layout import short_revision
from hteb_score.mteb_interop.tasks import HtebVariant, tasks_of, variant_of
from hteb_score.scoring.aggregate import MainScores, axis_columns, paired_level

REFERENCE = "https://arxiv.org/abs/2605.28190"
ORIGINAL, TOTAL = "Original", "HTEB"
RANK = "Rank (HTEB)"


def columns(taxonomy: Taxonomy) -> tuple[str, ...]:
    """The summary's columns, in the card's order: Original, each axis of the total, HTEB, then the axes beside
    it (Noise), labelled as the revision's taxonomy labels them.

    >>> columns(BEFORE_SPECS)
    ('Original', 'Lexical/Stylistic', 'Length', 'Language', 'HTEB', 'Noise')
    """
    labels = taxonomy.labels
    beside = tuple(labels[a] for a in taxonomy.members if not taxonomy.in_total(a))
    return (ORIGINAL, *(labels[a] for a in taxonomy.members if taxonomy.in_total(a)), TOTAL, *beside)


def ranked_by(taxonomy: Taxonomy) -> tuple[str, ...]:
    """The columns that rank models, the first defined deciding, higher first: HTEB, the axes beside it, Original."""
    shown = columns(taxonomy)
    return (TOTAL, *shown[shown.index(TOTAL) + 1 :], ORIGINAL)


def task_score(result: TaskResult) -> float | None:
    """mteb's `TaskResult.get_score()` (the mean main score over splits and subsets), None where any
    is undefined (null), as the card's score of the variant is."""
    values = [entry["main_score"] for entries in result.scores.values() for entry in entries]
    return None if any(v is None for v in values) else result.get_score()


def _rank_key(scores: Mapping[str, float | None], taxonomy: Taxonomy) -> tuple[tuple[bool, float], ...]:
    return tuple((scores[c] is None, -(scores[c] or 0.0)) for c in ranked_by(taxonomy))


def figures(scores: Mapping[HtebVariant, float | None], taxonomy: Taxonomy = BEFORE_SPECS) -> dict[str, float | None]:
    """`columns(taxonomy)` from one model's task scores, by HTEB's one aggregation rule; an undefined score
    (None, NaN) is left out as the card leaves it out, an axis with no score is None.

    >>> v = lambda d, t, s=1339: HtebVariant(d, t, None if t == "original" else s, "r", d, "")
    >>> figures({v("A", "original"): 0.8, v("A", "paraphrasing"): 0.5, v("A", "paraphrasing", 1337): 0.7,
    ...          v("A", "translation"): 0.4, v("A", "keyboard_typos"): 0.3, v("A", "expansion"): float("nan")})
    {'Original': 0.8, 'Lexical/Stylistic': 0.6, 'Length': None, 'Language': 0.4, 'HTEB': 0.5, 'Noise': 0.3}
    """
    original: dict[str, float] = {}
    runs: dict[str, dict[str, dict[int, float]]] = {}
    for variant, value in scores.items():
        if value is None or not math.isfinite(value):
            continue
        if variant.seed is None:
            original[variant.dataset] = float(value)
        else:
            runs.setdefault(variant.dataset, {}).setdefault(variant.transformation, {})[variant.seed] = float(value)
    level = paired_level(original, axis_columns(MainScores(original, runs, {}).seed_means(), taxonomy), taxonomy)
    axes = {taxonomy.labels[a]: p.score for a, p in level.axes.items()}
    return {column: axes.get(column) for column in columns(taxonomy)} | {ORIGINAL: level.original, TOTAL: level.hteb}


@dataclass(repr=False)  # mteb's short repr, not every task's
class HtebBenchmark(Benchmark):
    """An mteb Benchmark of HTEB variants whose aggregation is HTEB's (`figures`) by the revision's taxonomy."""

    aggregations: Sequence[Any] = ()  # none of mteb's: HTEB aggregates itself
    taxonomy: Taxonomy = BEFORE_SPECS  # the revision's (its manifest's specs); this release's for one made before them
    show_zero_shot: bool = False  # mteb counts training overlap by registered task name; HTEB's are not registered
    variants: dict[str, HtebVariant] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.variants = {}
        for task in self.tasks:
            variant = variant_of(task)
            if variant is None:
                raise HtebError(f"not an HTEB task (from tasks_from_revision): {task.metadata.name}")
            if task.metadata.name in self.variants:
                other = self.variants[task.metadata.name].dataset
                raise HtebError(
                    f"two datasets share the mteb task {task.metadata.name!r} ({other}, "
                    f"{variant.dataset}): benchmark them apart"
                )
            self.variants[task.metadata.name] = variant

    def _get_model_score(self, model_result: ModelResult) -> dict[str, float | None]:
        """`figures` of one model; a task without a result is a ValueError, as in mteb's Benchmark."""
        found = model_result.select_tasks(self.tasks).task_results
        if len(found) < len(self.tasks):
            raise ValueError("Some scores of benchmark are missing. Please, run model on full benchmark tasks")
        return figures({self.variants[r.task_name]: task_score(r) for r in found}, self.taxonomy)

    def get_score(self, results: BenchmarkResults, *, raise_error: bool = False) -> dict[str, dict[str, float | None]]:
        """`columns` and a "Rank" per model, ranked as the summary table ranks (mteb's Borda rank needs
        every task's score defined; an HTEB variant's may be undefined, and is left out as the card does)."""
        scores = {}
        for model_result in results.join_revisions():
            try:
                scores[model_result.model_name] = self._get_model_score(model_result)
            except ValueError:
                if raise_error:
                    raise
                scores[model_result.model_name] = dict.fromkeys(columns(self.taxonomy))
        for rank, model in enumerate(sorted(scores, key=lambda m: _rank_key(scores[m], self.taxonomy)), start=1):
            scores[model]["Rank"] = rank
        return scores

    def _create_summary_table(self, pl_df: pl.DataFrame) -> SummaryTable:
        """One row per model: its rank (`ranked_by`) and `columns`; a task's score is `task_score`'s."""
        if pl_df.is_empty():
            return SummaryTable(df=pl.DataFrame({"No results": ["No results"]}), is_empty=True)
        score = pl.when(pl.col("score").is_null().any()).then(None).otherwise(pl.col("score").mean())
        per_task = (
            pl_df.filter(pl.col("task_name").is_in(list(self.variants)))
            .group_by("model_name", "task_name")
            .agg(score.alias("score"))
        )
        models: dict[str, dict[HtebVariant, float | None]] = {}
        for model, task, score in per_task.iter_rows():
            models.setdefault(model, {})[self.variants[task]] = score
        complete = {m: s for m, s in models.items() if len(s) == len(self.variants)}
        if not complete:
            return SummaryTable(df=pl.DataFrame({"No results": ["No results"]}), is_empty=True)
        shown = columns(self.taxonomy)
        table = pl.DataFrame(
            [{"Model": m, **figures(s, self.taxonomy)} for m, s in complete.items()],
            schema={"Model": pl.Utf8, **{c: pl.Float64 for c in shown}},
        )
        table = table.sort(list(ranked_by(self.taxonomy)), descending=True, nulls_last=True)
        table = table.with_columns((pl.int_range(0, pl.len()) + 1).cast(pl.Int64).alias(RANK))
        return SummaryTable(
            df=table.select(RANK, "Model", *shown), rank_col=RANK, primary_metric_col=TOTAL, task_type_mean_col=None
        )


def get_benchmark(revision: str = SAMPLE_REVISION, *, store: str = DEFAULT_STORE, **selection: Any) -> HtebBenchmark:
    """The mteb Benchmark of a revision (a label or a content hash) of `store`, aggregated by the axes it was made
    by; `selection`: tasks_of's (datasets, transformations, seeds, on_error, min_judge)."""
    from hteb_contract.stores import open_store
    from hteb_score.scoring.selection import check_selection_arguments

    check_selection_arguments(**{k: v for k, v in selection.items() if k in ("datasets", "on_error", "min_judge")})
    opened = open_store(store).fetch(revision, datasets=selection.get("datasets"))
    taxonomy = of_manifest(opened.manifest)
    tasks = tasks_of(opened, **selection)
    variants = [v for v in map(variant_of, tasks) if v is not None]
    variant = variants[0]
    found = [v for v in variants if v.seed is not None]
    transformations = sorted({v.transformation for v in found}, key=taxonomy.order)
    seeds = sorted({v.seed for v in found if v.seed is not None})
    short = f"HTEB({short_revision(variant.revision)}{variant.selection})"
    name = f"HTEB({revision}{variant.selection})"
    return HtebBenchmark(
        name=name,
        aliases=(short,) if short != name else (),
        tasks=tasks,
        display_name=f"HTEB {revision}",
        description=(
            f"The Harder Text Embedding Benchmark, revision {variant.revision}: each dataset's original "
            f"and its {', '.join(transformations)} variants (seeds {', '.join(map(str, seeds))}) as mteb "
            "tasks, "
            "scored as the Original, one score per robustness axis, the HTEB total of the paper's axes, "
            "and Noise beside it"
        ),
        reference=REFERENCE,
        citation=HTEB_CITATION,
        taxonomy=taxonomy,
    )
