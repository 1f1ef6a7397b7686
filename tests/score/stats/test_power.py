"""The power simulation of the model-against-model test: its spread against numpy, its p-values
against the project's Wilcoxon, its detectable gap against the paired t-test's (statsmodels) and
against the power it reports, its invariances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower

from hteb_score.stats.power import detectable_gap, pair_tests, pooled_difference_sd, power, simulate
from hteb_score.stats.wilcoxon import wilcoxon_signed_rank


def test_pooled_sd_is_the_root_mean_variance_of_the_pairs_differences():
    scores = {
        "a": {"x": 1.0, "y": 4.0, "z": 2.0, "w": 9.0},
        "b": {"x": 3.0, "y": 3.0, "z": 7.0},
        "c": {"x": 0.0, "y": 8.0, "z": 5.0},
    }
    shared = ["x", "y", "z"]  # w: not every model has it
    variances = [
        np.var([scores[i][d] - scores[j][d] for d in shared], ddof=1) for i, j in [("a", "b"), ("a", "c"), ("b", "c")]
    ]
    assert pooled_difference_sd(scores) == pytest.approx(np.sqrt(np.mean(variances)))
    assert pooled_difference_sd({"a": scores["a"]}) is None
    assert pooled_difference_sd({"a": {"x": 1.0}, "b": {"x": 2.0}}) is None


def test_simulated_differences_have_the_sd_asked_for():
    scores = simulate(3.0, 2.5, 15, models=3, reps=4000, seed=1)
    for a, b in itertools.combinations(range(3), 2):
        assert np.std(scores[:, b] - scores[:, a]) == pytest.approx(2.5, rel=0.02)
    assert np.mean(scores[:, 2] - scores[:, 0]) == pytest.approx(3.0, abs=0.05)


@pytest.mark.parametrize("datasets", [12, 60])
def test_the_p_values_are_the_projects_wilcoxon(datasets):
    """Exact up to 50 datasets, the normal approximation past it, as scipy's method "auto"."""
    scores = simulate(0.5, 1.0, datasets, models=3, reps=20, seed=4)
    pairs, p, ahead = pair_tests(scores)
    for r in range(20):
        for k, (a, b) in enumerate(pairs):
            differences = scores[r, b] - scores[r, a]
            assert p[r, k] == pytest.approx(wilcoxon_signed_rank(differences.tolist()).p_value)
            assert ahead[r, k] == (
                np.median([(x + y) / 2 for i, x in enumerate(differences) for y in differences[i:]]) > 0
            )  # the HL shift's side


def test_more_gap_finds_more_and_only_the_ratio_to_the_sd_counts():
    found = [power(gap, 1.0, 15) for gap in (0.0, 0.5, 1.0, 1.5)]
    for which in ("alone", "holm", "shaffer"):
        rates = [getattr(f, which) for f in found]
        assert rates == sorted(rates) and rates[0] < 0.05 and rates[-1] > 0.9, which
    assert all(f.shaffer >= f.holm for f in found)
    scores = simulate(1.0, 1.0, 15, reps=50, seed=2)  # the tests see signs and ranks only: scale-free
    for unscaled, scaled in zip(pair_tests(scores)[1:], pair_tests(7.3 * scores - 40.0)[1:]):
        assert np.array_equal(unscaled, scaled)


def test_the_detectable_gap_is_where_the_power_crosses_80_percent():
    """To half a percent of the SD: 0.05 points at SD 10."""
    gap = detectable_gap(10.0, 15)
    assert gap is not None
    assert power(gap, 10.0, 15).shaffer >= 0.8 > power(gap - 0.05, 10.0, 15).shaffer
    assert detectable_gap(20.0, 15) == pytest.approx(2 * gap)
    assert (
        detectable_gap(10.0, 15, which="alone")
        < detectable_gap(10.0, 15, which="shaffer")
        <= detectable_gap(10.0, 15, which="holm")
    )


def test_one_pair_alone_needs_a_little_more_than_the_paired_t_test():
    """For normal differences the signed-rank test's efficiency against the t-test is 3 / pi (0.955), and at
    15 datasets its exact levels fall a little short of 0.05: it needs a gap between the t-test's and 15% more."""
    t_gap = TTestPower().solve_power(nobs=15, alpha=0.05, power=0.8, alternative="two-sided")
    assert t_gap <= detectable_gap(1.0, 15, which="alone") <= 1.15 * t_gap


def test_too_few_datasets_find_nothing_and_bad_arguments_are_refused():
    """Five datasets: the smallest two-sided signed-rank p is 2 / 32 > 0.05."""
    assert detectable_gap(1.0, 5, which="alone") is None
    with pytest.raises(ValueError):
        power(1.0, 0.0, 15)
    with pytest.raises(ValueError):
        detectable_gap(1.0, 15, which="bonferroni")
