"""Kendall tau-b and Spearman rho: worked examples and scipy."""

from __future__ import annotations

import statistics

import pytest
import numpy as np
from hteb_score.stats.ranking import MIN_INTERVAL_PAIRS, kendall_tau, mean_sd, spearman_interval, spearman_rho
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


@pytest.mark.parametrize(("correlation", "n"), [(0.0, 12), (0.5, 30), (-0.8, 60)])
def test_spearman_interval_covers_the_population_rho_95_times_in_100(correlation, n):
    """Bivariate normal samples of Pearson r have Spearman rho_s = 6/pi asin(r/2) in the population; the
    interval over each sample must hold it in 95% of 2,000 seeded samples (within 4 binomial SEs)."""
    rng = np.random.default_rng(7)
    population = 6 / np.pi * np.arcsin(correlation / 2)
    covered = 0
    for _ in range(2000):
        x, noise = rng.standard_normal((2, n))
        y = correlation * x + np.sqrt(1 - correlation**2) * noise
        low, high = spearman_interval(spearman_rho(x, y), n)
        covered += low <= population <= high
    assert abs(covered / 2000 - 0.95) <= 4 * np.sqrt(0.95 * 0.05 / 2000), covered


def test_spearman_interval_is_none_where_it_cannot_be_stated():
    assert spearman_interval(0.3, MIN_INTERVAL_PAIRS - 1) is None  # too few pairs for Fisher's z
    assert spearman_interval(1.0, 50) is None and spearman_interval(None, 50) is None
    low, high = spearman_interval(0.3, MIN_INTERVAL_PAIRS)
    assert -1 < low < 0.3 < high < 1
