"""What an undefined input makes of a statistic: the reason it cannot be computed, said in one
line, instead of NaN results or a traceback from deep inside scipy."""

from __future__ import annotations

import math
from collections.abc import Sequence


def undefined_reason(values: Sequence[float | None], what: str = "values") -> str | None:
    """Why `values` cannot enter a statistic (some are None, NaN or infinite), or None when all are finite."""
    bad = sum(1 for v in values if v is None or not math.isfinite(float(v)))
    return f"{bad} of {len(values)} {what} undefined (None, NaN or infinite)" if bad else None
