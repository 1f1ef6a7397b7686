"""Ranks with intervals and groups of models that cannot be told apart, from pairwise decisions.

Given the models in point-rank order and the pairs a multiplicity-corrected test separated (winner,
loser), a model's rank interval runs from 1 + the number of models separated above it to m - the
number separated below it: with the decisions made under a family-wise error rate alpha (Shaffer over
all pairs), every model's true rank lies in its interval with probability at least 1 - alpha,
simultaneously (the pairwise-comparison rank intervals of Holm 2013 / Al Mohamad et al. 2022).
The interval is widened to hold the point rank where the mean order and the paired tests disagree.

The groups are a compact letter display (Piepho 2004, insert-absorb): every pair not separated
shares at least one letter and no separated pair shares one, so models with a letter in common
cannot be told apart. Letters are given in point-rank order: "a" is the group of the first model.

>>> order = ["A", "B", "C", "D"]
>>> separated = {("A", "C"), ("A", "D"), ("B", "D")}
>>> compact_letters(order, separated)
{'A': 'a', 'B': 'ab', 'C': 'bc', 'D': 'c'}
>>> rank_intervals(order, {"A": 1, "B": 2, "C": 3, "D": 4}, separated)
{'A': (1, 2), 'B': (1, 3), 'C': (2, 4), 'D': (3, 4)}
"""

from __future__ import annotations

import string
from collections.abc import Collection, Mapping, Sequence

Pair = tuple[str, str]  # (winner, loser) of a separated pair


def rank_intervals(
    order: Sequence[str], point: Mapping[str, int], separated: Collection[Pair]
) -> dict[str, tuple[int, int]]:
    """(lowest, highest) rank each model can take: 1 + models separated above it, m - models
    separated below it, widened to hold its point rank."""
    m = len(order)
    above = {model: sum(1 for winner, loser in separated if loser == model) for model in order}
    below = {model: sum(1 for winner, loser in separated if winner == model) for model in order}
    return {model: (min(1 + above[model], point[model]), max(m - below[model], point[model])) for model in order}


def compact_letters(order: Sequence[str], separated: Collection[Pair]) -> dict[str, str]:
    """Each model's letters: models whose pair was not separated share a letter, separated ones never."""
    apart = {frozenset(pair) for pair in separated}
    columns: list[set[str]] = [set(order)]
    for pair in sorted(apart, key=lambda p: sorted(order.index(x) for x in p)):
        first, second = sorted(pair, key=order.index)
        split: list[set[str]] = []
        for column in columns:
            if first in column and second in column:
                split += [column - {first}, column - {second}]
            else:
                split.append(column)
        columns = [c for c in split if c and not any(c < other for other in split)]
        columns = [c for i, c in enumerate(columns) if c not in columns[:i]]
    columns.sort(key=lambda c: sorted(order.index(x) for x in c))
    if len(columns) > len(string.ascii_lowercase):
        raise ValueError(f"{len(columns)} groups: more than the {len(string.ascii_lowercase)} letters")
    return {model: "".join(string.ascii_lowercase[i] for i, c in enumerate(columns) if model in c) for model in order}


def letter_groups(letters: Mapping[str, str]) -> dict[str, list[str]]:
    """Letter -> the models carrying it, in the order given.

    >>> letter_groups({'A': 'a', 'B': 'ab', 'C': 'b'})
    {'a': ['A', 'B'], 'b': ['B', 'C']}
    """
    out: dict[str, list[str]] = {}
    for model, held in letters.items():
        for letter in held:
            out.setdefault(letter, []).append(model)
    return dict(sorted(out.items()))
