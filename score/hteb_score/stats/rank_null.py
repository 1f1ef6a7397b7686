"""How far ranking stability's mean τ and split-half reliability's median ρ reach by chance: a seeded
permutation null at the models, datasets, ties and splits the comparison really has.

With four models a dataset's τ moves in steps of 1/3 and a split's ρ in steps of 0.2, so a mean τ of 0.5
or a median ρ of 0.4 may be what unrelated orderings give; the null says what they give here.

- Ranking stability (Kendall τ-b between the models' Original and transformed scores, mean over datasets):
  each draw shuffles, on every dataset independently, which model has which transformed score: a
  transformation that reorders the models at random.
- Split-half reliability (median over the splits of Spearman's ρ between the models' two half means):
  each draw shuffles every dataset's scores among the models independently, so no model is better on one
  half for being better on the other; the medians are over the very splits the observed one used.

`p` is one-sided (agreement above chance): (1 + draws at or above the observed) / (1 + draws). `level` is
the 95th percentile of the draws (an attained value): a figure at or below it is not told from chance at 5%,
the least this comparison can tell apart. A shuffle keeps each dataset's values, so a τ or ρ undefined for
ties stays so in every draw.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from hteb_score.stats.ranking import spearman_rows
from hteb_score.stats.reliability import draw_splits

DRAWS = 2000
#: draws computed at once (bounds memory: draws x models x splits floats)
CHUNK = 100
#: how close a draw may fall below the observed figure and still count as reaching it (the arithmetic differs)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Chance:
    """Where the observed figure stands among `draws` seeded draws of the null."""

    p: float
    level: float
    draws: int


def stability_chance(
    original: np.ndarray, transformed: np.ndarray, observed: float | None, *, seed: int
) -> Chance | None:
    """The chance of ranking stability's mean τ: `original`, `transformed` are (datasets, models) scores;
    None where the observed mean is undefined (no dataset on which both orderings vary)."""
    original, transformed = np.asarray(original, dtype=float), np.asarray(transformed, dtype=float)
    pairs = np.array(list(combinations(range(original.shape[1]), 2)))
    if observed is None or not len(pairs):
        return None
    x, y = _pair_signs(original, pairs), _pair_signs(transformed, pairs)
    x_untied, y_untied = np.count_nonzero(x, axis=1), np.count_nonzero(y, axis=1)
    defined = (x_untied > 0) & (y_untied > 0)
    if not defined.any():
        return None
    x, kept, denominator = x[defined], transformed[defined], np.sqrt(x_untied[defined] * y_untied[defined])
    rng = np.random.default_rng(seed)
    means = []
    for size in _chunks():
        shuffled = rng.permuted(np.broadcast_to(kept, (size, *kept.shape)), axis=-1)
        means.append(((x * _pair_signs(shuffled, pairs)).sum(axis=-1) / denominator).mean(axis=-1))
    return _chance(np.concatenate(means), observed)


def reliability_chance(
    scores: Mapping[str, Mapping[str, float]],
    task_types: Mapping[str, str],
    observed: float | None,
    *,
    n_splits: int,
    seed: int,
) -> Chance | None:
    """The chance of split-half reliability's median ρ (`split_half_reliability`'s arguments, whose `seed`
    draws the splits and the shuffles: every model scored on every dataset of `task_types`); None where the
    observed median is undefined."""
    models, datasets = sorted(scores), sorted(task_types)
    if observed is None:
        return None
    matrix = np.array([[scores[m][d] for d in datasets] for m in models])
    splits = draw_splits(task_types, n_splits, seed)
    halves = [_weights(datasets, [split[side] for split in splits]) for side in (0, 1)]
    rng = np.random.default_rng(seed)
    medians = []
    for size in _chunks():
        shuffled = rng.permuted(np.broadcast_to(matrix, (size, *matrix.shape)), axis=1)
        rho = spearman_rows(shuffled @ halves[0], shuffled @ halves[1], axis=1)
        medians.append(_median_defined(rho))
    drawn = np.concatenate(medians)
    return _chance(drawn[~np.isnan(drawn)], observed)


def _pair_signs(scores: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """sign(score_i - score_j) for every pair i < j of models (the last axis)."""
    return np.sign(scores[..., pairs[:, 0]] - scores[..., pairs[:, 1]])


def _weights(datasets: Sequence[str], halves: Sequence[Sequence[str]]) -> np.ndarray:
    """(datasets, splits): column s averages the datasets of half s."""
    index = {d: i for i, d in enumerate(datasets)}
    weights = np.zeros((len(datasets), len(halves)))
    for column, half in enumerate(halves):
        if half:  # an empty half leaves its column 0: every model ties, and ρ is undefined, as for the observed
            weights[[index[d] for d in half], column] = 1 / len(half)
    return weights


def _median_defined(rho: np.ndarray) -> np.ndarray:
    """Each draw's median over its splits where ρ is defined (NaN where none is)."""
    with warnings.catch_warnings():  # a draw with no defined ρ is NaN: said above
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmedian(rho, axis=1)


def _chunks() -> list[int]:
    return [min(CHUNK, DRAWS - start) for start in range(0, DRAWS, CHUNK)]


def _chance(drawn: np.ndarray, observed: float) -> Chance | None:
    if not len(drawn):
        return None
    reached = int(np.count_nonzero(drawn >= observed - TOLERANCE))
    return Chance(
        p=(1 + reached) / (1 + len(drawn)),
        level=float(np.quantile(drawn, 0.95, method="higher")),
        draws=len(drawn),
    )
