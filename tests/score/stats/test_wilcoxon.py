"""Wilcoxon signed-rank: against an exact sign-flip enumeration and scipy, and the zero rule."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hteb_score.stats.wilcoxon import least_p, wilcoxon_signed_rank
from scipy import stats


def brute_force_two_sided_p(d: np.ndarray) -> float:
    """Exact p by enumerating all 2^n sign patterns of the ranks (no ties, no zeros)."""
    ranks = stats.rankdata(np.abs(d))
    observed = ranks[d > 0].sum()
    centre = ranks.sum() / 2
    extreme = 0
    patterns = list(itertools.product([0, 1], repeat=len(d)))
    for signs in patterns:
        t = ranks[np.array(signs, dtype=bool)].sum()
        extreme += abs(t - centre) >= abs(observed - centre) - 1e-12
    return extreme / len(patterns)


def test_p_value_matches_exact_enumeration():
    d = np.array([-3.1, -1.2, 0.4, -2.7, -0.9, 1.5, -4.2, -0.3, -2.2])
    assert wilcoxon_signed_rank(d).p_value == pytest.approx(brute_force_two_sided_p(d), abs=1e-12)


def test_all_negative_worked_example():
    # five negative differences: T+ = 0, exact two-sided p = 2 / 2^5
    result = wilcoxon_signed_rank([-1, -2, -3, -4, -5])
    assert result.p_value == pytest.approx(2 / 32)
    assert result.n == 5


def test_zero_rule_drops_rounded_zeros():
    noisy_zero = 0.1 + 0.2 - 0.3  # 5.5e-17, a zero after rounding
    with_zeros = wilcoxon_signed_rank([0.0, noisy_zero, -1, -2, -3, -4, -5])
    assert with_zeros.n_zero == 2
    assert with_zeros.n == 5
    assert with_zeros.p_value == pytest.approx(2 / 32)


def test_pratt_rule_matches_scipy_and_differs_from_wilcox():
    d = [0.0, 0.0, -1.0, -2.0, 3.0, -4.0, -5.0, -6.0]
    pratt = wilcoxon_signed_rank(d, zero_method="pratt")
    assert pratt.p_value == pytest.approx(stats.wilcoxon(d, zero_method="pratt").pvalue)
    assert pratt.p_value != pytest.approx(wilcoxon_signed_rank(d).p_value)


def test_all_zero_differences_cannot_reject():
    result = wilcoxon_signed_rank([0.0, 1e-12, -1e-13])
    assert (result.p_value, result.n, result.n_zero) == (1.0, 0, 3)


def test_unknown_zero_method_is_refused():
    with pytest.raises(ValueError, match="zero_method"):
        wilcoxon_signed_rank([1.0, 2.0], zero_method="drop")


@settings(max_examples=60, deadline=None)
@given(
    moved=st.lists(st.floats(0.01, 100, allow_nan=False).map(lambda x: round(x, 3)), min_size=1, max_size=12),
    signs=st.lists(st.booleans(), min_size=12, max_size=12),
    zeros=st.integers(0, 40),
)
def test_least_p_is_the_exact_tests_floor_for_the_datasets_that_moved(moved, signs, zeros):
    """The least p a card states beside a p: scipy's exact two-sided test of the same count of differences all of
    one sign (distinct magnitudes: no tie), and no p the test gives those differences falls below it."""
    magnitudes = np.arange(1, len(moved) + 1, dtype=float)  # distinct: scipy's exact distribution applies
    floor = stats.wilcoxon(magnitudes, method="exact").pvalue
    assert least_p(len(moved)) == pytest.approx(floor, rel=1e-12)
    differences = [m if s else -m for m, s in zip(moved, signs)] + [0.0] * zeros
    found = wilcoxon_signed_rank(differences)
    assert found.n == len(moved) and found.p_value >= least_p(found.n) - 1e-12
    # Wilcoxon's rule: a zero carries no sign, so any number of them leaves the test of the others as it was
    assert found.p_value == wilcoxon_signed_rank(differences[: len(moved)]).p_value
    assert least_p(0) == 1.0
