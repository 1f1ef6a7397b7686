"""The exact null distribution of the Wilcoxon signed-rank sum T+ for n untied observations.

Under H0 each rank 1..n is positive with probability 1/2 independently, so the number of sign
patterns with T+ = t is the number of subsets of {1..n} summing to t: a product of (1 + x^k).
"""

from __future__ import annotations

from functools import cache

import numpy as np


@cache
def signed_rank_counts(n: int) -> tuple[int, ...]:
    """counts[t] = number of subsets of {1..n} whose sum is t, for t = 0..n(n+1)/2."""
    if n < 0:
        raise ValueError("n must be non-negative")
    counts = np.zeros(n * (n + 1) // 2 + 1, dtype=object)
    counts[0] = 1
    top = 0
    for k in range(1, n + 1):
        counts[k : top + k + 1] = counts[k : top + k + 1] + counts[: top + 1]
        top += k
    return tuple(int(c) for c in counts)


def signed_rank_cdf(t: int, n: int) -> float:
    """P(T+ <= t) under H0 with n untied, non-zero observations."""
    counts = signed_rank_counts(n)
    if t < 0:
        return 0.0
    return sum(counts[: t + 1]) / 2**n


def lower_critical_value(n: int, alpha: float) -> int:
    """The largest k with P(T+ < k) <= alpha / 2 (0 when no k reaches the level).

    The two-sided 1 - alpha confidence interval for the Hodges-Lehmann shift runs from the k-th
    smallest to the k-th largest Walsh average (Hollander & Wolfe, Nonparametric Statistical
    Methods, 3rd ed., Sec. 3.3).
    """
    counts = signed_rank_counts(n)
    total = 2**n
    cumulative = 0
    k = 0
    for t, c in enumerate(counts):
        if (cumulative + c) / total > alpha / 2:
            break
        cumulative += c
        k = t + 1
    return k
