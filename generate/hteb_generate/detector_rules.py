"""The rule for each error type of hteb_generate.detectors, registered in DETECTORS.

Conventions shared by all rules:

- words are whitespace tokens (``str.split()``);
- identical means equal after stripping surrounding whitespace, compared case-insensitively
  (``str.casefold``); inner whitespace counts;
- length rules compare the output with the transformation's input, which for the two-step
  transformations is the original text (the caller passes it as ``source``); a source without
  words has no length ratio, so the length rules never fire on it;
- runaway: output words > 5 x input words (exactly 5 x is fine), never for expansion and
  summarised_expansion;
- truncated: output words < 20% of input words (exactly 20% is fine); for summarisation only
  when the input has at most 3 words (a summary of a long text is meant to be short);
- summary_too_long: summarisation only. summarised_expansion is not checked: its final step
  summarises the *expansion*, and coming out somewhat longer than the original text is its
  expected result, not a defect (the paper defines the rule "for Summarisation");
- wrong_language: fires only when the detector names a language confidently and the expected
  language is one it can recognise (``langid.UNSUPPORTED_BENCHMARK_LANGUAGES`` are never
  flagged), and, when the output should stay in the source language, only when the detector
  recognises the source text itself as that language (otherwise the detector cannot read this
  text and a mismatch proves nothing);
- reasoning_leak and prefix_leak markers are English (the paper's); a marker the source text
  itself carries (``I'll`` in a source that says "I'll" or "I will") is not a leak.
"""

from __future__ import annotations

import re

from . import langid
from .detectors import DETECTORS, DetectionContext

RUNAWAY_FACTOR = 5
TRUNCATED_FRACTION_DENOMINATOR = 5  # 20% = 1/5
SHORT_SUMMARY_INPUT_WORDS = 3
NO_RUNAWAY = frozenset({"expansion", "summarised_expansion"})


def _words(text: str) -> int:
    return len(text.split())


@DETECTORS.register("identical")
def identical(output: str, source: str, ctx: DetectionContext) -> bool:
    """The model gave the input back: the transformation did nothing."""
    return output.strip().casefold() == source.strip().casefold()


@DETECTORS.register("empty")
def empty(output: str, source: str, ctx: DetectionContext) -> bool:
    """Nothing but whitespace came back."""
    return not output.strip()


_ELLIPSIS = re.compile(r"(?:\.{2,}|…)(?:\s*(?:\.{2,}|…))*")


@DETECTORS.register("ellipsis")
def ellipsis(output: str, source: str, ctx: DetectionContext) -> bool:
    """Only ``...``, ``..`` or ``…`` (a refusal or a stall)."""
    return _ELLIPSIS.fullmatch(output.strip()) is not None


@DETECTORS.register("json_fragment")
def json_fragment(output: str, source: str, ctx: DetectionContext) -> bool:
    """Structured data instead of text: the output starts with ``{`` or ``[``."""
    return output.lstrip().startswith(("{", "["))


_REASONING_MARKERS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        r"\bhere (?:are|is) my reasoning\b",
        r"\blet me think\b",
        r"\bI['’]ll\b",
        r"\bstep \d+\s*:",
    )
)
_I_WILL = re.compile(r"\bI(?:['’]ll| will)\b", re.IGNORECASE)


@DETECTORS.register("reasoning_leak")
def reasoning_leak(output: str, source: str, ctx: DetectionContext) -> bool:
    """Chain-of-thought markers the source does not carry itself."""
    for marker in _REASONING_MARKERS:
        if marker.search(output) and not marker.search(source):
            if marker.pattern.startswith(r"\bI['") and _I_WILL.search(source):
                continue  # "I will" -> "I'll" is a style change, not reasoning
            return True
    return False


_PREFIX = re.compile(
    r"[\s*#_>]*(?:translated text|translation|paraphrased text|paraphrase|summary"
    r"|summari[sz]ed text|rewritten text|expanded text)[\s*_]*:",
    re.IGNORECASE,
)


@DETECTORS.register("prefix_leak")
def prefix_leak(output: str, source: str, ctx: DetectionContext) -> bool:
    """The output starts with an instruction label ("Translation:", "**Summary:**", ...)."""
    return _PREFIX.match(output) is not None and _PREFIX.match(source) is None


@DETECTORS.register("wrong_language")
def wrong_language(output: str, source: str, ctx: DetectionContext) -> bool:
    """The detector confidently reads another language than the expected one."""
    if not langid.is_supported(ctx.expected_language):
        return False
    found = langid.detect_language(output)
    if found is None or langid.same_language(found, ctx.expected_language):
        return False
    if langid.same_language(ctx.expected_language, ctx.source_language):
        source_found = langid.detect_language(source)
        if source_found is not None and not langid.same_language(source_found, ctx.source_language):
            return False
    return True


@DETECTORS.register("runaway")
def runaway(output: str, source: str, ctx: DetectionContext) -> bool:
    """More than 5 x the input's words, except where growing is the point."""
    if ctx.transformation in NO_RUNAWAY:
        return False
    n_in = _words(source)
    return n_in > 0 and _words(output) > RUNAWAY_FACTOR * n_in


@DETECTORS.register("truncated")
def truncated(output: str, source: str, ctx: DetectionContext) -> bool:
    """Under 20% of the input's words (summaries only when the input had at most 3 words)."""
    n_in = _words(source)
    if ctx.transformation == "summarisation" and n_in > SHORT_SUMMARY_INPUT_WORDS:
        return False
    return _words(output) * TRUNCATED_FRACTION_DENOMINATOR < n_in


@DETECTORS.register("summary_too_long")
def summary_too_long(output: str, source: str, ctx: DetectionContext) -> bool:
    """A summary with more words than its input defeats the purpose."""
    return ctx.transformation == "summarisation" and _words(output) > _words(source)
