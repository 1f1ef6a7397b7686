"""The ten error types of SPEC.md / paper App. A.2, one small registered rule each.

Why rules and not a model: the paper's error rates (Table 5) come from these rules, and the
published data must say per item which of them the kept output still breaks.

The rules and the conventions they share are in ``detector_rules.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hteb_contract.errors import HtebError
from hteb_contract.registry import Registry
from hteb_contract.taxonomy import TRANSFORMATION_NAMES

ERROR_TYPES: tuple[str, ...] = (
    "identical",
    "empty",
    "ellipsis",
    "json_fragment",
    "reasoning_leak",
    "prefix_leak",
    "wrong_language",
    "runaway",
    "truncated",
    "summary_too_long",
)


@dataclass(frozen=True)
class DetectionContext:
    """What a rule needs besides the two texts.

    expected_language: ISO 639-3 code the output must be in (the target for translation and
    cross_translation, the source language otherwise; the caller passes the intermediate language
    when checking the first step of backtranslation).
    """

    transformation: str
    expected_language: str
    source_language: str


Detector = Callable[[str, str, DetectionContext], bool]
#: Error type -> rule, one per name of ERROR_TYPES (a test checks); the rules load on first lookup.
DETECTORS: Registry[Detector] = Registry("error type", modules=("hteb_generate.detector_rules",))


def detect_errors(
    output: str,
    source: str,
    *,
    transformation: str,
    source_language: str,
    expected_language: str,
) -> list[str]:
    """Names of the error types ``output`` has, in ERROR_TYPES order (empty list: none).

    >>> detect_errors("Summary: A man plays.", "A man is playing a guitar.",
    ...               transformation="summarisation", source_language="eng",
    ...               expected_language="eng")
    ['prefix_leak']
    """
    ctx = DetectionContext(TRANSFORMATION_NAMES.canonical(transformation), expected_language, source_language)
    return [name for name in ERROR_TYPES if DETECTORS.get(name)(output, source, ctx)]


def total_error_rate(errors_per_item: Iterable[Sequence[str]]) -> float:
    """Share of items with at least one error (an item counts once, however many it has)."""
    items = list(errors_per_item)
    if not items:
        raise HtebError("total error rate of zero items is undefined")
    return sum(1 for errors in items if errors) / len(items)


def error_rates(errors_per_item: Iterable[Sequence[str]]) -> dict[str, float]:
    """Per error type the share of items that have it, plus ``total`` (the paper's Table 5 row)."""
    items = list(errors_per_item)
    if not items:
        raise HtebError("error rates of zero items are undefined")
    rates = {name: sum(1 for errors in items if name in errors) / len(items) for name in ERROR_TYPES}
    rates["total"] = total_error_rate(items)
    return rates
