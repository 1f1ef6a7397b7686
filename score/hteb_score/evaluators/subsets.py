"""Subsets: mteb's hf_subsets (`en-de`, `en-ext`, `afr`, `default`), named by each row's `lang` field
(hteb_contract.sources.subset_of), scored separately and then averaged without weights, as mteb
averages a task's main score over its hf_subsets."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.source_values import subset_of
from hteb_contract.sources import SourceDataset


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
