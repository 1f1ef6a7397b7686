"""The chance of ranking stability's mean τ and split-half reliability's median ρ (stats/rank_null.py),
against the exact null: every shuffle enumerated, each scored by scipy's Kendall τ-b or by the real
`split_half_reliability`. The seeded draws must give the exact p within Monte Carlo error."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from hteb_score.stats.rank_null import DRAWS, reliability_chance, stability_chance
from hteb_score.stats.reliability import split_half_reliability

SE = 4  # Monte Carlo standard errors a drawn share may stray from the exact one


def _within_error(drawn: float, exact: float) -> bool:
    return abs(drawn - exact) <= SE * math.sqrt(max(exact * (1 - exact), 1 / DRAWS) / DRAWS) + 1 / DRAWS


def _exact_p(null: list[float], observed: float) -> float:
    return float(np.mean(np.array(null) >= observed - 1e-9))


def _assert_level(null: list[float], level: float) -> None:
    """`level` is a value the null attains, with at most 5% of it above and at least 5% at or above it."""
    values = np.array(null)
    assert np.isclose(values, level, atol=1e-9).any()
    above, reached = float(np.mean(values > level + 1e-9)), float(np.mean(values >= level - 1e-9))
    assert above <= 0.05 + SE * math.sqrt(0.05 * 0.95 / DRAWS) and reached >= 0.05 - SE * math.sqrt(0.05 * 0.95 / DRAWS)


def _mean_tau(original: np.ndarray, transformed: np.ndarray) -> float:
    return float(np.mean([kendalltau(o, t).statistic for o, t in zip(original, transformed)]))


CASES = {
    "untied": (
        np.array([[1.0, 2.0, 3.0, 4.0], [4.0, 1.0, 3.0, 2.0]]),
        np.array([[1.5, 2.5, 2.0, 4.5], [3.0, 1.0, 4.0, 2.0]]),
    ),
    "ties": (  # τ-b: a tie in either ordering counts in its denominator
        np.array([[1.0, 1.0, 3.0, 4.0], [2.0, 1.0, 3.0, 0.5], [1.0, 2.0, 2.0, 3.0]]),
        np.array([[1.0, 2.0, 2.0, 5.0], [2.0, 2.0, 3.0, 1.0], [0.0, 1.0, 3.0, 3.0]]),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_stability_chance_is_the_exact_permutation_p(case):
    original, transformed = CASES[case]
    observed = _mean_tau(original, transformed)
    null = [
        _mean_tau(original, np.array([row[list(order)] for row, order in zip(transformed, orders)]))
        for orders in itertools.product(itertools.permutations(range(original.shape[1])), repeat=len(original))
    ]
    chance = stability_chance(original, transformed, observed, seed=0)
    assert chance is not None and chance.draws == DRAWS
    exact = _exact_p(null, observed)
    assert _within_error(chance.p, exact), (chance.p, exact)
    _assert_level(null, chance.level)


def test_a_ranking_that_never_moves_is_told_from_chance_and_the_level_depends_on_the_models():
    rng = np.random.default_rng(1)
    levels = {}
    for models in (4, 10):
        original = rng.normal(size=(12, models))
        chance = stability_chance(original, original + 5.0, 1.0, seed=0)
        assert chance is not None and chance.p == pytest.approx(1 / (DRAWS + 1))
        levels[models] = chance.level
    assert 0 < levels[10] < levels[4] < 1  # more models: a finer test


def test_stability_chance_is_none_where_tau_is_undefined_and_repeats_with_its_seed():
    tied = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    assert stability_chance(tied, tied + np.array([0.0, 1.0, 2.0]), None, seed=0) is None
    original, transformed = CASES["untied"]
    observed = _mean_tau(original, transformed)
    assert stability_chance(original, transformed, observed, seed=3) == stability_chance(
        original, transformed, observed, seed=3
    )
    assert stability_chance(original, transformed, observed, seed=3) != stability_chance(
        original, transformed, observed, seed=4
    )


TYPES = {"s1": "STS", "s2": "STS", "c1": "Clustering", "c2": "Clustering"}
MODELS = ("m1", "m2", "m3")


def _reliability(matrix: np.ndarray, splits: int) -> float | None:
    scores = {m: dict(zip(sorted(TYPES), row)) for m, row in zip(MODELS, matrix)}
    return split_half_reliability(scores, TYPES, n_splits=splits, seed=0).median_rho


@pytest.mark.parametrize("splits", [1, 7])
def test_reliability_chance_is_the_exact_permutation_p_over_the_same_splits(splits):
    """3 models, 4 datasets: all 6^4 shuffles (each dataset's scores among the models), each scored by the
    real split_half_reliability over the very splits the observed median was taken on."""
    matrix = np.array([[1.0, 2.0, 0.5, 3.0], [2.0, 1.0, 1.5, 4.0], [3.0, 3.5, 1.0, 5.0]])  # columns: sorted(TYPES)
    observed = _reliability(matrix, splits)
    assert observed is not None
    null = []
    for orders in itertools.product(itertools.permutations(range(3)), repeat=4):
        shuffled = np.stack([matrix[list(order), column] for column, order in enumerate(orders)], axis=1)
        if (rho := _reliability(shuffled, splits)) is not None:
            null.append(rho)
    scores = {m: dict(zip(sorted(TYPES), row)) for m, row in zip(MODELS, matrix)}
    chance = reliability_chance(scores, TYPES, observed, n_splits=splits, seed=0)
    assert chance is not None
    assert _within_error(chance.p, _exact_p(null, observed)), (chance.p, _exact_p(null, observed))
    _assert_level(null, chance.level)


def test_perfectly_reliable_profiles_are_told_from_chance_and_none_is_none():
    rng = np.random.default_rng(2)
    types = {f"d{i}": ("STS", "Retrieval", "Clustering")[i % 3] for i in range(9)}
    effects = rng.normal(size=6) * 3
    scores = {f"m{j}": {d: effects[j] + rng.normal() * 0.1 + 10 * i for i, d in enumerate(types)} for j in range(6)}
    observed = split_half_reliability(scores, types, n_splits=200, seed=0).median_rho
    chance = reliability_chance(scores, types, observed, n_splits=200, seed=0)
    assert observed == pytest.approx(1.0) and chance is not None and chance.p < 0.01 and chance.level < 1
    assert reliability_chance(scores, types, None, n_splits=200, seed=0) is None
