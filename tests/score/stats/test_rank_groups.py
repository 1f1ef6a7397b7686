"""Compact letter display and rank intervals from separated pairs, checked against their definitions
by brute force on every separation pattern of five models."""

from __future__ import annotations

import itertools

import pytest

from hteb_score.stats.rank_groups import compact_letters, letter_groups, rank_intervals

MODELS = ["A", "B", "C", "D", "E"]
PAIRS = list(itertools.combinations(MODELS, 2))


def _patterns():
    """Every set of separated pairs of five models (2^10), the better point rank the winner."""
    for bits in range(2 ** len(PAIRS)):
        yield {pair for k, pair in enumerate(PAIRS) if bits >> k & 1}


def test_letters_join_exactly_the_pairs_not_separated():
    for separated in _patterns():
        letters = compact_letters(MODELS, separated)
        for a, b in PAIRS:
            assert bool(set(letters[a]) & set(letters[b])) == ((a, b) not in separated), (separated, letters)
        groups = letter_groups(letters)
        for members in groups.values():  # each letter a maximal set of mutually inseparable models
            outside = [m for m in MODELS if m not in members]
            assert not any(all((min(m, x), max(m, x)) not in separated for x in members) for m in outside)


def test_no_separation_is_one_group_and_all_separated_is_one_letter_each():
    assert compact_letters(MODELS, set()) == dict.fromkeys(MODELS, "a")
    assert compact_letters(MODELS, set(PAIRS)) == dict(zip(MODELS, "abcde"))


@pytest.mark.parametrize(
    ("separated", "expected"),
    [
        (set(), {m: (1, 5) for m in MODELS}),
        (set(PAIRS), {m: (i, i) for i, m in enumerate(MODELS, 1)}),
        ({("A", "E")}, {"A": (1, 4), "B": (1, 5), "C": (1, 5), "D": (1, 5), "E": (2, 5)}),
    ],
)
def test_rank_intervals_count_the_models_separated_above_and_below(separated, expected):
    point = {m: i for i, m in enumerate(MODELS, 1)}
    assert rank_intervals(MODELS, point, separated) == expected


def test_an_interval_always_holds_the_point_rank():
    """Where the mean order and the tests disagree (E separated above A though A's mean is higher)."""
    point = {m: i for i, m in enumerate(MODELS, 1)}
    intervals = rank_intervals(MODELS, point, {("E", "A")})
    assert intervals["A"] == (1, 5) and intervals["E"] == (1, 5)
    for separated in _patterns():
        for m, (low, high) in rank_intervals(MODELS, point, separated).items():
            assert low <= point[m] <= high
