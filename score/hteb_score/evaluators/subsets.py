"""Subsets: a `lang` field on the rows splits a dataset into subsets scored separately and then
averaged without weights, as mteb averages its hf_subsets. Rows without `lang` form "default"."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.sources import SourceDataset

DEFAULT = "default"


def subset_of(row: dict[str, Any]) -> str:
    lang = row.get("lang")
    return lang if isinstance(lang, str) and lang else DEFAULT


def group_rows(rows: Sequence[dict[str, Any]]) -> dict[str, list[int]]:
    """Subset name -> row indices (in row order); subsets in sorted order, as mteb lists languages."""
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(subset_of(row), []).append(index)
    return dict(sorted(groups.items()))


def require_rows(dataset: SourceDataset, table: str, rows: Sequence[Any]) -> None:
    """A variant whose rows were all dropped cannot be scored; say so instead of returning NaN."""
    if not rows:
        raise HtebError(f"{dataset.name}: no rows left in {table!r} to score (all dropped or empty)")
