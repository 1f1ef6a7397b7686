"""The one reader of CSV (issue 46): a scores table given to `hteb-score compare`, and the paper's typed-in
totals beside the leaderboard. Lines starting with `#` between rows are comments (in a quoted cell, the cell's); a spreadsheet's byte-order mark is
dropped. Python's `csv.DictReader` reads silently what a table of ours never holds: a header naming one
column twice (the last cell wins, so the value read is not the value shown), and a row with more or fewer
cells than the header (the extras under the key None, the missing ones None). Here each is one line of the
caller's error naming the file and the row.

tests/test_inputs.py fails when library code reads CSV anywhere else.

>>> rows("# a comment\\nmodel,score\\na,1\\n", "t.csv")
[{'model': 'a', 'score': '1'}]
>>> rows('model,note\\na,"two lines:\\n# not a comment"\\n', "t.csv")
[{'model': 'a', 'note': 'two lines:\\n# not a comment'}]
>>> rows("model,score,model\\na,1,b\\n", "t.csv")
Traceback (most recent call last):
hteb_contract.errors.ContractError: t.csv: not a readable CSV table (the column 'model' is named twice)
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from pathlib import Path

from hteb_contract.errors import ContractError


def rows(text: str, where: str, error: Callable[[str], Exception] = ContractError) -> list[dict[str, str]]:
    """The rows of the CSV table `text` read from `where`, each a dict by the header's names."""
    at_record_start = [True]  # a '#' line is a comment there only, not a line of a quoted multi-line cell

    def lines() -> Iterator[str]:
        for line in io.StringIO(text.removeprefix("\ufeff"), newline=""):
            if not (at_record_start[0] and line.startswith("#")):
                at_record_start[0] = False
                yield line

    def records() -> Iterator[list[str]]:
        for cells in csv.reader(lines()):
            at_record_start[0] = True
            yield cells

    try:
        reader = records()
        header = next(reader, [])
        twice = next((name for at, name in enumerate(header) if name in header[:at]), None)
        if twice is not None:
            raise error(f"{where}: not a readable CSV table (the column {twice!r} is named twice)")
        table: list[dict[str, str]] = []
        for cells in filter(None, reader):  # a blank line is no row, as DictReader reads it
            if len(cells) != len(header):
                raise error(
                    f"{where}: not a readable CSV table (row {len(table) + 1}: {len(cells)} cells "
                    f"under a header of {len(header)})"
                )
            table.append(dict(zip(header, cells)))
        return table
    except csv.Error as err:
        raise error(f"{where}: not a readable CSV table ({err})") from None


def read(path: Path, error: Callable[[str], Exception] = ContractError) -> list[dict[str, str]]:
    """The rows of the CSV file at `path`; a file that cannot be read is `error` too."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise error(f"{path}: not a readable CSV table ({err})") from None
    return rows(text, str(path), error)
