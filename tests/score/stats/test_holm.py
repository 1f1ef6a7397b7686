"""Holm step-down against statsmodels (method='holm', not its default Holm-Sidak)."""

from __future__ import annotations

import numpy as np
import pytest
from hteb_score.stats.holm import holm
from statsmodels.stats.multitest import multipletests


def test_worked_example_monotone_and_capped():
    # sorted: 0.005*4=0.02, 0.01*3=0.03, 0.03*2=0.06, 0.04*1=0.04 -> running max keeps 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.4, 0.9]) == pytest.approx([0.8, 0.9])
    assert holm([0.6, 0.7]) == pytest.approx([1.0, 1.0])


def test_matches_statsmodels_holm():
    p = np.random.default_rng(3).uniform(0, 0.2, size=17)
    p[4] = p[9]  # a tie
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1].tolist())


def test_bad_p_values_are_refused():
    with pytest.raises(ValueError):
        holm([0.5, 1.5])
