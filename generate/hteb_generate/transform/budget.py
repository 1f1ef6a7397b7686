"""Token budgets without a tokenizer: a text's estimated token count, and each step's `max_tokens`.

Why no tokenizer: `max_tokens` is part of every request's cache key, so it must be known before any
model loads (a fully cached run loads none), and `hteb-generate plan` must count a whole run
without one. The estimate is characters divided by a per-script rate: 4 characters per token for
Latin script (the usual rule of thumb for English), 3 for other alphabets (Greek, Cyrillic,
Armenian, Georgian, Hebrew, Arabic), 2 for abugidas (the Indic scripts, Sinhala, Thai, Lao,
Khmer, Myanmar, Ethiopic) and 1.5 for Han, kana and Hangul; any other character counts at 2.
These are assumptions, not measurements on the generator's tokenizer: estimates, nothing is cut
by them.

`max_tokens` of a step: its template's growth times the estimated tokens of the step's input, plus
64, never below the run's `max_tokens` and never above its ceiling (`--max-tokens-ceiling`; without
one, every step gets `max_tokens`). Growth is room above what a step is expected to write
(`EXPECTED`, what `plan` counts); both are the `templates` rows of the transformation table
(hteb_contract.specs.transformations): expand 6 (an expansion runs to about four times its source),
translate, paraphrase and style change 2 (another script can take twice the tokens), summarise 1.
With the gpu profile's 1024 and 4096, a 300-token ArguAna query may expand to 1864 tokens instead
of being cut at 1024.
"""

from __future__ import annotations

import bisect
import math
from functools import lru_cache

from hteb_contract.specs.transformations import StepSpec, TemplateSpec, transformation_table  # noqa: F401 (the doctests)

SCRIPT_CHARS_PER_TOKEN: dict[str, float] = {"latin": 4.0, "alphabet": 3.0, "abugida": 2.0, "cjk": 1.5, "other": 2.0}

#: (first code point, script) of each range, up to the next range's start.
_RANGES: tuple[tuple[int, str], ...] = (
    (0x0000, "latin"),  # Basic Latin to Latin Extended-B, incl. digits, spaces and punctuation
    (0x0250, "other"),
    (0x0370, "alphabet"),  # Greek, Cyrillic, Armenian, Hebrew, Arabic, Syriac, Thaana
    (0x07C0, "other"),
    (0x0900, "abugida"),  # Devanagari ... Sinhala, Thai, Lao, Tibetan, Myanmar
    (0x10A0, "alphabet"),  # Georgian
    (0x1100, "cjk"),  # Hangul Jamo
    (0x1200, "abugida"),  # Ethiopic
    (0x13A0, "other"),
    (0x1780, "abugida"),  # Khmer
    (0x1800, "other"),
    (0x1E00, "latin"),  # Latin Extended Additional (Vietnamese)
    (0x1F00, "alphabet"),  # Greek Extended
    (0x2000, "latin"),  # general punctuation, symbols
    (0x2E80, "cjk"),  # CJK radicals, kana, CJK unified ideographs
    (0xA000, "other"),
    (0xAC00, "cjk"),  # Hangul syllables
    (0xD7B0, "other"),
    (0xF900, "cjk"),  # CJK compatibility ideographs
    (0xFB00, "other"),
    (0xFB50, "alphabet"),  # Arabic presentation forms
    (0xFE00, "other"),
    (0xFF00, "cjk"),  # full-width forms
    (0xFFF0, "other"),
)
_STARTS = [start for start, _ in _RANGES]

#: ISO 15924 script (mteb's language-script codes) -> the same classes, for counts without the texts.
SCRIPT_CLASS: dict[str, str] = {
    "Latn": "latin",
    **dict.fromkeys(("Grek", "Cyrl", "Armn", "Geor", "Hebr", "Arab"), "alphabet"),
    **dict.fromkeys(
        (
            "Deva",
            "Beng",
            "Gujr",
            "Guru",
            "Knda",
            "Mlym",
            "Orya",
            "Taml",
            "Telu",
            "Sinh",
            "Thai",
            "Laoo",
            "Khmr",
            "Mymr",
            "Ethi",
        ),
        "abugida",
    ),
    **dict.fromkeys(("Hani", "Hans", "Hant", "Jpan", "Hira", "Kana", "Hang", "Kore"), "cjk"),
}

MARGIN = 64


@lru_cache(maxsize=4096)
def _token_share(char: str) -> float:
    script = _RANGES[bisect.bisect_right(_STARTS, ord(char)) - 1][1]
    return 1.0 / SCRIPT_CHARS_PER_TOKEN[script]


@lru_cache(maxsize=2**18)  # a text recurs in every transformation and seed of a plan
def estimate_tokens(text: str) -> int:
    """Estimated tokens of `text` (see the module docstring for the rates).

    >>> estimate_tokens("A man is playing a guitar."), estimate_tokens("男が弾いている"), estimate_tokens("")
    (7, 5, 0)
    """
    return math.ceil(sum(_token_share(c) for c in text))


def estimate_tokens_of_chars(chars: float, script: str) -> float:
    """Estimated tokens of `chars` characters in ISO 15924 script `script` (the per-script rates above)."""
    return chars / SCRIPT_CHARS_PER_TOKEN[SCRIPT_CLASS.get(script, "other")]


def max_tokens_for(template: TemplateSpec, tokens: float, max_tokens: int, ceiling: int | None) -> int:
    """`max_tokens` of one step with template `template` (its `growth`: the room it gets, in tokens of its
    input) whose input has `tokens` tokens.

    >>> expand = transformation_table().template("expand")
    >>> max_tokens_for(expand, 300, 1024, 4096), max_tokens_for(expand, 2, 1024, 4096)
    (1864, 1024)
    >>> max_tokens_for(expand, 300, 48, None), max_tokens_for(expand, 1375, 1024, 4096)
    (48, 4096)
    """
    if ceiling is None:
        return max_tokens
    return max(max_tokens, min(ceiling, math.ceil(template.growth * tokens) + MARGIN))


def step_budget(step: StepSpec) -> TemplateSpec:
    """The token budget a step of a parsed table holds (its template's: `parse_transformation_table` resolves it)."""
    if step.budget is None:
        raise ValueError(f"step {step.template!r} holds no budget: it is not a step of a parsed table")
    return step.budget


def step_max_tokens(step: StepSpec, text: str, max_tokens: int, ceiling: int | None) -> int:
    """`max_tokens` of one step (of a table's row: it holds its template's budget) whose input is `text`."""
    return max_tokens_for(step_budget(step), estimate_tokens(text), max_tokens, ceiling)
