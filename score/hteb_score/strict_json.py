"""Strict JSON for what hteb-score writes: no NaN or Infinity ever reaches a file (Python's json
writes them as bare `NaN`, which no strict parser reads). A non-finite number left anywhere is a
one-line error naming where it is, raised before anything is written."""

from __future__ import annotations

import json
import math
from typing import Any

from hteb_contract.validation import check_finite


def dumps(obj: Any, *, what: str) -> str:
    """Pretty, key-sorted strict JSON text of `obj` (stable bytes for identical content)."""
    check_finite(obj, what=what)
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def finite_or_none(value: float) -> float | None:
    """`value` as a float, or None where it is NaN or infinite (JSON null)."""
    value = float(value)
    return value if math.isfinite(value) else None
