"""Writes what is generated from the row models (`make specs`): each table's committed JSON Schema
file, and its column table into the docs pages that mark one (`<!-- columns: FILE -->` ...
`<!-- end columns -->`). tests/contract/test_row_models.py fails when the committed text differs.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.specs import datasets
from hteb_contract.specs.table import RowModel


def models() -> dict[Path, RowModel]:
    """Every table with a row model, by the path of its committed schema file."""
    return {datasets.SCHEMA: datasets.ROW_MODEL}


def marked(model: RowModel) -> re.Pattern[str]:
    """Where a docs page holds `model`'s column table: between `<!-- columns: FILE -->` and `<!-- end columns -->`."""
    return re.compile(rf"(<!-- columns: {re.escape(model.file)} -->\n)(.*?)(^<!-- end columns -->)", re.S | re.M)


def docs_table(page: str, model: RowModel) -> str | None:
    """The column table a docs page holds for `model` (its lines, each ending in a newline), or None where it holds none."""
    found = marked(model).search(page)
    return None if found is None else found.group(2)


def main(argv: Sequence[str]) -> int:
    """Write every row model's schema file, and its column table into each docs page given that marks one."""
    pages = [Path(p) for p in argv if p != "--write"]
    for path, model in models().items():
        atomic_write_text(path, model.schema_text())
        for page in pages:
            text = page.read_text(encoding="utf-8")
            if docs_table(text, model) is not None:
                atomic_write_text(
                    page, marked(model).sub(lambda m: m.group(1) + model.markdown() + "\n" + m.group(3), text)
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
