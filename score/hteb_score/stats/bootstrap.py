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
    statistic: Callable[..., float] | Callable[..., np.ndarray],
    *samples: Sequence[float | None] | np.ndarray,
    paired: bool = False,
    confidence: float = 0.95,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    vectorized: bool = False,
) -> tuple[float, float]:
    """(low, high) percentile interval of `statistic(*samples)`; NaN bounds if it is undefined
    (fewer than 2 observations, or a sample holding None, NaN or inf: resampling them gives no interval).

    `statistic` takes plain 1-D arrays (one per sample) and returns a float; it is applied one
    resample at a time, which keeps arbitrary statistics (HL shift) simple. With `vectorized`, it takes
    every resample at once (arrays with the observations on `axis`, scipy's convention) and returns
    one value per resample: the same resamples, drawn from the same seed.
    """
    arrays = tuple(np.asarray([np.nan if v is None else v for v in s], dtype=float) for s in samples)
    if any(len(a) < 2 or not np.all(np.isfinite(a)) for a in arrays):
        return (float("nan"), float("nan"))
    with warnings.catch_warnings():  # a degenerate resample distribution gives NaN bounds: said above
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            arrays,
            statistic if vectorized else lambda *xs: statistic(*xs),
            n_resamples=n_resamples,
            confidence_level=confidence,
            method="percentile",
            paired=paired,
            vectorized=vectorized,
            rng=np.random.default_rng(seed),
        )
    return (float(result.confidence_interval.low), float(result.confidence_interval.high))
