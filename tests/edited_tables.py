"""An installed table as if its YAML had been edited: what a later release with a changed row reads,
for the tests of what a revision records of its rows (issue 43)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hteb_contract.specs import resolved


def edit_installed_table(monkeypatch: pytest.MonkeyPatch, table: str, edit: Callable[[Any], None]) -> None:
    """From now on (the test's monkeypatch), the rows of the table file `table` read as `edit` leaves them."""
    read = resolved._rows

    def edited(path: str) -> Any:
        data = copy.deepcopy(read(path))
        if Path(path).name == table:
            edit(data)
        return data

    monkeypatch.setattr(resolved, "_rows", edited)


def with_axis_rows(data: Any, row: dict[str, Any]) -> None:
    """`row` added to the parsed transformation table `data` after the last row of its axis (an axis's rows stand
    together, in the axes' order)."""
    rows = data["transformations"]
    rows.insert(max(at for at, r in enumerate(rows) if r["axis"] == row["axis"]) + 1, row)
