"""PTEB's normalised word-level edit distance between an original and a transformed text.

distance = Levenshtein distance over whitespace-separated words / word count of the longer text,
so 0 means identical word sequences and 1 means nothing kept in place (PTEB, App. C).
"""

from __future__ import annotations


def word_edit_distance(a: list[str], b: list[str]) -> int:
    """Levenshtein distance between two word sequences (insert, delete, substitute cost 1)."""
    previous = list(range(len(b) + 1))
    for i, word_a in enumerate(a, start=1):
        current = [i]
        for j, word_b in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (word_a != word_b)))
        previous = current
    return previous[-1]


def normalised_word_edit_distance(original: str, transformed: str) -> float:
    """Word edit distance divided by the word count of the longer text (0.0 for two empty texts)."""
    a, b = original.split(), transformed.split()
    longest = max(len(a), len(b))
    return word_edit_distance(a, b) / longest if longest else 0.0
