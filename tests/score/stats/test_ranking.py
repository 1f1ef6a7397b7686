"""Kendall tau-b and Spearman rho: worked examples and scipy."""

from __future__ import annotations

import statistics

import pytest
from hteb_score.stats.ranking import kendall_tau, mean_sd, spearman_rho
from scipy import stats


def test_worked_examples():
    # one adjacent swap in 4 items: (5 concordant - 1 discordant) / 6 pairs; 1 - 6*2/(4*15)
    assert kendall_tau([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)
    assert spearman_rho([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(0.8)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_ties_use_tau_b_like_scipy():
    x, y = [66.4, 67.1, 70.8, 71.0, 70.8], [53.9, 53.9, 57.5, 59.1, 63.0]
    assert kendall_tau(x, y) == pytest.approx(stats.kendalltau(x, y, variant="b").statistic)


def test_undefined_is_none_not_nan():
    assert kendall_tau([1, 1, 1], [1, 2, 3]) is None
    assert spearman_rho([1.0], [2.0]) is None


def test_mean_sd_is_sample_sd_and_skips_gaps():
    summary = mean_sd([0.2, None, 0.5, 0.9])
    assert summary["mean"] == pytest.approx(statistics.mean([0.2, 0.5, 0.9]))
    assert summary["sd"] == pytest.approx(statistics.stdev([0.2, 0.5, 0.9]))
    assert summary["n"] == 3
