"""Text as extended grapheme clusters (Unicode UAX #29, the `regex` package's ``\\X``), the unit the
Noise rules of version 3 pick and edit.

Why clusters, not code points: what a reader sees as one character may be several code points (a
letter and its combining accent, a ZWJ emoji family, a flag's two regional indicators, a Hangul
syllable of conjoining jamo, a Devanagari conjunct). A rule that deletes or replaces one code point
of such a cluster leaves a mark without its letter or half an emoji, text no typist produces. And an
edit may join its neighbours (deleting the letter between a virama and a consonant forms a conjunct,
between two regional indicators a flag), which splits a cluster too: an edit is kept only where every
cluster around it stays its own (`stays_apart`).

>>> [len(c) for c in clusters("e\\u0301t\\u00e9 \\U0001F1EB\\U0001F1F7")]  # code points per cluster
[2, 1, 1, 1, 2]
>>> stays_apart("\\U0001F1EB", "", "\\U0001F1F7"), stays_apart("a", "", "b")
(False, True)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

import regex

GRAPHEME = regex.compile(r"\X")

#: What an edit makes of a unit: (unit, the output before it, the unit after it) -> its replacement, or None (kept).
Edit = Callable[[str, str, str], "str | None"]


def clusters(text: str) -> list[str]:
    """`text`'s extended grapheme clusters, in order."""
    return GRAPHEME.findall(text)


@lru_cache(maxsize=1 << 16)
def short_clusters(text: str) -> tuple[str, ...]:
    """`clusters` of a few clusters' text (a unit, an edit and its neighbours), remembered: the rules ask of the
    same few thousand units millions of times."""
    return tuple(GRAPHEME.findall(text))


def stays_apart(before: str, unit: str, after: str) -> bool:
    """Whether `unit` ("" for a deletion) written between `before` and `after` leaves each of the three its own
    clusters: an edit that joins clusters has split one."""
    whole = short_clusters(before + unit + after)
    return whole == short_clusters(before) + short_clusters(unit) + short_clusters(after)


def rewrite(units: list[str], positions: Iterable[int], edit: Edit) -> str:
    """`units` joined, each unit at `positions` (ascending) replaced by what `edit` makes of it where the
    replacement stays apart from the output before it and the unit after it (else the unit is kept)."""
    out = list(units)
    for position in positions:
        before, after = _before(out, position), "".join(out[position + 1 : position + 2])
        made = edit(out[position], before, after)
        if made is not None and stays_apart(before, made, after):
            out[position] = made
    return "".join(out)


def _before(out: list[str], position: int) -> str:
    """The last non-empty unit before `position` (a deleted one is empty)."""
    while position > 0:
        position -= 1
        if out[position]:
            return out[position]
    return ""
