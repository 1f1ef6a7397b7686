"""The checks of item rows and tables that the writer and the reader share, worded alike."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.arrow import arrow_schema
from hteb_contract.columnar import suspect_rows
from hteb_contract.errors import ContractError, IntegrityError, first_line
from hteb_contract.records import ItemRecord
from hteb_contract.revision.layout import Variant, split_name
from hteb_contract.source_values import CORPUS_TABLE
from hteb_contract.validation import SCHEMA_VERSIONS

REF = ("split", "item_id", "field")


#: A source text's column (`sources.TEXT_COLUMNS`) -> the item column that repeats it.
ITEM_COLUMN = {
    "table": "split",
    "item_id": "item_id",
    "field": "field",
    "text": "original_text",
    "language": "source_language",
    "subset": "subset",
}


REF_KEY = "ref key"


def ref_key(table: pa.Table) -> pa.ChunkedArray:
    """split, item id and field of each row joined by a unit separator: a lookup key for a row's
    source text (two refs may share one only if a part holds the separator; callers compare the parts)."""
    return pc.binary_join_element_wise(*(table.column(name) for name in REF), "\x1f")


def bool_mask(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean Arrow result as a numpy mask, null read as False."""
    return pc.fill_null(values, False).to_numpy(zero_copy_only=False).astype(bool, copy=False)


def rows_equal(table: pa.Table, **values: Any) -> np.ndarray:
    """Rows whose columns hold the given values."""
    found = np.ones(table.num_rows, dtype=bool)
    for name, value in values.items():
        found &= bool_mask(pc.equal(table.column(name), value))
    return found


def sorted_by_ref(table: pa.Table) -> bool:
    """Whether the rows are in ref order (split, item id, field; code point order, as Python sorts
    `ItemRecord.ref`), each pair of neighbours compared with Arrow compute."""
    if table.num_rows < 2:
        return True
    after, before = table.slice(1), table.slice(0, table.num_rows - 1)
    ordered = np.zeros(table.num_rows - 1, dtype=bool)
    tied = np.ones(table.num_rows - 1, dtype=bool)
    for name in REF:
        left, right = before.column(name), after.column(name)
        ordered |= tied & bool_mask(pc.less(left, right))
        tied &= bool_mask(pc.equal(left, right))
    return bool((ordered | tied).all())


def check_row(row: Mapping[str, Any], index: int, what: str, where: tuple[str, str, int], corpus: bool) -> None:
    """One item row against its file and the contract; the first broken rule is a ContractError."""
    if (row.get("dataset"), row.get("transformation"), row.get("seed")) != where:
        raise ContractError(f"{what} item {index}: belongs to another dataset/transformation/seed")
    if (row.get("split") == CORPUS_TABLE) != corpus:
        raise ContractError(
            f"{what} item {index}: a {row.get('split')} text in the {'corpus' if corpus else 'items'} file"
        )
    if row.get("schema_version") != SCHEMA_VERSIONS["item"]:
        raise ContractError(
            f"{what} item {index}: schema_version {row.get('schema_version')!r}; a revision is "
            f"written in {SCHEMA_VERSIONS['item']}"
        )
    ItemRecord.from_row(row, what=f"{what} item {index}")  # the item schema, then the record against its attempts


def check_tables(tables: Mapping[Variant, pa.Table], corpus: bool) -> None:
    """Sorted item tables checked as one; the first broken rule is a ContractError worded for its row."""
    together = pa.concat_tables(tables.values())
    bad = suspect_rows(together)
    start = 0
    for (dataset, transformation, seed), table in tables.items():
        mine = bad[start : start + table.num_rows]
        mine |= ~(
            rows_equal(
                table, dataset=dataset, transformation=transformation, seed=seed, schema_version=SCHEMA_VERSIONS["item"]
            )
            & (bool_mask(pc.equal(table.column("split"), CORPUS_TABLE)) == corpus)
        )
        suspects = np.flatnonzero(mine).tolist()
        if suspects:
            what = file_what(dataset, transformation, seed, corpus)
            for index, row in zip(suspects, table.take(suspects).to_pylist()):
                check_row(row, index, what, (dataset, transformation, seed), corpus)
        start += table.num_rows


def file_what(dataset: str, transformation: str, seed: int, corpus: bool) -> str:
    return f"{'corpus of ' if corpus else ''}{dataset}/{split_name(transformation, seed)}"


def brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_columns(found: pa.Schema, what: str) -> None:
    """The file's columns are exactly the item schema's, with its Arrow types (arrow.py): a seed
    stored as 1337.0 passes the JSON Schema as an integer, not this."""
    expected = arrow_schema("item")
    for column in expected:
        index = found.get_field_index(column.name)
        if index < 0:
            raise IntegrityError(f"{what}: column {column.name!r} is missing")
        if not found.field(index).type.equals(column.type):
            raise IntegrityError(
                f"{what}: column {column.name!r} is {found.field(index).type}; the item schema stores {column.type}"
            )
    extra = [name for name in found.names if expected.get_field_index(name) < 0]
    if extra:
        raise IntegrityError(f"{what}: column {extra[0]!r} is not in the item schema")


def _plain(kind: pa.DataType) -> pa.DataType:
    """The type that holds the same values as `kind` in the item schema's spelling: dictionary-encoded
    values as themselves, large and view strings, binaries and lists as the plain ones, nested alike."""
    if pa.types.is_dictionary(kind):
        return _plain(kind.value_type)
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return pa.string()
    if pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind):
        return pa.binary()
    if (
        pa.types.is_list(kind)
        or pa.types.is_large_list(kind)
        or pa.types.is_list_view(kind)
        or pa.types.is_large_list_view(kind)
    ):
        value = kind.value_field
        return pa.list_(value.with_type(_plain(value.type)))
    if pa.types.is_struct(kind):
        return pa.struct([kind.field(i).with_type(_plain(kind.field(i).type)) for i in range(kind.num_fields)])
    return kind


def as_item_types(table: pa.Table, what: str) -> pa.Table:
    """An items file's table with each column of an equivalent Arrow type (`large_string`, dictionary-
    encoded strings, large lists: what polars and some `datasets` versions write) cast to the item
    schema's type, and every text checked as valid UTF-8 (Parquet's reader does not: a bad byte
    would end a later read in a UnicodeDecodeError). A column of another type is left for
    `check_columns` to refuse."""
    expected = arrow_schema("item")
    for index, name in enumerate(table.column_names):
        want = expected.field(name).type if expected.get_field_index(name) >= 0 else None
        column = table.column(index)
        if want is not None and not column.type.equals(want) and _plain(column.type).equals(want):
            table = table.set_column(index, table.field(index).with_type(want), column.cast(want))
    for name, column in zip(table.column_names, table.columns):
        _check_utf8(column, f"{what}: column {name!r}")
    return table


def _check_utf8(column: pa.ChunkedArray, what: str) -> None:
    """Every string of a column (nested ones too) valid UTF-8; the first that is not names its row
    where the column is flat."""
    start = 0
    for chunk in column.chunks:
        try:
            chunk.validate(full=True)
        except pa.ArrowInvalid as err:
            row = ""
            if pa.types.is_string(chunk.type):
                values = chunk.cast(pa.binary()).to_pylist()
                bad = next((i for i, v in enumerate(values) if v is not None and not _utf8(v)), None)
                row = "" if bad is None else f" row {start + bad + 1}"
            raise IntegrityError(f"{what}{row} holds text that is not valid UTF-8 ({first_line(err)})") from None
        start += len(chunk)


def _utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
