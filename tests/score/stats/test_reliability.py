"""Split-half reliability: stratification, cases whose answer is known, and the spreads that set its sign."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hteb_score.stats.reliability import draw_splits, split_half_reliability, stratified_halves
from scipy.stats import spearmanr

TYPES = {
    "A1": "STS",
    "A2": "STS",
    "B1": "Retrieval",
    "B2": "Retrieval",
    "B3": "Retrieval",
    "C1": "Clustering",
    "C2": "Clustering",
}


def test_halves_are_stratified_by_task_type():
    rng = np.random.default_rng(0)
    for _ in range(50):
        first, second = stratified_halves(TYPES, rng)
        assert sorted(first + second) == sorted(TYPES)
        a, b = Counter(TYPES[d] for d in first), Counter(TYPES[d] for d in second)
        assert all(abs(a[t] - b[t]) <= 1 for t in set(TYPES.values()))


def test_additive_scores_are_perfectly_reliable():
    model_effect = {"m1": 0.0, "m2": 1.5, "m3": 3.0, "m4": 4.0}
    dataset_effect = {d: 10.0 * i for i, d in enumerate(TYPES)}
    scores = {m: {d: model_effect[m] + dataset_effect[d] for d in TYPES} for m in model_effect}
    result = split_half_reliability(scores, TYPES, n_splits=50)
    assert result.median_rho == pytest.approx(1.0)
    assert result.n_defined == 50


def test_opposite_halves_give_minus_one():
    # two datasets of one type always land in opposite halves; the models' order flips between them
    types = {"x": "STS", "y": "STS"}
    scores = {"m1": {"x": 1.0, "y": 3.0}, "m2": {"x": 2.0, "y": 2.0}, "m3": {"x": 3.0, "y": 1.0}}
    assert split_half_reliability(scores, types, n_splits=20).median_rho == pytest.approx(-1.0)


def test_too_few_models_gives_none():
    assert split_half_reliability({"m1": {"x": 1.0}, "m2": {"x": 2.0}}, {"x": "STS"}).median_rho is None


def _halves(scores, models, first, second):
    """The models' two half means, written out from their definition."""
    return (
        np.array([np.mean([scores[m][d] for d in first]) for m in models]),
        np.array([np.mean([scores[m][d] for d in second]) for m in models]),
    )


@pytest.mark.parametrize("seed", range(6))
def test_the_level_and_gap_spreads_are_the_medians_over_the_splits_and_set_pearsons_sign(seed):
    """level_sd and gap_sd against their definition, per split and in median; and the identity the pages state
    under them, cov(a, b) = var((a + b) / 2) - var((a - b) / 2), on every split of generated scores."""
    rng = np.random.default_rng(seed)
    models = [f"m{i}" for i in range(int(rng.integers(3, 9)))]
    level = rng.normal(0, rng.uniform(0.1, 5), len(models))  # the models' levels, from close to far apart
    scores = {m: {d: 50 + level[i] + rng.normal(0, 2) for d in TYPES} for i, m in enumerate(models)}
    result = split_half_reliability(scores, TYPES, n_splits=40, seed=seed)
    levels, gaps, rhos = [], [], []
    for first, second in draw_splits(TYPES, 40, seed):
        a, b = _halves(scores, models, first, second)
        assert np.cov(a, b, ddof=0)[0, 1] == pytest.approx(np.var((a + b) / 2) - np.var((a - b) / 2), abs=1e-9)
        levels.append(np.std((a + b) / 2))
        gaps.append(np.std((a - b) / 2))
        rhos.append(spearmanr(a, b).statistic)
    assert result.n_defined == 40
    assert result.median_rho == pytest.approx(np.median(rhos))
    assert result.level_sd == pytest.approx(np.median(levels))
    assert result.gap_sd == pytest.approx(np.median(gaps))


def test_models_of_one_level_get_minus_one_however_each_dataset_ranks_them():
    """Every dataset ranks the models apart, but what one dataset gives a model another takes away (the same
    total): level 0, so the halves disagree."""
    models = ["m1", "m2", "m3", "m4"]
    offsets = {"A1": [3, 1, -1, -3], "A2": [-3, -1, 1, 3], "B1": [2, 0, -1, -1], "B2": [-2, 0, 1, 1]}
    types = {"A1": "STS", "A2": "STS", "B1": "Retrieval", "B2": "Retrieval"}
    scores = {m: {d: 60.0 + offsets[d][i] for d in types} for i, m in enumerate(models)}
    result = split_half_reliability(scores, types, n_splits=30)
    assert result.level_sd == pytest.approx(0.0, abs=1e-12) and result.gap_sd > 1
    assert result.median_rho == pytest.approx(-1.0)
