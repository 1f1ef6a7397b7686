"""Percentile bootstrap: seeded, close to normal theory for a mean, paired resampling."""

from __future__ import annotations

import numpy as np
import pytest
from hteb_score.stats.bootstrap import percentile_bootstrap
from scipy import stats


def test_mean_ci_is_close_to_normal_theory_and_seeded():
    x = np.random.default_rng(0).normal(10, 2, size=400)
    low, high = percentile_bootstrap(np.mean, x, n_resamples=2000, seed=1)
    half = 1.96 * x.std(ddof=1) / np.sqrt(len(x))
    assert low == pytest.approx(x.mean() - half, abs=0.05)
    assert high == pytest.approx(x.mean() + half, abs=0.05)
    assert (low, high) == percentile_bootstrap(np.mean, x, n_resamples=2000, seed=1)


def test_paired_resampling_keeps_pairs_together():
    x = np.arange(50, dtype=float)
    y = 2 * x + 1  # perfectly monotone: every paired resample has rho = 1

    def rho(a, b):
        return stats.spearmanr(a, b).statistic

    assert percentile_bootstrap(rho, x, y, paired=True, seed=0) == pytest.approx((1.0, 1.0))


def test_too_small_sample_gives_nan():
    assert all(np.isnan(percentile_bootstrap(np.mean, [1.0])))


def _scipy_rho(x: np.ndarray, y: np.ndarray) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    return float(stats.spearmanr(x, y).statistic)


@pytest.mark.parametrize("n", [3, 6, 11, 40])
@pytest.mark.parametrize("ties", [False, True])
def test_vectorised_spearman_bootstrap_is_scipys_one_resample_at_a_time(n, ties):
    """The card's drift-vs-quality interval: every resample's rho at once equals scipy.stats.spearmanr on each,
    to the bit, so the interval is the one the slow path gives."""
    from hteb_score.stats.ranking import spearman_rows

    rng = np.random.default_rng(n + 100 * ties)
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    if ties:
        x, y = np.round(x), np.round(y)
    rows_x, rows_y = rng.normal(size=(300, n)), rng.normal(size=(300, n))
    if ties:
        rows_x, rows_y = np.round(rows_x), np.round(rows_y * 2)
    expected = np.array([_scipy_rho(a, b) for a, b in zip(rows_x, rows_y)])
    np.testing.assert_array_equal(spearman_rows(rows_x, rows_y), expected)  # NaN where constant
    slow = percentile_bootstrap(_scipy_rho, x, y, paired=True, n_resamples=400)
    fast = percentile_bootstrap(spearman_rows, x, y, paired=True, n_resamples=400, vectorized=True)
    assert fast == slow or np.isnan([*fast, *slow]).all()
