"""Writes what is generated from the row models (`make specs`): each table's committed JSON Schema
file, and its column table into the docs pages that mark one (`<!-- columns: FILE TABLE -->` ...
`<!-- end columns -->`). tests/contract/test_row_models.py fails when the committed text differs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.specs import datasets, transformations
from hteb_contract.specs.table import RowModel, TableFile


def files() -> dict[Path, TableFile]:
    """Every table file with row models, by the path of its committed schema file."""
    return {datasets.SCHEMA: datasets.TABLE_FILE, transformations.SCHEMA_PATH: transformations.TABLE_FILE}


def marked(file: TableFile, table: RowModel) -> re.Pattern[str]:
    """Where a docs page holds `table`'s column table: between `<!-- columns: FILE TABLE -->` and
    `<!-- end columns -->`."""
    start = re.escape(f"<!-- columns: {file.file} {table.name} -->")
    return re.compile(rf"({start}\n)(.*?)(^<!-- end columns -->)", re.S | re.M)


def docs_table(page: str, file: TableFile, table: RowModel) -> str | None:
    """The column table a docs page holds for `table` (its lines, each ending in a newline), or None where it holds none."""
    found = marked(file, table).search(page)
    return None if found is None else found.group(2)


def main(argv: Sequence[str]) -> int:
    """Write every table file's schema, and each table's columns into the docs pages given that mark it."""
    pages = [Path(p) for p in argv if p != "--write"]
    missing = [page for page in pages if not page.is_file()]
    if missing:  # before anything is written
        print(f"write_specs: {missing[0]}: no such docs page", file=sys.stderr)
        return 2
    for path, file in files().items():
        atomic_write_text(path, file.schema_text())
        for page in pages:
            text = page.read_text(encoding="utf-8")
            for table in file.models():
                markdown = table.markdown() + "\n"
                text = marked(file, table).sub(lambda m: m.group(1) + markdown + m.group(3), text)
            if text != page.read_text(encoding="utf-8"):
                atomic_write_text(page, text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
