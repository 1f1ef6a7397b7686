"""Shaffer's step-down for all pairwise comparisons of k models (Shaffer 1986, procedure S1, "static").

Holm tests the i-th smallest of m p-values at alpha / (m - i + 1): after i - 1 rejections, up to
m - i + 1 nulls could still be true. With the pairs of k models they cannot: "A = B" and "B = C"
true forces "A = C" true. The nulls true together are the pairs inside the blocks of some partition
of the models into groups of equal ones, so their number is a sum of C(b, 2) over block sizes b:
S(k) = the union over j = 1..k of {C(j, 2) + x : x in S(k - j)} (the block holding the first model
has j models). Shaffer tests the i-th smallest p at alpha / t_i, t_i the largest number in S(k)
that is at most m - i + 1. t_i <= m - i + 1, so Shaffer rejects everything Holm rejects, and keeps
the family-wise error rate at alpha in the strong sense, as Holm does.

>>> sorted(possible_true_counts(4))
[0, 1, 2, 3, 6]
>>> step_divisors(6, 4)
[6, 3, 3, 3, 2, 1]

The adjusted p-value of the i-th smallest is max over j <= i of min(1, t_j p_(j)) (Garcia & Herrera
2008, "An extension on statistical comparisons of classifiers over multiple data sets for all
pairwise comparisons", JMLR 9). scmamp's `adjustShaffer` is the same procedure in R.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from math import comb

from hteb_score.stats.step_down import step_down


@cache
def possible_true_counts(models: int) -> frozenset[int]:
    """S(k): how many of the C(k, 2) pairwise nulls "these two models are equal" can be true together."""
    if models < 0:
        raise ValueError("the number of models must be non-negative")
    if models <= 1:
        return frozenset({0})
    return frozenset(comb(j, 2) + x for j in range(1, models + 1) for x in possible_true_counts(models - j))


def step_divisors(tested: int, models: int) -> list[int]:
    """t_1..t_tested: at step i, how many of the tested nulls can still be true once i - 1 are false.

    `tested` of the C(k, 2) pairs carry a p-value (a pair whose test could not be run is left out):
    a null among them is a null among all pairs, so t_i is at most the largest count in S(k) that
    leaves i - 1 of all pairs false, and at most the tested - i + 1 that remain.
    """
    pairs = comb(models, 2)
    if not 0 <= tested <= pairs:
        raise ValueError(f"{tested} tests among the {pairs} pairs of {models} models")
    counts = sorted(possible_true_counts(models))
    return [min(tested - i, max(s for s in counts if s <= pairs - i)) for i in range(tested)]


def shaffer(p_values: Sequence[float | None], models: int) -> list[float | None]:
    """Shaffer-adjusted p-values in the input order, one per pair of `models` models (each pair at
    most once); monotone in the sorted order and capped at 1. An undefined p-value (None or NaN: the
    pair could not be tested) stays None and is left out of the steps, as `stats.holm` does."""
    if len(p_values) > comb(models, 2):
        raise ValueError(f"{len(p_values)} p-values for the {comb(models, 2)} pairs of {models} models")
    return step_down(p_values, lambda tested: step_divisors(tested, models))
