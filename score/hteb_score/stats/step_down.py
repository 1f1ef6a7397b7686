"""Step-down adjusted p-values from the divisor each step tests at: Holm's and Shaffer's share it.

At step i (the i-th smallest p-value) a step-down procedure rejects when p_(i) <= alpha / t_i and
stops at the first it cannot reject; the adjusted p-value of the i-th smallest is therefore
max over j <= i of min(1, t_j p_(j)), which is below alpha exactly when the procedure rejects it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def adjust_rows(p: np.ndarray, divisors: Sequence[int]) -> np.ndarray:
    """Adjusted p-values of each row of `p` (last axis: one family, every p-value defined), t_1..t_m
    the `divisors`; rows at once, so a simulation adjusts thousands of families in one call."""
    order = np.argsort(p, axis=-1, kind="stable")
    scaled = np.minimum(1.0, np.asarray(divisors, dtype=float) * np.take_along_axis(p, order, axis=-1))
    adjusted = np.empty_like(scaled)
    np.put_along_axis(adjusted, order, np.maximum.accumulate(scaled, axis=-1), axis=-1)
    return adjusted


def step_down(p_values: Sequence[float | None], divisors: Callable[[int], Sequence[int]]) -> list[float | None]:
    """Adjusted p-values in the input order, `divisors(m)` giving t_1..t_m for the m defined ones.

    An undefined p-value (None or NaN: its test could not be run) stays None and is not counted in
    m: the family is the tests that were run.
    """
    p = np.asarray([np.nan if v is None else v for v in p_values], dtype=float)
    if p.ndim != 1:
        raise ValueError("p_values must be one-dimensional")
    defined = ~np.isnan(p)
    if np.any((p[defined] < 0) | (p[defined] > 1)):
        raise ValueError("p-values must lie in [0, 1]")
    adjusted = adjust_rows(p[defined], divisors(int(defined.sum())))
    out: list[float | None] = [None] * len(p)
    for position, value in zip(np.flatnonzero(defined), adjusted.tolist()):
        out[position] = value
    return out
