"""Hodges-Lehmann shift and its CI: Walsh averages by brute force, the CI by inverting scipy's
exact Wilcoxon test, critical values against the published table."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hteb_score.stats.hodges_lehmann import hodges_lehmann, walsh_averages
from hteb_score.stats.signed_rank_distribution import lower_critical_value, signed_rank_cdf, signed_rank_counts
from scipy import stats

# per-dataset HTEB - Original deltas of All-MiniLM-L12-v2, paper Table 17 (first 12 datasets)
DELTAS = np.array([-2.36, -14.46, -11.60, -5.91, -4.72, -10.41, -18.26, -13.67, -13.96, -4.88, -12.09, -11.14])


def test_walsh_averages_and_shift_by_brute_force():
    pairs = [(a + b) / 2 for a, b in itertools.combinations_with_replacement(DELTAS, 2)]
    np.testing.assert_allclose(walsh_averages(DELTAS), sorted(pairs))
    assert hodges_lehmann(DELTAS).shift == pytest.approx(float(np.median(pairs)))


def test_signed_rank_distribution_by_enumeration():
    n = 6
    sums = [sum(s) for r in range(n + 1) for s in itertools.combinations(range(1, n + 1), r)]
    assert signed_rank_counts(n) == tuple(sums.count(t) for t in range(n * (n + 1) // 2 + 1))
    assert signed_rank_cdf(2, n) == pytest.approx(sum(t <= 2 for t in sums) / 2**n)


@pytest.mark.parametrize(("n", "table_value"), [(6, 0), (10, 8), (15, 25), (20, 52)])
def test_critical_values_match_published_table(n, table_value):
    # two-sided alpha = 0.05 critical values of T (reject when T <= value); k = value + 1
    assert lower_critical_value(n, 0.05) == table_value + 1


def test_walsh_ci_is_the_inversion_of_the_exact_wilcoxon_test():
    result = hodges_lehmann(DELTAS)
    walsh = walsh_averages(DELTAS)
    midpoints = (walsh[:-1] + walsh[1:]) / 2
    for theta in midpoints[np.diff(walsh) > 1e-9]:
        p = stats.wilcoxon(DELTAS - theta, method="exact").pvalue
        inside = result.ci_low < theta < result.ci_high
        assert inside == (p > 0.05), theta
    assert result.confidence >= 0.95


def test_small_sample_reports_the_coverage_it_reaches():
    result = hodges_lehmann([-1.0, -2.0, -3.0])
    assert (result.ci_low, result.ci_high) == (-3.0, -1.0)
    assert result.confidence == pytest.approx(1 - 2 / 8)


def test_bootstrap_ci_is_seeded_and_brackets_the_shift():
    a = hodges_lehmann(DELTAS, method="bootstrap", seed=7)
    b = hodges_lehmann(DELTAS, method="bootstrap", seed=7)
    assert (a.ci_low, a.ci_high) == (b.ci_low, b.ci_high)
    assert a.ci_low <= a.shift <= a.ci_high
    assert a.ci_low >= DELTAS.min() and a.ci_high <= DELTAS.max()


def test_degenerate_samples_give_finite_intervals():
    for method in ("walsh", "bootstrap"):
        one = hodges_lehmann([-2.0, 0.0], method=method)
        assert (one.shift, one.ci_low, one.ci_high, one.confidence, one.n) == (-2.0, -2.0, -2.0, 0.0, 1)
        none = hodges_lehmann([0.0, 1e-12], method=method)
        assert (none.shift, none.n) == (0.0, 0)


def test_coverage_note_marks_only_intervals_below_95_percent():
    from hteb_score.stats.hodges_lehmann import coverage_note, hodges_lehmann

    few = hodges_lehmann([-3.0, -1.0, -2.0, -4.0, -5.0])  # 5 differences: at most 1 - 2/32 = 93.75%
    assert few.confidence == 1 - 2 / 32 and coverage_note(few.confidence) == " (93.8%)"
    assert coverage_note(hodges_lehmann([float(-i) for i in range(1, 13)]).confidence) == ""
    assert coverage_note(None) == ""
