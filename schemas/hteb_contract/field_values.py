"""What a source row's field must hold: one check per field name, worded for the error a bad row gets.

A task type (hteb_contract.tasks) checks each required field with the check of its name here
(`FIELD_CHECKS`), or with its own where its rows hold less (a pair label of 0 or 1, a relevance
grade that is an integer): a new field name is checked by the task type that brings it.

>>> BINARY_LABEL.check(1), BINARY_LABEL.check(2), BINARY_LABEL.must
(True, False, '0 or 1')
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: The relevance grades mteb reads from qrels (it casts them to int32) and pytrec_eval takes (integers).
RELEVANCE_RANGE = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class FieldCheck:
    """A field's check and what it says a value must be ("a string", "0 or 1")."""

    check: Callable[[Any], bool]
    must: str


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_number(value: Any) -> bool:
    """A finite int or float; an int too large for a float (`1` and 400 zeros) is none."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _is_relevance(value: Any) -> bool:
    """An integer relevance grade within int32 (1.0 is 1; 0.5 is no grade: mteb would truncate it to 0)."""
    return _is_number(value) and float(value).is_integer() and RELEVANCE_RANGE[0] <= value <= RELEVANCE_RANGE[1]


def _is_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


def _is_binary(value: Any) -> bool:
    return _is_id(value) and value in (0, 1)


def _list_of(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda value: isinstance(value, list) and all(check(item) for item in value)


TEXT = FieldCheck(_is_text, "a string")
NUMBER = FieldCheck(_is_number, "a finite number")
ID = FieldCheck(_is_id, "a string or an integer")
TEXTS = FieldCheck(_list_of(_is_text), "a list of strings")
NUMBERS = FieldCheck(_list_of(_is_number), "a list of finite numbers")
IDS = FieldCheck(_list_of(_is_id), "a list of ids")
RELEVANCE = FieldCheck(_is_relevance, "an integer relevance grade within int32, as mteb and pytrec_eval read qrels")
BINARY_LABEL = FieldCheck(_is_binary, "0 or 1")

#: field name -> its check, for every task type that does not state its own.
FIELD_CHECKS: dict[str, FieldCheck] = {
    "text": TEXT,
    "sentence1": TEXT,
    "sentence2": TEXT,
    "score": NUMBER,
    "label": ID,
    "id": ID,
    "query_id": ID,
    "doc_id": ID,
    "doc_ids": IDS,
    "human_summaries": TEXTS,
    "machine_summaries": TEXTS,
    "relevance": NUMBERS,
}
