"""Holm's step-down correction (Holm 1979) — the plain one, not Holm-Sidak.

statsmodels' `multipletests` defaults to Holm-Sidak (`"hs"`); HTEB reports plain Holm.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values in the input order: monotone in the sorted order and capped at 1.

    For sorted p_(1) <= ... <= p_(m): adjusted p_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)).
    An undefined p-value (None or NaN: its test could not be run) stays None and is not counted
    in m: the family is the tests that were run.
    """
    p = np.asarray([np.nan if v is None else v for v in p_values], dtype=float)
    if p.ndim != 1:
        raise ValueError("p_values must be one-dimensional")
    defined = ~np.isnan(p)
    if np.any((p[defined] < 0) | (p[defined] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    q = p[defined]
    m = len(q)
    order = np.argsort(q, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * q[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    out: list[float | None] = [None] * len(p)
    for position, value in zip(np.flatnonzero(defined), adjusted.tolist()):
        out[position] = value
    return out
