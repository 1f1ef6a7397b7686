"""Holm's step-down correction (Holm 1979) — the plain one, not Holm-Sidak.

statsmodels' `multipletests` defaults to Holm-Sidak (`"hs"`); HTEB reports plain Holm.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm-adjusted p-values in the input order: monotone in the sorted order and capped at 1.

    For sorted p_(1) <= ... <= p_(m): adjusted p_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)).
    """
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1:
        raise ValueError("p_values must be one-dimensional")
    if np.any((p < 0) | (p > 1) | np.isnan(p)):
        raise ValueError("p-values must lie in [0, 1]")
    m = len(p)
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted.tolist()
