"""Arrow schemas derived from the JSON Schemas, so every parquet file of one kind has one schema.

Why: `pa.Table.from_pylist` infers a column's type from the rows at hand, so a file whose judge
scores are all null gets a `null` column and the next file a `double` one, and
`datasets.load_dataset(revision, config)` (the Hub's dataset viewer too) fails to cast one split
to the other. Deriving the Arrow schema from the item JSON Schema gives every file the same
columns, in the schema's order, with the same types, whatever the rows hold.

>>> arrow_schema("item").field("judge").type.field("quality").type
DataType(double)
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import pyarrow as pa

from hteb_contract.validation import schema

_SCALARS = {"string": pa.string(), "integer": pa.int64(), "number": pa.float64(), "boolean": pa.bool_()}


def _resolve(spec: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = spec.get("$ref")
    if ref is None:
        return spec
    if not ref.startswith("#/$defs/"):
        raise ValueError(f"unsupported $ref {ref!r}")
    return _resolve(root["$defs"][ref[len("#/$defs/") :]], root)


def _arrow_type(spec: Mapping[str, Any], root: Mapping[str, Any]) -> pa.DataType:
    spec = _resolve(spec, root)
    if "const" in spec or "enum" in spec:
        values = [spec["const"]] if "const" in spec else spec["enum"]
        if all(isinstance(v, str) for v in values):
            return pa.string()
        raise ValueError(f"only string constants and enums have an Arrow type, got {values!r}")
    types = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    kinds = [t for t in types if t != "null"]
    if len(kinds) != 1:
        raise ValueError(f"a column needs exactly one non-null JSON type, got {types!r}")
    kind = kinds[0]
    if kind == "object":
        return pa.struct([pa.field(name, _arrow_type(sub, root)) for name, sub in spec["properties"].items()])
    if kind == "array":
        return pa.list_(_arrow_type(spec["items"], root))
    return _SCALARS[kind]


@cache
def arrow_schema(kind: str) -> pa.Schema:
    """The Arrow schema of a JSON Schema `kind` whose records are flat rows (e.g. "item")."""
    root = schema(kind)
    return pa.schema([pa.field(name, _arrow_type(spec, root)) for name, spec in root["properties"].items()])
