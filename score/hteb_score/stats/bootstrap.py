"""Percentile bootstrap confidence intervals via `scipy.stats.bootstrap`, always seeded.

`paired=True` resamples whole observations (rows across all samples together), which is what a
correlation between two per-item quantities needs.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy import stats

DEFAULT_RESAMPLES = 1000


def percentile_bootstrap(
    statistic: Callable[..., float],
    *samples: Sequence[float | None] | np.ndarray,
    paired: bool = False,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float]:
    """(low, high) percentile interval of `statistic(*samples)`; NaN bounds if it is undefined
    (fewer than 2 observations, or a sample holding None, NaN or inf: resampling them gives no interval).

    `statistic` takes plain 1-D arrays (one per sample) and returns a float; it is applied one
    resample at a time, which keeps arbitrary statistics (HL shift, Spearman rho) simple.
    """
    arrays = tuple(np.asarray([np.nan if v is None else v for v in s], dtype=float) for s in samples)
    if any(len(a) < 2 or not np.all(np.isfinite(a)) for a in arrays):
        return (float("nan"), float("nan"))
    with warnings.catch_warnings():  # a degenerate resample distribution gives NaN bounds: said above
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            arrays,
            lambda *xs: statistic(*xs),
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            paired=paired,
            vectorized=False,
            rng=np.random.default_rng(seed),
        )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))
