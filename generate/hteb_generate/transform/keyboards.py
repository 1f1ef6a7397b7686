"""What a typist hits instead of a character: the characters of the keys touching its key, on the
keyboard of its script (hteb_contract/specs/noise_scripts.yaml), for keyboard_typos of noise rules
version 2.

Why per character: a text may mix scripts (a Hindi text with English words is typed on two layouts),
so each letter's own script picks its keyboard, and the language picks a national Latin one (AZERTY,
QWERTZ). Scripts typed as syllables are handled through their keys: a Hangul syllable's initial
consonant (else its vowel) moves to a neighbouring jamo key of Dubeolsik, an Ethiopic syllable moves to
the series of a neighbouring consonant key of SERA's phonetic input, keeping its vowel order.

>>> key_neighbours("S", "eng"), key_neighbours("a", "fra"), key_neighbours("7", None)
('ADEWXZ', 'qz', '')
>>> "ሰ" in key_neighbours("ለ", "amh"), key_neighbours("가", "kor")[:3]
(False, '다라사')
"""

from __future__ import annotations

import unicodedata
from functools import cache

from hteb_contract.specs.noise_scripts import adjacency, noise_scripts

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3
LEADS = "ㄱㄲㄴㄷㄸㄹㅁㅂㅃㅅㅆㅇㅈㅉㅊㅋㅌㅍㅎ"  # a Hangul syllable's initial consonants, in Unicode's order
VOWELS = "ㅏㅐㅑㅒㅓㅔㅕㅖㅗㅘㅙㅚㅛㅜㅝㅞㅟㅠㅡㅢㅣ"  # its vowels, in Unicode's order
TAILS = 28
ETHIOPIC_FIRST, ETHIOPIC_SERIES = 0x1200, 8  # Ethiopic syllables come in series of 8 vowel orders


@cache
def key_neighbours(char: str, language: str | None) -> str:
    """The characters a slip of the finger types instead of `char` (empty: none, the character stays)."""
    table = noise_scripts()
    script = table.script_of(char)
    if script is None:
        return ""
    layout = table.layout_for(script, language)
    if layout is None:
        return ""
    neighbours = table.neighbours(script, language)
    if HANGUL_FIRST <= ord(char) <= HANGUL_LAST:
        return _hangul(char, neighbours)
    if layout.syllables:
        return _syllable(char, layout.syllables, adjacency(layout.rows))
    lower = char.lower()
    near = neighbours.get(lower, "") if len(lower) == 1 else ""
    if char != lower:
        near = "".join(n.upper() if len(n.upper()) == 1 else n for n in near)
    return near


def _hangul(char: str, neighbours: dict[str, str]) -> str:
    lead, rest = divmod(ord(char) - HANGUL_FIRST, len(VOWELS) * TAILS)
    vowel, tail = divmod(rest, TAILS)
    leads = [LEADS.index(k) for k in neighbours.get(LEADS[lead], "") if k in LEADS]
    if leads:
        return "".join(chr(HANGUL_FIRST + (other * len(VOWELS) + vowel) * TAILS + tail) for other in leads)
    vowels = [VOWELS.index(k) for k in neighbours.get(VOWELS[vowel], "") if k in VOWELS]
    return "".join(chr(HANGUL_FIRST + (lead * len(VOWELS) + other) * TAILS + tail) for other in vowels)


def _syllable(char: str, series: dict[str, str], neighbours: dict[str, str]) -> str:
    base, order = divmod(ord(char) - ETHIOPIC_FIRST, ETHIOPIC_SERIES)
    key_of = {ord(first): key for key, first in series.items()}
    key = key_of.get(ETHIOPIC_FIRST + base * ETHIOPIC_SERIES)
    if key is None:
        return ""
    moved = (chr(ord(series[k]) + order) for k in neighbours.get(key, "") if k in series)
    return "".join(c for c in moved if unicodedata.name(c, ""))
