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
    rho = lambda a, b: stats.spearmanr(a, b).statistic
    assert percentile_bootstrap(rho, x, y, paired=True, seed=0) == pytest.approx((1.0, 1.0))


def test_too_small_sample_gives_nan():
    assert all(np.isnan(percentile_bootstrap(np.mean, [1.0])))
