"""Shaffer's step-down for all pairs of models: its counts of nulls that can be true together against
Shaffer's (1986) table and against every partition of the models, its steps against Holm's, and its
family-wise error rate in seeded simulations of the model-against-model test."""

from __future__ import annotations

import itertools
from math import comb

import numpy as np
import pytest
from scipy import stats

from hteb_score.stats.holm import holm
from hteb_score.stats.power import adjusted, pair_tests, simulate
from hteb_score.stats.shaffer import possible_true_counts, shaffer, step_divisors


def set_partitions(items: list[int]):
    """Every partition of `items` into non-empty blocks (Bell(k) of them)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in set_partitions(rest):
        yield [[first], *partition]
        for k in range(len(partition)):
            yield [*partition[:k], [first, *partition[k]], *partition[k + 1 :]]


def true_nulls(partition: list[list[int]]) -> int:
    """The pairs "these two models are equal" that hold when the blocks are the groups of equal models."""
    return sum(comb(len(block), 2) for block in partition)


@pytest.mark.parametrize(
    ("models", "published"),
    [
        (2, {0, 1}),
        (3, {0, 1, 3}),
        (4, {0, 1, 2, 3, 6}),
        (5, {0, 1, 2, 3, 4, 6, 10}),
        (6, {0, 1, 2, 3, 4, 6, 7, 10, 15}),
    ],
)
def test_possible_true_counts_are_shaffers_table(models, published):
    """Shaffer (1986), table of the possible numbers of true hypotheses among all pairwise comparisons."""
    assert possible_true_counts(models) == published


@pytest.mark.parametrize("models", range(0, 9))
def test_the_recursion_counts_the_true_nulls_of_every_partition_of_the_models(models):
    assert possible_true_counts(models) == {true_nulls(p) for p in set_partitions(list(range(models)))}


@pytest.mark.parametrize("models", range(2, 7))
def test_each_step_divides_by_the_most_nulls_that_can_still_be_true(models):
    """t_i = the most true nulls of any partition leaving at least i - 1 of the pairs false."""
    pairs = comb(models, 2)
    counts = [true_nulls(p) for p in set_partitions(list(range(models)))]
    assert step_divisors(pairs, models) == [max(c for c in counts if pairs - c >= i) for i in range(pairs)]


def test_worked_examples():
    # four models: t = 6, 3, 3, 3, 2, 1; sorted 0.005*6, 0.01*3, 0.03*3, 0.04*3, 0.2*2, 0.5*1
    assert step_divisors(6, 4) == [6, 3, 3, 3, 2, 1]
    assert shaffer([0.01, 0.04, 0.03, 0.005, 0.5, 0.2], 4) == pytest.approx([0.03, 0.12, 0.09, 0.03, 0.5, 0.4])
    # five models (Garcia & Herrera 2008, table of the procedures' levels: alpha / 10, / 6 four times, / 4 twice, ...)
    assert step_divisors(10, 5) == [10, 6, 6, 6, 6, 4, 4, 3, 2, 1]
    # three models: once one pair differs, at most one null is left that can be true; Holm still multiplies by 2
    assert shaffer([0.001, 0.04, 0.3], 3) == pytest.approx([0.003, 0.04, 0.3])
    assert holm([0.001, 0.04, 0.3]) == pytest.approx([0.003, 0.08, 0.3])
    assert shaffer([0.3], 2) == holm([0.3]) == [0.3]


def test_shaffer_rejects_everything_holm_rejects():
    """Adjusted p never above Holm's, so every pair Holm separates Shaffer separates; from three models on
    it is strictly sharper somewhere."""
    rng = np.random.default_rng(7)
    for models in range(2, 8):
        sharper_somewhere = False
        for _ in range(200):
            p = rng.uniform(0, 1, comb(models, 2)) ** rng.uniform(1, 6)
            by_shaffer, by_holm = np.asarray(shaffer(p, models)), np.asarray(holm(p))
            assert np.all(by_shaffer <= by_holm + 1e-15)
            assert np.all((by_shaffer < 0.05) >= (by_holm < 0.05))
            sharper_somewhere |= bool(np.any(by_shaffer < by_holm))
        assert sharper_somewhere == (models >= 3)


def test_an_untested_pair_is_left_out_of_the_steps():
    """Four models, one pair undefined: five tests, each step at most the tests left and at most what
    S(4) allows once i - 1 pairs are false."""
    assert step_divisors(5, 4) == [5, 3, 3, 2, 1]
    for undefined in (None, float("nan")):
        # sorted 0.01*5, 0.02*3, 0.03*3, 0.2*2, 0.5*1
        assert shaffer([0.01, undefined, 0.03, 0.02, 0.5, 0.2], 4) == [
            pytest.approx(0.05),
            None,
            pytest.approx(0.09),
            pytest.approx(0.06),
            0.5,
            pytest.approx(0.4),
        ]


def test_refused_more_p_values_than_pairs_and_p_values_out_of_range():
    with pytest.raises(ValueError, match="pairs of 3 models"):
        shaffer([0.1, 0.2, 0.3, 0.4], 3)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        shaffer([0.1, 1.2], 3)
    with pytest.raises(ValueError, match="non-negative"):
        possible_true_counts(-1)


def consistent_with_at_most_5_percent(false: int, reps: int) -> bool:
    """A one-sided binomial test does not reject "the false-separation rate is at most 5%" at 1%."""
    return bool(stats.binomtest(false, reps, 0.05, alternative="greater").pvalue > 0.01)


@pytest.mark.parametrize("models", [3, 4, 6])
def test_under_the_complete_null_a_false_separation_is_rare(models):
    """All models equal, 15 datasets, the Wilcoxon test per pair and Shaffer over the pairs: the share of
    simulated comparisons with any pair separated stays at most 5%."""
    _, p, _ = pair_tests(simulate(0.0, 1.0, 15, models=models, reps=2000, seed=11))
    false = int(np.sum(np.any(adjusted(p, models, "shaffer") < 0.05, axis=1)))
    assert false / 2000 <= 0.05 and consistent_with_at_most_5_percent(false, 2000)


def test_under_a_partial_null_the_equal_models_stay_together():
    """Three equal models and one 1 SD ahead: the planted pairs are often separated first, and then
    Shaffer tests the rest at the looser levels the constraints allow (once one pair differs, at most 3
    of 6 nulls can be true). It finds more of the planted pairs than Holm, and still at most 5% of the
    comparisons separate two of the equal models."""
    groups = [0, 0, 0, 1]
    scores = simulate(0.0, 1.0, 15, models=len(groups), reps=2000, seed=12) + 1.0 * np.asarray(groups)[:, None]
    pairs, p, _ = pair_tests(scores)
    within = np.array([groups[a] == groups[b] for a, b in pairs])
    by_shaffer, by_holm = adjusted(p, len(groups), "shaffer") < 0.05, adjusted(p, len(groups), "holm") < 0.05
    false = int(np.sum(np.any(by_shaffer[:, within], axis=1)))
    assert consistent_with_at_most_5_percent(false, 2000)
    assert np.all(by_shaffer >= by_holm) and np.mean(by_shaffer[:, ~within]) > np.mean(by_holm[:, ~within])


def test_the_rows_of_a_simulation_are_adjusted_as_one_family_each():
    _, p, _ = pair_tests(simulate(0.3, 1.0, 10, models=4, reps=5, seed=3))
    for row, adjusted_row in zip(p, adjusted(p, 4, "shaffer")):
        assert adjusted_row.tolist() == pytest.approx(shaffer(row.tolist(), 4))
    for row, adjusted_row in zip(p, adjusted(p, 4, "holm")):
        assert adjusted_row.tolist() == pytest.approx(holm(row.tolist()))


def test_pairs_are_every_pair_of_models_once():
    pairs, p, ahead = pair_tests(simulate(0.0, 1.0, 6, models=4, reps=3, seed=0))
    assert pairs == list(itertools.combinations(range(4), 2)) and p.shape == ahead.shape == (3, 6)
