"""A table's row model: its columns stated once, each with the JSON Schema of its values, what it
holds and when a row needs it; the table's JSON Schema and the column table of its docs page are
generated from them, and a row is checked by the one validator built from that schema.

Why: a dataset row's shape was stated five times (the JSON Schema, the typed row, its reader, the
module docstring, the docs table), and the copies drifted (the docs table lacked `hub_task_ids`).
Now the committed schema file and the docs' table are written from the columns
(`make specs`: hteb_contract/specs/write_specs.py), and tests/contract/test_row_models.py
fails when either differs from what the columns give.

>>> rows = RowModel("toys", "Toys.", (Column("name", {"type": "string"}, "its name", "yes"),
...     Column("size", {"type": "integer"}, "how big", "for big rows")))
>>> toys = TableFile("toys.yaml", "A toy table", "One row per toy.", (rows,))
>>> toys.json_schema()["items"]["required"], toys.check([{"name": "a", "size": "9"}], "toys.yaml")
Traceback (most recent call last):
hteb_contract.errors.ContractError: toys.yaml: row 1 (a): size: '9' is not of type 'integer'
>>> print(rows.markdown())
| column | what it holds | needed |
|---|---|---|
| `name` | its name | yes |
| `size` | how big | for big rows |
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from hteb_contract.errors import ContractError

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
REQUIRED = "yes"  # a column every row states: required by the schema


@dataclass(frozen=True)
class Column:
    """One column: `schema` its values' JSON Schema, `doc` what it holds (Markdown, one line),
    `needed` "yes" (every row states it) or when a row needs it ("Hub datasets"; "no": never);
    `rows`, for a column whose values are rows of another model (a transformation's steps)."""

    name: str
    schema: Mapping[str, Any]
    doc: str
    needed: str = "no"
    rows: RowModel | None = None  # a column holding a table of its own (its schema is that table's)
    #: False: a fact of a profile, not of the content (a dataset's place in the CPU profile's sample), left out of
    #: the rows a revision records, so stating it moves no published revision's configuration
    recorded: bool = True

    @classmethod
    def of_rows(cls, name: str, rows: RowModel, doc: str, needed: str = "no") -> Column:
        return cls(name, rows.rows_schema(), doc, needed, rows)


@dataclass(frozen=True)
class RowModel:
    """A table of a file: its rows are objects of `columns`. `when`: schema keywords on a row that its
    columns alone cannot say (which columns a kind of row states: an `if`/`then`/`else`)."""

    name: str
    description: str
    columns: tuple[Column, ...]
    when: Mapping[str, Any] = field(default_factory=dict)
    min_rows: int = 1

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    def recorded(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """`row` as a revision records it: its columns but those of a profile (`Column.recorded` False)."""
        left_out = {column.name for column in self.columns if not column.recorded}
        return {key: value for key, value in row.items() if key not in left_out}

    def row_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "additionalProperties": False,
            "required": [c.name for c in self.columns if c.needed == REQUIRED],
            "properties": {c.name: {**c.schema, "description": c.doc} for c in self.columns},
            **self.when,
        }

    def rows_schema(self) -> dict[str, Any]:
        """The schema of the table: a list of rows."""
        bound = {"minItems": self.min_rows} if self.min_rows else {}
        return {"description": self.description, "type": "array", **bound, "items": self.row_schema()}

    def markdown(self) -> str:
        """The docs page's column table, in the columns' order."""
        lines = ["| column | what it holds | needed |", "|---|---|---|"]
        lines += [f"| `{c.name}` | {c.doc} | {c.needed} |" for c in self.columns]
        return "\n".join(lines)


@dataclass(frozen=True)
class TableFile:
    """A YAML file of tables: of one table, the list of its rows; of several, an object of them by name
    (`required`: the tables every file holds). `defs`: the schema's shared definitions."""

    file: str
    title: str
    description: str
    tables: tuple[RowModel, ...]
    required: tuple[str, ...] = ()
    defs: Mapping[str, Any] = field(default_factory=dict)

    def models(self) -> tuple[RowModel, ...]:
        """Its tables and the tables their columns hold, each once, outer first (what its docs list)."""
        found: list[RowModel] = []
        todo = list(self.tables)
        while todo:
            model = todo.pop(0)
            if model not in found:
                found.append(model)
                todo += [c.rows for c in model.columns if c.rows is not None]
        return tuple(found)

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {
            "$schema": SCHEMA_DIALECT,
            "$id": f"https://hteb.dev/schemas/{Path(self.file).stem}.schema.json",
            "title": self.title,
            "description": self.description,
        }
        if self.defs:
            schema["$defs"] = dict(self.defs)
        if len(self.tables) == 1:
            (only,) = self.tables
            return {**schema, **only.rows_schema(), "description": self.description}
        return {
            **schema,
            "type": "object",
            "additionalProperties": False,
            "required": list(self.required),
            "properties": {t.name: t.rows_schema() for t in self.tables},
        }

    def schema_text(self) -> str:
        """The committed schema file's text (`make specs` writes it)."""
        return json.dumps(self.json_schema(), indent=2, ensure_ascii=False) + "\n"

    @cached_property
    def validator(self) -> Draft202012Validator:
        return Draft202012Validator(self.json_schema())

    def check(self, rows: Any, where: str) -> None:
        """A file of one table against the schema; the first error (in the rows' order) is a one-line
        ContractError naming `where`, the row (its number and name) and the column."""
        error = next(iter(sorted(self.validator.iter_errors(rows), key=lambda e: list(e.absolute_path))), None)
        if error is None:
            return
        at = list(error.absolute_path)
        message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
        if not at:
            raise ContractError(f"{where}: (top level): {message}")
        named = f" ({rows[at[0]].get('name')})" if isinstance(rows[at[0]], dict) else ""
        inner = "/".join(str(p) for p in at[1:]) or "(row)"
        raise ContractError(f"{where}: row {at[0] + 1}{named}: {inner}: {message}")
