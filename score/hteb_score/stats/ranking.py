"""Rank agreement between two score vectors over the same models (Kendall tau-b, Spearman rho).

Both return None when undefined (fewer than two models, or a constant vector) so that tables can
show a gap instead of a NaN that poisons a mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TypedDict

import numpy as np
from scipy import stats

#: Scores in order: a sequence or a 1-d array.
Scores = Sequence[float] | np.ndarray


def _defined(x: Scores, y: Scores) -> bool:
    if len(x) != len(y):
        raise ValueError(f"score vectors differ in length: {len(x)} vs {len(y)}")
    return len(x) >= 2 and np.ptp(np.asarray(x, dtype=float)) > 0 and np.ptp(np.asarray(y, dtype=float)) > 0


def kendall_tau(x: Scores, y: Scores) -> float | None:
    """Kendall's tau-b (ties handled) between two rankings."""
    return float(stats.kendalltau(x, y).statistic) if _defined(x, y) else None


def spearman_rho(x: Scores, y: Scores) -> float | None:
    """Spearman's rank correlation."""
    return float(stats.spearmanr(x, y).statistic) if _defined(x, y) else None


#: the fewest pairs `spearman_interval` gives an interval for: below, Fisher's z misstates the spread
MIN_INTERVAL_PAIRS = 10


def spearman_interval(rho: float | None, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """Bonett & Wright's (2000) interval of a Spearman rho over `n` pairs: Fisher's z with standard error
    sqrt((1 + rho^2 / 2) / (n - 3)), back through tanh. None below MIN_INTERVAL_PAIRS pairs, for an undefined
    rho, and at |rho| = 1, where z has no finite value: a figure then says how few pairs it rests on."""
    if rho is None or n < MIN_INTERVAL_PAIRS or abs(rho) >= 1:
        return None
    z, half = math.atanh(rho), stats.norm.ppf((1 + confidence) / 2) * math.sqrt((1 + rho**2 / 2) / (n - 3))
    return math.tanh(z - half), math.tanh(z + half)


def spearman_rows(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """Spearman's rho of each pair of rows at once (`axis` holds the observations), NaN where either row is
    constant: what a bootstrap of rho needs (scipy.stats.spearmanr one resample at a time spends 0.3 ms on
    checks and calls). The arithmetic is spearmanr's to the bit: average ranks stacked as its (n, 2) columns,
    then np.corrcoef's steps on their transpose (mean, centred product, times 1/(n-1), divided by each
    standard deviation in turn, clipped to [-1, 1])."""
    ranks = np.empty((*np.moveaxis(x, axis, -1).shape, 2))
    ranks[..., 0] = np.moveaxis(stats.rankdata(x, axis=axis), axis, -1)
    ranks[..., 1] = np.moveaxis(stats.rankdata(y, axis=axis), axis, -1)
    columns = ranks.swapaxes(-1, -2)
    centred = columns - columns.mean(axis=-1)[..., None]
    cov = np.matmul(centred, centred.swapaxes(-1, -2)) * np.true_divide(1, columns.shape[-1] - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        sd = np.sqrt(np.diagonal(cov, axis1=-2, axis2=-1))
        rho = cov[..., 1, 0] / sd[..., 1] / sd[..., 0]
    constant = (np.ptp(x, axis=axis) == 0) | (np.ptp(y, axis=axis) == 0)
    return np.where(constant, np.nan, np.clip(rho, -1.0, 1.0))


class MeanSd(TypedDict):
    mean: float | None
    sd: float | None
    n: int


def mean_sd(values: Sequence[float | None]) -> MeanSd:
    """Mean and sample standard deviation (ddof=1) of the defined values, as in paper Table 4."""
    kept = [v for v in values if v is not None and not math.isnan(v)]
    mean = float(np.mean(kept)) if kept else None
    sd = float(np.std(kept, ddof=1)) if len(kept) >= 2 else None
    return {"mean": mean, "sd": sd, "n": len(kept)}
