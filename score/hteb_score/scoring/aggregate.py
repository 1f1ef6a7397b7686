"""Aggregation as the paper does it (docs/scoring.md; App. I Table 13, App. J),
written once: the card's `aggregates` and `statistics` blocks and `hteb-score compare` all call it.

Scores are per (dataset, transformation, seed). Seeds are averaged first (runs are not
independent observations). An axis score is the mean over the axis's transformations that were
scored; the HTEB score is the unweighted mean of the paper's axis scores (Noise is an axis
beside it, never in it, so the total stays comparable with the paper). Model-level Original and axis
scores are means over datasets, and the model's HTEB total is the HTEB score of its model-level
axis scores. In the `aggregates` block everything is in points (score x 100) and deltas are
HTEB - Original.

Every function takes the `Taxonomy` the scores were made by (the revision's own, `hteb_contract.taxonomy`):
an axis, its members and its place in the total are never read from the installed table behind a card's back.

>>> axis_scores({"paraphrasing": 60.0, "style_change": 50.0, "translation": 20.0}, INSTALLED)
{'lexical': 55.0, 'language': 20.0}
>>> hteb_total({"lexical": 55.0, "language": 20.0, "noise": 90.0}, INSTALLED)
37.5
>>> hteb_total({"noise": 90.0}, INSTALLED) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hteb_contract.errors import ContractError, unknown_name
from hteb_contract.taxonomy import INSTALLED, Taxonomy  # noqa: F401 (INSTALLED: the doctests')
from hteb_score.flags import Flag
from hteb_score.scoring.score_record import POINTS, ScoreRecord

#: Scores by column (a transformation, an axis) and dataset: `{column: {dataset: score}}`.
Columns = Mapping[str, Mapping[str, float]]


def check_transformation(name: str, taxonomy: Taxonomy, *, where: str) -> None:
    """A transformation name read from a file must be one of the taxonomy's: else a ContractError."""
    if name not in taxonomy.axis_by_transformation:
        raise ContractError(f"{where}: {unknown_name('transformation', name, taxonomy.transformations)}")


@dataclass(frozen=True)
class MainScores:
    """One model's main scores (subset `all`): `original[dataset]`, `runs[dataset][transformation][seed]`
    and each dataset's main `metric`; `skipped`: the (dataset, transformation, seed) whose score is
    undefined (null), left out of everything aggregated."""

    original: dict[str, float]
    runs: dict[str, dict[str, dict[int, float]]]
    metric: dict[str, str]
    skipped: list[tuple[str, str, int | None]] = field(default_factory=list)

    def seed_means(self) -> dict[str, dict[str, float]]:
        """`{transformation: {dataset: mean over seeds}}`."""
        means: dict[str, dict[str, float]] = {}
        for dataset, by_transformation in self.runs.items():
            for transformation, by_seed in by_transformation.items():
                means.setdefault(transformation, {})[dataset] = float(np.mean(list(by_seed.values())))
        return means


def main_scores(scores: Iterable[ScoreRecord], taxonomy: Taxonomy, *, scale: float = 1.0) -> MainScores:
    """The main scores (subset `all`) of score records, each value times `scale`; an undefined
    value (None or not finite) is skipped and listed. A second Original score for a dataset, a seed
    scored twice or an unknown transformation is a ContractError."""
    original: dict[str, float] = {}
    runs: dict[str, dict[str, dict[int, float]]] = {}
    metric: dict[str, str] = {}
    skipped: list[tuple[str, str, int | None]] = []
    for record in scores:
        if record.subset != "all":
            continue
        dataset, transformation = record.dataset, record.transformation
        if record.value is None or not math.isfinite(record.value):
            skipped.append(record.variant)
            continue
        value = float(record.value) * scale
        metric[dataset] = record.metric
        if transformation == "original":
            if dataset in original:
                raise ContractError(f"scores: two original main scores for dataset {dataset!r}")
            original[dataset] = value
            continue
        check_transformation(transformation, taxonomy, where="scores")
        if record.seed is None:
            raise ContractError(f"scores: a main score for dataset {dataset!r}, {transformation} without a seed")
        by_seed = runs.setdefault(dataset, {}).setdefault(transformation, {})
        if record.seed in by_seed:
            raise ContractError(f"scores: two main scores for dataset {dataset!r}, {transformation} seed {record.seed}")
        by_seed[record.seed] = value
    return MainScores(original, runs, metric, skipped)


def aggregate_flags(scores: Iterable[ScoreRecord], taxonomy: Taxonomy) -> list[Flag]:
    """`skipped_in_aggregates` for each undefined main score, and for the defined scores of a dataset
    whose Original is undefined (there is nothing to compare them with)."""
    main = main_scores(scores, taxonomy)
    flags = [
        Flag(
            "skipped_in_aggregates",
            "main score undefined (null): left out of the aggregates and statistics",
            dataset,
            transformation,
            seed,
        )
        for dataset, transformation, seed in main.skipped
    ]
    for dataset in sorted(set(main.runs) - set(main.original)):
        n = sum(len(by_seed) for by_seed in main.runs[dataset].values())
        flags.append(
            Flag(
                "skipped_in_aggregates",
                f"Original score undefined: the dataset's {n} transformed "
                "score(s) are left out of the aggregates and statistics",
                dataset,
            )
        )
    return flags


def axis_scores(transformations: Mapping[str, float], taxonomy: Taxonomy) -> dict[str, float]:
    """Per axis, the mean of its transformations' scores that are given; axes with none, and an axis of minimal
    pairs (`Taxonomy.scored_members`), are left out."""
    axes = {}
    for axis, members in taxonomy.scored_members.items():
        present = [transformations[t] for t in members if t in transformations]
        if present:
            axes[axis] = float(np.mean(present))
    return axes


def hteb_total(axes: Mapping[str, float], taxonomy: Taxonomy) -> float | None:
    """HTEB: the unweighted mean of the paper's axis scores given; None without any (Noise alone)."""
    present = [axes[a] for a in taxonomy.paper_axes if a in axes]
    return float(np.mean(present)) if present else None


def by_dataset(columns: Columns) -> dict[str, dict[str, float]]:
    """`{column: {dataset: score}}` turned into `{dataset: {column: score}}`."""
    rows: dict[str, dict[str, float]] = {}
    for name, column in columns.items():
        for dataset, value in column.items():
            rows.setdefault(dataset, {})[name] = value
    return rows


def axis_columns(transformations: Columns, taxonomy: Taxonomy) -> dict[str, dict[str, float]]:
    """`{axis: {dataset: axis score}}` from `{transformation: {dataset: score}}`, by `axis_scores`
    on each dataset; axes without a scored transformation are left out."""
    per_dataset = {dataset: axis_scores(row, taxonomy) for dataset, row in by_dataset(transformations).items()}
    columns = {axis: {d: axes[axis] for d, axes in per_dataset.items() if axis in axes} for axis in taxonomy.members}
    return {axis: column for axis, column in columns.items() if column}


@dataclass(frozen=True)
class Paired:
    """A score and the Original it is compared with, both means over the same `datasets`."""

    score: float
    original: float
    datasets: int

    @property
    def delta(self) -> float:
        return self.score - self.original

    def to_json(self) -> dict[str, float | int]:
        return {"score": self.score, "original": self.original, "delta": self.delta, "datasets": self.datasets}


@dataclass(frozen=True)
class PairedLevel:
    """A model's headline, like with like: each axis against the Original of the datasets it was
    scored on, and the HTEB total against the Original of the datasets it rests on (those with a
    paper-axis score). `original_all` is the Original over all `datasets`; `original` is the one
    paired with HTEB (over `hteb_datasets`), or `original_all` where there is no HTEB total.

    >>> level = paired_level({"a": 80.0, "b": 60.0}, {"lexical": {"a": 70.0}}, INSTALLED)
    >>> level.original_all, level.original, level.hteb, level.delta, level.hteb_datasets
    (70.0, 80.0, 70.0, -10.0, 1)
    """

    datasets: int
    original_all: float | None
    axes: dict[str, Paired]
    hteb: float | None
    original: float | None
    hteb_datasets: int

    @property
    def delta(self) -> float | None:
        return None if self.hteb is None or self.original is None else self.hteb - self.original


def paired_level(original: Mapping[str, float], axes: Columns, taxonomy: Taxonomy) -> PairedLevel:
    """A model's scores over datasets, each figure paired with the Original of exactly its datasets (a dataset
    without an Original score cannot be paired and is left out)."""
    paired = {}
    for axis in taxonomy.members:
        on = [d for d in axes.get(axis, {}) if d in original]
        if on:
            paired[axis] = Paired(
                float(np.mean([axes[axis][d] for d in on])), float(np.mean([original[d] for d in on])), len(on)
            )
    hteb = hteb_total({a: p.score for a, p in paired.items()}, taxonomy)
    under = sorted({d for a in taxonomy.paper_axes for d in axes.get(a, {}) if d in original})
    original_all = _mean(list(original.values()))
    paired_original = original_all if hteb is None else _mean([original[d] for d in under])
    return PairedLevel(
        len(original), original_all, paired, hteb, paired_original, len(under) if hteb is not None else 0
    )


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


def _sd(values: Sequence[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def _dataset_row(
    dataset: str, metric: str, original: float, runs: Mapping[str, Mapping[int, float]], taxonomy: Taxonomy
) -> dict[str, Any]:
    transformations: dict[str, dict[str, Any]] = {}
    for name in sorted(runs, key=taxonomy.order):
        values = list(runs[name].values())
        mean = float(np.mean(values))
        transformations[name] = {"mean": mean, "sd": _sd(values), "n_seeds": len(values), "delta": mean - original}
    axes = axis_scores({t: v["mean"] for t, v in transformations.items()}, taxonomy)
    hteb = hteb_total(axes, taxonomy)
    seeds = sorted({s for by_seed in runs.values() for s in by_seed})
    per_seed = [
        hteb_total(axis_scores({t: v[s] for t, v in runs.items() if s in v}, taxonomy), taxonomy) for s in seeds
    ]
    return {
        "dataset": dataset,
        "metric": metric,
        "original": original,
        "transformations": transformations,
        "axes": axes,
        "hteb": hteb,
        "hteb_sd": _sd([h for h in per_seed if h is not None]),
        "delta": None if hteb is None else hteb - original,
    }


def aggregate(scores: Sequence[ScoreRecord], taxonomy: Taxonomy) -> dict[str, Any]:
    """The card's `aggregates` block from its score records (subset `all` only)."""
    main = main_scores(scores, taxonomy, scale=POINTS)
    per_dataset = [
        _dataset_row(dataset, main.metric[dataset], original, main.runs.get(dataset, {}), taxonomy)
        for dataset, original in main.original.items()
    ]
    per_transformation = {}
    for name in taxonomy.transformations:
        rows = [row["transformations"][name] for row in per_dataset if name in row["transformations"]]
        if rows:
            values = [r["mean"] for r in rows]
            per_transformation[name] = {
                "mean": float(np.mean(values)),
                "sd": _sd(values),
                "delta": float(np.mean([r["delta"] for r in rows])),
                "datasets": len(rows),
            }
    level = paired_level(
        {row["dataset"]: row["original"] for row in per_dataset},
        {a: {row["dataset"]: row["axes"][a] for row in per_dataset if a in row["axes"]} for a in taxonomy.members},
        taxonomy,
    )
    return {
        "unit": "points (score x 100)",
        "per_dataset": per_dataset,
        "per_transformation": per_transformation,
        "per_axis": {a: p.score for a, p in level.axes.items()},
        "axis_pairs": {a: p.to_json() for a, p in level.axes.items()},
        "datasets": level.datasets,
        "original_all": level.original_all,
        "original": level.original,
        "hteb_total": level.hteb,
        "hteb_datasets": level.hteb_datasets,
        "delta": level.delta,
    }
