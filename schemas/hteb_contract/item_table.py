"""Item records to an Arrow table and back, column by column, without checking either.

Why: `ItemRecord.to_row` / `from_row` go through one dict per record (and `asdict` copies every
attempt), which costs more than everything else a full-size revision's write or read does. These
two build the same table (`arrow.arrow_schema("item")`) and the same records column by column;
the checks stay with the callers (`columnar` on the table, `validation` on a suspect row).

A table row holds what `ItemRecord.to_row` writes, so `records_table(rs)` equals
`pa.Table.from_pylist([r.to_row() for r in rs], schema=arrow_schema("item"))`, and
`table_records` reads what `ItemRecord.from_row` reads, `hteb.item/2` upgraded (`records.upgraded`).
A value that JSON would not hold as its column's type (a bool as a number, bytes as a string, a
numpy integer) is a `NotPlain` error here, where Arrow would convert it: the caller then checks
record by record, as the JSON Schema sees the values.

>>> from hteb_contract.records import single_attempt
>>> record = single_attempt(dataset="D", task_type="STS", subset="default", ref=("test", "0", "sentence1"),
...     source_language="eng", transformation="paraphrasing", seed=1, original_text="a b", output="b a",
...     generator_model="rule", prompt_hash="0" * 64)
>>> table_records(records_table([record])) == [record]
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import fields
from itertools import chain
from operator import attrgetter
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.arrow import arrow_schema
from hteb_contract.records import RULE, Attempt, ItemRecord, Judge, Sampling, upgraded
from hteb_contract.validation import SCHEMA_VERSIONS

#: Python types a JSON value of an Arrow column's type arrives as (None aside, which the schema checks).
_PLAIN: dict[pa.DataType, frozenset[type]] = {
    pa.string(): frozenset({str}),
    pa.int64(): frozenset({int, float}),
    pa.float64(): frozenset({int, float}),
    pa.bool_(): frozenset({bool}),
}
_RECORD_FIELDS = tuple(f.name for f in fields(ItemRecord))
_ATTEMPT_FIELDS = tuple(f.name for f in fields(Attempt))


class NotPlain(TypeError):
    """A value whose Python type is not the JSON type its column stores."""


def _array(values: list[Any], kind: pa.DataType) -> pa.Array:
    found = set(map(type, values)) - {type(None)}
    if not found <= _PLAIN[kind]:
        raise NotPlain(f"{sorted(t.__name__ for t in found - _PLAIN[kind])} in a {kind} column")
    return pa.array(values, kind)


def _lists(values: Sequence[Sequence[Any]], kind: pa.ListType) -> pa.Array:
    """A list array of `values` (lists or tuples of plain values)."""
    if not set(map(type, values)) <= {list, tuple}:
        raise NotPlain(f"{kind} column of other than lists")
    offsets = np.zeros(len(values) + 1, dtype=np.int32)
    np.cumsum(list(map(len, values)), out=offsets[1:])
    return pa.ListArray.from_arrays(pa.array(offsets), _array(list(chain.from_iterable(values)), kind.value_type))


def _struct(objects: Sequence[Any], kind: pa.StructType, mask: np.ndarray | None = None) -> pa.StructArray:
    """A struct array of dataclass objects (None where `mask` is True)."""
    children = []
    present = [obj for obj in objects if obj is not None] if mask is not None and mask.any() else objects
    for child in kind:
        found = list(map(attrgetter(child.name), present))
        values = found if mask is None or len(present) == len(objects) else _spread(found, mask)
        children.append(_lists(values, child.type) if pa.types.is_list(child.type) else _array(values, child.type))
    return pa.StructArray.from_arrays(children, fields=list(kind), mask=None if mask is None else pa.array(mask))


def _spread(values: list[Any], mask: np.ndarray) -> list[Any]:
    """`values` at the places `mask` leaves False, None at the others."""
    out: list[Any] = [None] * len(mask)
    for at, value in zip(np.flatnonzero(~mask).tolist(), values):
        out[at] = value
    return out


def records_table(records: Sequence[ItemRecord]) -> pa.Table:
    """The records as an item table with `arrow_schema("item")`, `schema_version` the one written."""
    schema = arrow_schema("item")
    columns: dict[str, pa.Array] = {"schema_version": pa.array([SCHEMA_VERSIONS["item"]] * len(records), pa.string())}
    for name in _RECORD_FIELDS:
        kind = schema.field(name).type
        values = list(map(attrgetter(name), records))
        if name == "attempts":
            if not set(map(type, values)) <= {tuple, list}:
                raise NotPlain("attempts of other than lists")
            flat = list(chain.from_iterable(values))
            if not set(map(type, flat)) <= {Attempt}:
                raise NotPlain("an attempt that is not an Attempt")
            offsets = np.zeros(len(values) + 1, dtype=np.int32)
            np.cumsum(list(map(len, values)), out=offsets[1:])
            columns[name] = pa.ListArray.from_arrays(pa.array(offsets), _struct(flat, kind.value_type))
        elif name in ("sampling", "judge"):
            if not set(map(type, values)) <= {Sampling, Judge, type(None)}:
                raise NotPlain(f"{name} of another type")
            columns[name] = _struct(values, kind, np.array([v is None for v in values], dtype=bool))
        elif pa.types.is_list(kind):
            columns[name] = _lists(values, kind)
        else:
            columns[name] = _array(values, kind)
    return pa.table(columns, schema=schema)


def single_attempt_table(
    *,
    dataset: str,
    task_type: str,
    transformation: str,
    seed: int,
    generator_model: str,
    prompt_hash: str,
    columns: dict[str, list[str]],
) -> pa.Table:
    """The item table of `records.single_attempt` records without errors or target language, one per
    row of `columns` (split, item_id, field, subset, source_language, original_text, transformed_text):
    `records_table` of those records, built without an object per record.

    Why: the noise rules make each text in one step, 419,000 of them for noise-1339; building a record
    and then reading its 30 attributes back cost more than checking and encoding the file."""
    size = len(columns["original_text"])
    texts = {
        name: pa.array(columns[name], pa.string())
        for name in ("split", "item_id", "field", "subset", "source_language", "original_text", "transformed_text")
    }
    output = texts["transformed_text"]
    one_each = pa.array(np.arange(size + 1, dtype=np.int32))
    none_each = pa.array(np.zeros(size + 1, dtype=np.int32))
    kind = arrow_schema("item").field("attempts").type.value_type
    attempt = pa.StructArray.from_arrays(
        [
            pa.array(np.zeros(size, dtype=np.int64)),
            pa.array(np.full(size, seed, dtype=np.int64)),
            pa.ListArray.from_arrays(one_each, output),
            pa.ListArray.from_arrays(one_each, pa.nulls(size, pa.string())),
            pa.ListArray.from_arrays(none_each, pa.array([], pa.string())),
            output,
            pa.ListArray.from_arrays(none_each, pa.array([], pa.string())),
        ],
        fields=list(kind),
    )
    judge = arrow_schema("item").field("judge").type
    constant = {
        "schema_version": SCHEMA_VERSIONS["item"],
        "dataset": dataset,
        "task_type": task_type,
        "transformation": transformation,
        "generator_model": generator_model,
        "prompt_set": RULE,
        "prompt_template_id": transformation,
        "prompt_hash": prompt_hash,
    }
    values: dict[str, pa.Array] = {
        **{name: pa.array([value] * size, pa.string()) for name, value in constant.items()},
        **texts,
        "seed": pa.array(np.full(size, seed, dtype=np.int64)),
        **{
            name: pa.nulls(size, pa.string())
            for name in ("target_language", "intermediate_language", "generator_revision")
        },
        "sampling": pa.nulls(size, arrow_schema("item").field("sampling").type),
        "attempts": pa.ListArray.from_arrays(one_each, attempt),
        "errors": pa.ListArray.from_arrays(none_each, pa.array([], pa.string())),
        "judge": pa.StructArray.from_arrays([pa.nulls(size, child.type) for child in judge], fields=list(judge)),
        "fallback": pa.array(np.zeros(size, dtype=bool)),
    }
    return pa.table([values[name] for name in arrow_schema("item").names], schema=arrow_schema("item"))


def _grouped(values: list[Any], lengths: np.ndarray) -> list[tuple[Any, ...]]:
    """`values` cut into consecutive tuples of `lengths`."""
    if len(lengths) and (lengths == lengths[0]).all():  # every list as long: the usual (no errors, one step)
        width = int(lengths[0])
        return list(zip(*(values[at::width] for at in range(width)))) if width else [()] * len(lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    return [tuple(values[start:end]) for start, end in zip(offsets, offsets[1:])]


def _tuples(array: pa.Array) -> list[tuple[Any, ...]]:
    """A list array as Python tuples (a null list as an empty one: the schema refused it before)."""
    lengths = pc.fill_null(pc.list_value_length(array), 0).to_numpy(zero_copy_only=False)
    return _grouped(pc.list_flatten(array).to_pylist(), lengths)


def _objects(array: pa.Array, make: type, names: Iterable[str], *, shared: bool = False) -> list[Any]:
    """A struct array as dataclass objects built from its fields `names` (None where the struct is
    null); `shared`: equal objects are one (frozen, so safe), built once each, for fields few values fill."""
    columns = [
        _tuples(pc.struct_field(array, name))
        if pa.types.is_list(array.type.field(name).type)
        else pc.struct_field(array, name).to_pylist()
        for name in names
    ]
    if shared:
        built: dict[tuple[Any, ...], Any] = {}
        objects = [built[key] if key in built else built.setdefault(key, make(*key)) for key in zip(*columns)]
    else:
        objects = list(map(make, *columns))
    if array.null_count:
        objects = [obj if valid else None for obj, valid in zip(objects, array.is_valid().to_pylist())]
    return objects


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a table's records are built: building some
    100,000 objects that hold no cycle otherwise runs it over the whole heap again and again
    (40% of `table_records` on a 19,000-row file)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def table_records(table: pa.Table) -> list[ItemRecord]:
    """The records of an item table that passed its checks (`hteb.item/2` rows upgraded, as `from_row` does)."""
    with _collector_paused():
        return _records(table.combine_chunks())


def _records(table: pa.Table) -> list[ItemRecord]:
    column = {name: table.column(name).combine_chunks() for name in table.column_names}
    attempts = column["attempts"]
    flat = _objects(pc.list_flatten(attempts), Attempt, _ATTEMPT_FIELDS)
    values: dict[str, list[Any]] = {
        "attempts": _grouped(flat, pc.fill_null(pc.list_value_length(attempts), 0).to_numpy(zero_copy_only=False)),
        "errors": _tuples(column["errors"]),
        "judge": _objects(column["judge"], Judge, ("model", "quality", "fluency", "parapluie"), shared=True),
        "sampling": _objects(column["sampling"], Sampling, ("temperature", "top_p", "max_tokens"), shared=True),
    }
    for name in _RECORD_FIELDS:
        if name not in values:
            values[name] = column[name].to_pylist()
    versions = set(column["schema_version"].unique().to_pylist())
    if versions != {SCHEMA_VERSIONS["item"]}:
        pairs = map(
            upgraded,
            column["schema_version"].to_pylist(),
            values["prompt_set"],
            values["generator_revision"],
            values["sampling"],
        )
        values["generator_revision"], values["sampling"] = (
            (list(v) for v in zip(*pairs)) if table.num_rows else ([], [])
        )
    return list(map(ItemRecord, *(values[name] for name in _RECORD_FIELDS)))
