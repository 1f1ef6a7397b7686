"""Split-half reliability: stratification, and cases whose answer is known."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hteb_score.stats.reliability import split_half_reliability, stratified_halves

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
