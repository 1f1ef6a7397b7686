"""PTEB normalised word edit distance: worked examples."""

from __future__ import annotations

import pytest
from hteb_score.stats.edit_distance import normalised_word_edit_distance, word_edit_distance


def test_worked_examples():
    assert word_edit_distance(["a", "b", "c"], ["a", "x", "c", "d"]) == 2
    assert normalised_word_edit_distance("the cat sat", "the cat sat down") == pytest.approx(1 / 4)
    # a=a, man->guitar, plays->is, +played, +by, a=a, guitar->man: 5 edits over 7 words
    assert normalised_word_edit_distance("a man plays a guitar", "a guitar is played by a man") == pytest.approx(5 / 7)
    assert normalised_word_edit_distance("same words", "same   words") == 0.0
    assert normalised_word_edit_distance("", "") == 0.0
    assert normalised_word_edit_distance("one two", "three four") == 1.0
