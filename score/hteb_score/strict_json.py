"""Strict JSON for what hteb-score writes: no NaN or Infinity ever reaches a file (Python's json
writes them as bare `NaN`, which no strict parser reads). A non-finite number left anywhere is a
one-line error naming where it is, raised before anything is written."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from hteb_contract.errors import ContractError


def non_finite_path(obj: Any, path: str = "") -> str | None:
    """The first JSON path (a/b/0) holding a non-finite float, or None."""
    if isinstance(obj, float):
        return None if math.isfinite(obj) else (path or "(top level)")
    if isinstance(obj, Mapping):
        items = ((str(k), v) for k, v in obj.items())
    elif isinstance(obj, (list, tuple)):
        items = ((str(i), v) for i, v in enumerate(obj))
    else:
        return None
    for key, value in items:
        found = non_finite_path(value, f"{path}/{key}" if path else key)
        if found is not None:
            return found
    return None


def dumps(obj: Any, *, what: str) -> str:
    """Pretty, key-sorted strict JSON text of `obj` (stable bytes for identical content)."""
    where = non_finite_path(obj)
    if where is not None:
        raise ContractError(f"{what}: {where} is not a finite number; nothing was written")
    return json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"


def finite_or_none(value: float) -> float | None:
    """`value` as a float, or None where it is NaN or infinite (JSON null)."""
    value = float(value)
    return value if math.isfinite(value) else None
