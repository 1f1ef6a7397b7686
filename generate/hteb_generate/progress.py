"""The generator's progress bars: one tqdm bar per long stage, with its total, so the bar shows the
rate and the time left (on stderr; stdout carries the results)."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Any

from tqdm import tqdm


def bar(items: Iterable[Any], desc: str, total: int, unit: str = "it") -> Iterable[Any]:
    """`items` with a bar of `total` steps (`hteb_contract.revision.Progress`'s shape)."""
    return tqdm(items, desc=desc, total=total, unit=unit, file=sys.stderr, leave=True, dynamic_ncols=True)
