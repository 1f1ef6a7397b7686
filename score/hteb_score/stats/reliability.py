"""Split-half reliability of a per-model profile (paper Table 3).

Datasets are split into two halves *within each task type* (so each half keeps the task mix),
each model's score is averaged over the datasets of each half, and Spearman's rho between the two
half-score vectors measures whether the model ordering is a property of the models rather than of
the datasets chosen. The median rho over `n_splits` seeded random splits is reported.

Beside it, what sets its sign: with half means a and b, Pearson's identity cov(a, b) = var((a + b) / 2) -
var((a - b) / 2) says the halves agree where the models differ more in their level (the SD over models of
(a + b) / 2) than in their gap between the halves (the SD of (a - b) / 2); Spearman's rho is Pearson's on
ranks and follows it but for ties and outliers. Models whose levels lie close get a rho below 0 however
reliably each dataset ranks them: what one half gives a model, the other takes away.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hteb_score.stats.ranking import spearman_rho


@dataclass(frozen=True)
class SplitHalfResult:
    """Median rho over the splits where rho is defined; `n_defined` of `n_splits` were. `level_sd` and `gap_sd`:
    over the same splits, the median SD over models of their two half means' mean and of half their difference
    (the scores' unit), the spreads whose balance sets rho's sign."""

    median_rho: float | None
    n_splits: int
    n_defined: int
    n_models: int
    n_datasets: int
    level_sd: float | None = None
    gap_sd: float | None = None


def stratified_halves(task_types: Mapping[str, str], rng: np.random.Generator) -> tuple[list[str], list[str]]:
    """One random split: within each task type the datasets are shuffled and dealt alternately to
    the two halves, starting with a random half so odd counts do not always favour the same one."""
    first: list[str] = []
    second: list[str] = []
    by_type: dict[str, list[str]] = {}
    for dataset in sorted(task_types):
        by_type.setdefault(task_types[dataset], []).append(dataset)
    for task_type in sorted(by_type):
        datasets = list(by_type[task_type])
        rng.shuffle(datasets)
        start = int(rng.integers(2))
        for position, dataset in enumerate(datasets):
            (first if (position + start) % 2 == 0 else second).append(dataset)
    return first, second


def draw_splits(task_types: Mapping[str, str], n_splits: int, seed: int) -> list[tuple[list[str], list[str]]]:
    """The `n_splits` seeded stratified splits a reliability is the median over (its null draws reuse them)."""
    rng = np.random.default_rng(seed)
    return [stratified_halves(task_types, rng) for _ in range(n_splits)]


def split_half_reliability(
    scores: Mapping[str, Mapping[str, float]],
    task_types: Mapping[str, str],
    *,
    n_splits: int = 1000,
    seed: int = 0,
) -> SplitHalfResult:
    """`scores[model][dataset]` is the model's score (e.g. one axis) on a dataset; datasets a model
    lacks are left out of its half mean."""
    models = sorted(scores)
    datasets = sorted(d for d in task_types if any(d in scores[m] for m in models))
    types = {d: task_types[d] for d in datasets}
    found: list[tuple[float, float, float]] = []
    if len(models) >= 3 and len(datasets) >= 2:
        # Few datasets give few distinct splits (six give at most a few dozen): each is computed once, on the
        # very same halves in the same order, so the rhos are those of computing every draw anew.
        split_of: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[float, float, float] | None] = {}
        for first, second in draw_splits(types, n_splits, seed):
            key = (tuple(first), tuple(second))
            if key not in split_of:
                split_of[key] = _split(scores, models, first, second)
            if (split := split_of[key]) is not None:
                found.append(split)
    if not found:
        return SplitHalfResult(None, n_splits, 0, len(models), len(datasets))
    rho, level, gap = (float(v) for v in np.median(np.array(found), axis=0))
    return SplitHalfResult(rho, n_splits, len(found), len(models), len(datasets), level, gap)


def _split(
    scores: Mapping[str, Mapping[str, float]], models: list[str], first: list[str], second: list[str]
) -> tuple[float, float, float] | None:
    """Spearman's rho between the models' two half means, and the SDs over models of their mean and of half their
    difference; None when a model lacks a half or rho is undefined."""
    a = [v for m in models if (v := _half_mean(scores[m], first)) is not None]
    b = [v for m in models if (v := _half_mean(scores[m], second)) is not None]
    if len(a) < len(models) or len(b) < len(models):
        return None
    rho = spearman_rho(a, b)
    if rho is None:
        return None
    halves = np.array([a, b])
    return rho, float(np.std(halves.mean(axis=0))), float(np.std((halves[0] - halves[1]) / 2))


def _half_mean(model_scores: Mapping[str, float], half: Sequence[str]) -> float | None:
    values = [model_scores[d] for d in half if d in model_scores]
    return float(np.mean(values)) if values else None
