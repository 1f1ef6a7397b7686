"""Light clean-ups of a raw LLM output: named, applied in a fixed order, recorded per attempt.

Why: some raw outputs wrap a good answer in something no reader of the text wants: the end of a
reasoning block that a thinking model closed before answering, or quotes around the whole answer.
Removing the wrapper keeps the answer; counting it as an error would throw a good answer away.
Nothing is silent: the names of the clean-ups that changed the text go to ``Attempt.cleanup`` in
the order they ran, the raw step outputs stay in ``Attempt.steps``, and the error detectors run on
the cleaned output.

The clean-ups, in the order they run (the order of :data:`CLEANUPS`):

1. ``drop_think_block``: when the output contains ``</think>`` and the source does not, everything
   up to and including the output's last ``</think>``, and the whitespace after it, is dropped.
   The opening ``<think>`` may be missing: a Qwen3-style chat template writes it into the prompt.
   A ``<think>`` that is never closed is left in place; it is a ``reasoning_leak``.
2. ``strip_quotes``: when the output, without surrounding whitespace, is wrapped in a pair of
   quotation marks (:data:`QUOTE_PAIRS`) and the source is not, the pair and the whitespace just
   inside it are removed; this repeats while another pair wraps the rest. A pair wraps the text
   only when neither of its marks occurs inside it, except as an apostrophe between two letters
   (``'I don't know'`` is wrapped; ``"Hi," she said, "bye."`` is not).

Not clean-ups (they stay errors, as the paper counts them): an instruction label ("Translation:",
"Sure! Here's a paraphrase:") is ``prefix_leak``. Where such a label ends and the answer begins
cannot be told reliably, since a label may head one line of answer followed by notes. A code fence
is ``json_fragment``, and notes are ``reasoning_leak``.

>>> clean_output('<think>Short input, keep it short.</think>\\n\\n"A man draws."', "Someone is drawing.")
Cleaned(output='A man draws.', applied=('drop_think_block', 'strip_quotes'))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hteb_contract.common.registry import Registry

THINK_CLOSE = "</think>"

#: Opening and closing marks of a quotation, as LLMs write them in the benchmark's languages.
QUOTE_PAIRS: tuple[tuple[str, str], ...] = (
    ('"', '"'),
    ("'", "'"),
    ("“", "”"),
    ("‘", "’"),
    ("”", "”"),
    ("„", "“"),
    ("„", "”"),
    ("«", "»"),
    ("‹", "›"),
    ("「", "」"),
    ("『", "』"),
)

#: (output, source) -> the cleaned output, the same string when the clean-up does not apply.
Cleanup = Callable[[str, str], str]


def _has_mark(inner: str, marks: str) -> bool:
    """True when a mark of ``marks`` occurs in ``inner`` other than as an apostrophe inside a word."""
    return any(
        ch in marks and not (0 < i < len(inner) - 1 and inner[i - 1].isalpha() and inner[i + 1].isalpha())
        for i, ch in enumerate(inner)
    )


def _wrapping_pair(text: str) -> tuple[str, str] | None:
    """The quote pair that wraps all of ``text`` (already stripped), or None."""
    for opening, closing in QUOTE_PAIRS:
        wrapped = len(text) >= 2 and text[0] == opening and text[-1] == closing
        if wrapped and not _has_mark(text[1:-1], opening + closing):
            return opening, closing
    return None


def is_quoted(text: str) -> bool:
    """True when a pair of quotation marks wraps all of ``text`` (surrounding whitespace aside)."""
    return _wrapping_pair(text.strip()) is not None


def unquote(text: str) -> str:
    """``text`` stripped, without the quote pairs that wrap all of it, layer after layer.

    >>> unquote(' « "Un hombre dibuja." » ')
    'Un hombre dibuja.'
    """
    text = text.strip()
    while _wrapping_pair(text) is not None:
        text = text[1:-1].strip()
    return text


def drop_think_block(output: str, source: str) -> str:
    """The answer after a closed reasoning block (see the module docstring)."""
    if THINK_CLOSE in source or THINK_CLOSE not in output:
        return output
    return output.rpartition(THINK_CLOSE)[2].lstrip()


def strip_quotes(output: str, source: str) -> str:
    """The output without quotes around all of it that the source does not have."""
    if is_quoted(source) or not is_quoted(output):
        return output
    return unquote(output)


#: Every clean-up, in the order clean_output applies them.
CLEANUPS: Registry[Cleanup] = Registry(
    "clean-up", entries={"drop_think_block": drop_think_block, "strip_quotes": strip_quotes}
)


@dataclass(frozen=True)
class Cleaned:
    """A cleaned output and the names of the clean-ups that changed it, in order."""

    output: str
    applied: tuple[str, ...]


def clean_output(raw: str, source: str) -> Cleaned:
    """Every clean-up of :data:`CLEANUPS` in order on ``raw``; ``applied`` names those that changed it."""
    text, applied = raw, []
    for name, cleanup in CLEANUPS.items():
        cleaned = cleanup(text, source)
        if cleaned != text:
            text = cleaned
            applied.append(name)
    return Cleaned(text, tuple(applied))
