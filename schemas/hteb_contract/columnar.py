"""Item tables checked against the item JSON Schema column by column, with Arrow compute.

Why: checking 400,000 records one by one (`validation.validate`) spends most of a read or a
verify in Python. This module compiles the item JSON Schema itself (each version a reader
takes: `hteb.item/3`, and `hteb.item/2` as `READABLE` lists it) into Arrow predicates, so the
schema file stays the one contract and a keyword this compiler does not know is an error here,
not a rule silently skipped.

It answers one question: which rows *may* break their item schema (`suspect_rows`). The answer
is a superset of the rows that do: Arrow's RE2 is stricter than Python's `re` (`\\w` is ASCII,
`$` does not match before a final newline), so a string it refuses may still pass. It never
misses a bad row. A caller words a refusal by running the per-record check (`validate`, which
decides and words every verdict) on the suspect rows, in order: the fast path is for the all-good
table, and a refusal is the per-record one by construction.

Besides the schema's keywords it checks what `validate` checks around them (a version the
release reads, no NaN or infinity anywhere) and what `ItemRecord.contradiction` checks (the kept
text, errors and fallback against the attempts).

>>> from dataclasses import replace
>>> from hteb_contract.records import single_attempt
>>> from hteb_contract.item_table import records_table
>>> record = single_attempt(dataset="D", task_type="STS", subset="default", ref=("test", "0", "sentence1"),
...     source_language="eng", transformation="paraphrasing", seed=1, original_text="a b", output="b a",
...     generator_model="rule", prompt_hash="0" * 64)
>>> suspect_rows(records_table([record, replace(record, seed=2, fallback=True)])).tolist()
[False, True]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.validation import READABLE, SCHEMA_VERSIONS, schema

Mask = np.ndarray  # bool, one entry per element of the array it was computed on: True where it may be bad
Spec = Mapping[str, Any]

#: Keywords that say nothing about a value (annotations, the schema's own plumbing).
_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})


class UnsupportedSchema(ValueError):
    """The JSON Schema uses a keyword (or a form of one) that this compiler does not turn into Arrow checks."""


def _mask(values: pa.Array | pa.ChunkedArray, *, null: bool) -> Mask:
    """A boolean Arrow result as a numpy mask, nulls read as `null` (a file checks some 200 arrays,
    most without a null: skipping the fill there halves the check's Python overhead)."""
    filled = pc.fill_null(values, null) if values.null_count else values
    return filled.to_numpy(zero_copy_only=False).astype(bool, copy=False)


def _valid(array: pa.Array) -> Mask:
    return _mask(pc.is_valid(array), null=False) if array.null_count else np.ones(len(array), dtype=bool)


def _resolve(spec: Spec, root: Spec) -> Spec:
    ref = spec.get("$ref")
    if ref is None:
        return spec
    if not ref.startswith("#/$defs/") or len(spec) != 1:
        raise UnsupportedSchema(f"$ref {ref!r} (only a bare #/$defs/ reference)")
    return _resolve(root["$defs"][ref[len("#/$defs/") :]], root)


def _types(spec: Spec) -> set[str] | None:
    kind = spec.get("type")
    return None if kind is None else set(kind if isinstance(kind, list) else [kind])


def _json_types(array: pa.Array | pa.Table) -> set[str]:
    """The JSON types a non-null value of an Arrow column has (a table's rows are objects)."""
    if isinstance(array, pa.Table) or pa.types.is_struct(array.type):
        return {"object"}
    if pa.types.is_list(array.type):
        return {"array"}
    if pa.types.is_string(array.type):
        return {"string"}
    if pa.types.is_boolean(array.type):
        return {"boolean"}
    if pa.types.is_integer(array.type):
        return {"integer", "number"}
    if pa.types.is_floating(array.type):
        return {"number"}  # a float under "integer" is then suspect (1.0 would pass): no item rule asks that
    raise UnsupportedSchema(f"a column of Arrow type {array.type}")


def _gather(owners: np.ndarray, bad: Mask, size: int) -> Mask:
    """Child mask -> parent mask: a parent is suspect when any of its elements is."""
    out = np.zeros(size, dtype=bool)
    out[owners[bad]] = True
    return out


def _list_parts(array: pa.Array | pa.ChunkedArray) -> tuple[pa.Array | pa.ChunkedArray, np.ndarray]:
    """The flattened elements of a list array (null lists have none) and each one's row, counted
    across chunks (a table's column stays in its files' chunks: copying 400,000 attempts into one
    array cost more than checking them)."""
    lengths = pc.fill_null(pc.list_value_length(array), 0).to_numpy(zero_copy_only=False)
    return pc.list_flatten(array), np.repeat(np.arange(len(array)), lengths)


def _unique_items(array: pa.Array) -> Mask:
    """Lists holding a value twice (uniqueItems), for lists of scalars."""
    values, owners = _list_parts(array)
    if len(values) == 0:
        return np.zeros(len(array), dtype=bool)
    if pa.types.is_nested(values.type):
        raise UnsupportedSchema("uniqueItems on a list of lists or objects")
    pairs = pa.table({"row": owners, "value": values})
    counts = pairs.group_by(["row", "value"], use_threads=False).aggregate([([], "count_all")])
    twice = _mask(pc.greater(counts["count_all"], 1), null=False)
    return _gather(counts["row"].to_numpy(zero_copy_only=False), twice, len(array))


def _compare(op: str, bound: float) -> Callable[[pa.Array], pa.Array]:
    return lambda values: getattr(pc, op)(values, bound)


#: Value keywords whose rule is a predicate on non-null values: keyword -> (the predicate's maker, exact in Arrow).
_PREDICATES: dict[str, tuple[Callable[[Any], Callable[[pa.Array], pa.Array]], bool]] = {
    "minLength": (lambda n: lambda v: pc.greater_equal(pc.utf8_length(v), n), True),
    "maxLength": (lambda n: lambda v: pc.less_equal(pc.utf8_length(v), n), True),
    "pattern": (lambda p: lambda v: pc.match_substring_regex(v, p), False),  # RE2 is no Python `re`: see the docstring
    "minimum": (lambda b: _compare("greater_equal", b), True),
    "maximum": (lambda b: _compare("less_equal", b), True),
    "exclusiveMinimum": (lambda b: _compare("greater", b), True),
    "exclusiveMaximum": (lambda b: _compare("less", b), True),
    "minItems": (lambda n: lambda v: pc.greater_equal(pc.list_value_length(v), n), True),
    "maxItems": (lambda n: lambda v: pc.less_equal(pc.list_value_length(v), n), True),
}


def _breaks(rule: Callable[[pa.Array], pa.Array], array: pa.Array, valid: Mask) -> Mask:
    """Non-null elements for which `rule` does not hold. A string column is first tried on its
    distinct values: most item columns hold a few (one dataset, one prompt hash), so a sound file
    pays one hashing pass, not a regex per row."""
    if pa.types.is_string(array.type):
        distinct = pc.unique(array)
        if len(distinct) * 4 <= len(array) and _mask(rule(distinct), null=True).all():
            return np.zeros(len(array), dtype=bool)
    return valid & ~_mask(rule(array), null=True)


def _bad(spec: Spec, root: Spec, array: pa.Array | pa.Table, *, exact: bool = False) -> Mask:
    """Elements of `array` (rows of a table: the top-level objects) that may break `spec` (`exact`:
    that do; a keyword Arrow checks only approximately is then refused, as an `if` needs)."""
    spec = _resolve(spec, root)
    unknown = (
        set(spec)
        - _ANNOTATIONS
        - set(_PREDICATES)
        - {
            "type",
            "const",
            "enum",
            "properties",
            "required",
            "additionalProperties",
            "items",
            "uniqueItems",
            "if",
            "then",
            "else",
        }
    )
    if unknown:
        raise UnsupportedSchema(f"keyword {sorted(unknown)[0]!r}")
    table = isinstance(array, pa.Table)
    valid = np.ones(len(array), dtype=bool) if table else _valid(array)
    bad = np.zeros(len(array), dtype=bool)
    types = _types(spec)
    if types is not None and "null" not in types:
        bad |= ~valid
    if types is not None and not (types & _json_types(array)):
        bad |= valid  # a value of the column's type is none of the types allowed here (then: null, say)
    if "const" in spec or "enum" in spec:
        allowed = [spec["const"]] if "const" in spec else list(spec["enum"])
        if not all(isinstance(value, str) for value in allowed) or not pa.types.is_string(array.type):
            raise UnsupportedSchema(f"a constant or enum other than strings: {allowed!r}")
        value_set = pa.array(allowed, pa.string())
        bad |= ~valid | _breaks(lambda values: pc.is_in(values, value_set=value_set), array, valid)
    for keyword, (make, is_exact) in _PREDICATES.items():
        if keyword in spec:
            if exact and not is_exact:
                raise UnsupportedSchema(f"{keyword} inside an if (Arrow checks it approximately)")
            bad |= _breaks(make(spec[keyword]), array, valid)
    if "properties" in spec or "required" in spec:
        bad |= _bad_object(spec, root, array, valid, exact=exact)
    if "items" in spec or spec.get("uniqueItems"):
        if not pa.types.is_list(array.type):
            raise UnsupportedSchema(f"items or uniqueItems on Arrow type {array.type}")
        if "items" in spec:
            values, owners = _list_parts(array)
            bad |= _gather(owners, _bad(spec["items"], root, values, exact=exact), len(array))
        if spec.get("uniqueItems"):
            bad |= _unique_items(array)
    if "if" in spec:
        holds = ~_bad(spec["if"], root, array, exact=True)
        bad |= holds & _bad(spec.get("then", {}), root, array, exact=exact)
        bad |= ~holds & _bad(spec.get("else", {}), root, array, exact=exact)
    return bad


def _bad_object(spec: Spec, root: Spec, array: pa.Array | pa.Table, valid: Mask, *, exact: bool) -> Mask:
    """The keywords of an object over a struct array or a table (the top level): each property's
    rule on its column, where the object is not null. Arrow gives every row every column of the
    schema and no other (`arrow.arrow_schema`), so `required` and `additionalProperties: false`
    hold when the names agree."""
    names = array.column_names if isinstance(array, pa.Table) else [f.name for f in array.type]
    properties = spec.get("properties", {})
    missing = [name for name in spec.get("required", ()) if name not in names]
    extra = [name for name in names if name not in properties] if spec.get("additionalProperties") is False else []
    if missing or extra:
        raise UnsupportedSchema(f"an object whose Arrow fields {names} are not its properties")
    bad = np.zeros(len(array), dtype=bool)
    for name, sub in properties.items():
        if name in names:
            bad |= valid & _bad(sub, root, _column(array, name), exact=exact)
    return bad


def _column(array: pa.Array | pa.ChunkedArray | pa.Table, name: str) -> pa.Array | pa.ChunkedArray:
    """A field of a struct array, or a table's column as its files' chunks (never copied into one)."""
    return array.column(name) if isinstance(array, pa.Table) else pc.struct_field(array, name)


def _non_finite(array: pa.Array) -> Mask:
    """NaN and infinities anywhere in an array, nested ones included (no JSON number holds one)."""
    kind = array.type
    if pa.types.is_floating(kind):
        return _valid(array) & ~_mask(pc.is_finite(array), null=True)
    if pa.types.is_struct(kind):
        bad = np.zeros(len(array), dtype=bool)
        for index in range(kind.num_fields):
            bad |= _non_finite(pc.struct_field(array, [index]))
        return bad & _valid(array)
    if pa.types.is_list(kind):
        values, owners = _list_parts(array)
        return _gather(owners, _non_finite(values), len(array))
    return np.zeros(len(array), dtype=bool)


def _contradicted(table: pa.Table) -> Mask:
    """Rows that contradict their own attempts (`ItemRecord.contradiction`): the kept attempt is
    the first without errors, else the last; the kept text and errors are its, and fallback says
    whether every attempt has errors. Rows with no attempt, or nulls where a list is due, are suspect."""
    size = table.num_rows
    attempts = table.column("attempts")
    count = pc.fill_null(pc.list_value_length(attempts), 0).to_numpy(zero_copy_only=False).astype(np.int64)
    flat, owners = _list_parts(attempts)
    error_counts = pc.list_value_length(pc.struct_field(flat, "errors")).to_numpy(zero_copy_only=False)
    clean = np.nan_to_num(error_counts.astype(float), nan=1.0) == 0  # a null errors list is suspect elsewhere
    ends = np.cumsum(count)
    kept = ends - 1  # the last attempt of each row, as a position in `flat` (-1: the row has none)
    rows, first = np.unique(owners[clean], return_index=True)
    kept[rows] = np.flatnonzero(clean)[first]
    some = count > 0
    at = np.where(some, kept, 0)
    bad = ~some
    if len(flat) == 0:
        return bad
    kept_output, kept_errors = (pc.struct_field(flat, name) for name in ("output", "errors"))
    if len(flat) != size or (at != np.arange(size)).any():  # not one attempt a row: pick each row's kept one
        kept_output, kept_errors = (values.take(pa.array(at)) for values in (kept_output, kept_errors))
    bad |= ~_mask(pc.equal(table.column("transformed_text"), kept_output), null=False)
    bad |= _lists_differ(table.column("errors"), kept_errors)
    every = np.zeros(size, dtype=bool)
    every[some] = True
    every[rows] = False  # a row with a clean attempt
    fallback = table.column("fallback").combine_chunks()
    bad |= ~_valid(fallback) | (_mask(fallback, null=False) != every)
    return bad


def _lists_differ(left: pa.Array, right: pa.Array) -> Mask:
    """Rows whose two lists differ (a null list differs from everything)."""
    lengths = [pc.list_value_length(side).to_numpy(zero_copy_only=False) for side in (left, right)]
    both = _valid(left) & _valid(right)
    bad = ~both
    same_length = both & (np.nan_to_num(lengths[0].astype(float)) == np.nan_to_num(lengths[1].astype(float)))
    bad |= ~same_length
    keep = pa.array(same_length)
    values = [pc.list_flatten(side.filter(keep)) for side in (left, right)]
    unequal = ~_mask(pc.equal(values[0], values[1]), null=False)  # a null element is suspect
    owners = _list_parts(left.filter(keep))[1]
    bad[np.flatnonzero(same_length)[_gather(owners, unequal, int(same_length.sum()))]] = True
    return bad


def _item_schema(version: str) -> Spec:
    return schema("item", None if version == SCHEMA_VERSIONS["item"] else version)


def readable_versions() -> tuple[str, ...]:
    """The item versions a reader takes: the one written, then the older ones still read."""
    return (SCHEMA_VERSIONS["item"], *READABLE.get("item", {}))


def suspect_rows(table: pa.Table) -> Mask:
    """Rows of an item table that may break their item schema (each row against the schema of
    its own `schema_version`), hold a NaN or infinity, or contradict their attempts; a superset of
    those that do (see the module docstring). The table has the item Arrow schema (`arrow.py`)."""
    versions = _mask(pc.is_in(table.column("schema_version"), value_set=pa.array(readable_versions())), null=False)
    bad = ~versions
    for version in readable_versions():
        rows = _mask(pc.equal(table.column("schema_version"), version), null=False)
        if not rows.any():
            continue
        part = table if rows.all() else table.filter(pa.array(rows))
        spec = _item_schema(version)
        if _types(spec) != {"object"}:
            raise UnsupportedSchema(f"item schema {version}: the top level is not an object")
        bad[rows] |= _bad(spec, spec, part)
    for name, column in zip(table.column_names, table.columns):
        if pa.types.is_nested(column.type) or pa.types.is_floating(column.type):
            bad |= _non_finite(_column(table, name))
    bad |= _contradicted(table)
    return bad
