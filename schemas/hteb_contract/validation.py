"""The JSON Schemas in `schemas/` are the contract between hteb-generate and hteb-score.

Every item record, manifest and result card is validated when written and when read. A JSON
Schema `number` is a JSON number, so NaN and the infinities (which Python's json and pyarrow
carry) are refused anywhere in an object, free-form parts included (a manifest's `config`).

jsonschema (the reference implementation) decides and words every refusal; jsonschema-rs, a
compiled validator about 80 times faster, accepts the valid objects first, which is what makes
reading a full-size revision's 400,000 records cheap. An object the fast validator refuses, or
cannot take, goes to jsonschema, so a verdict never rests on jsonschema-rs alone except "valid",
and the tests hold the two to the same verdicts. Whole item files are checked column by column
first (`hteb_contract.columnar`, compiled from the same schema files); `validate` words what it
cannot clear.

The task types are not written into the schema files: a schema's `$defs/task_type` is a string
there, and `schema` adds the names of the contract's task table (hteb_contract.tasks.TASK_TYPES) as
its enum when it loads the file, so a task type is defined once and an unknown one is still refused.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
from jsonschema import Draft202012Validator

from hteb_contract.common import json_input
from hteb_contract.errors import ContractError
from hteb_contract.tasks import TASK_TYPES

SCHEMA_DIR = Path(__file__).resolve().parent / "json"

SCHEMAS: dict[str, str] = {
    "item": "item.v3.schema.json",
    "manifest": "manifest.v2.schema.json",
    "result_card": "result_card.v1.schema.json",
    "comparison": "comparison.v1.schema.json",
    "reproduction": "reproduction.v1.schema.json",
}

SCHEMA_VERSIONS: dict[str, str] = {
    "item": "hteb.item/3",
    "manifest": "hteb.manifest/2",
    "result_card": "hteb.card/1",
    "comparison": "hteb.comparison/1",
    "reproduction": "hteb.reproduction/1",
}


#: Older versions this release still reads (each with its own schema file); what a reader makes of
#: such an object is its reader's job (`hteb_contract.records.ItemRecord.from_row` upgrades an
#: `hteb.item/2` record). Writers always write `SCHEMA_VERSIONS`.
READABLE: dict[str, dict[str, str]] = {
    "item": {"hteb.item/2": "item.v2.schema.json"},
}


def schema(kind: str, version: str | None = None) -> dict[str, Any]:
    """The parsed JSON Schema of `kind` (item, manifest, result_card) at `version` (default: the one
    written), its `$defs/task_type` (where it has one) an enum of the task table's names."""
    return _schema(kind, version, _task_types())


def _task_types() -> tuple[str, ...]:
    """The task table's names: part of every cache key below, so a task type added later is seen."""
    return tuple(TASK_TYPES.names())


@cache
def _schema(kind: str, version: str | None, task_types: tuple[str, ...]) -> dict[str, Any]:
    if kind not in SCHEMAS:
        raise ContractError(f"unknown schema kind {kind!r}; known: {', '.join(SCHEMAS)}")
    name = SCHEMAS[kind] if version in (None, SCHEMA_VERSIONS[kind]) else READABLE[kind][version]
    spec = json_input.read(SCHEMA_DIR / name)
    if "task_type" in spec.get("$defs", {}):
        spec["$defs"]["task_type"]["enum"] = list(task_types)
    return spec


@cache
def _validator(kind: str, version: str | None, task_types: tuple[str, ...]) -> Draft202012Validator:
    spec = _schema(kind, version, task_types)
    Draft202012Validator.check_schema(spec)
    return Draft202012Validator(spec, format_checker=Draft202012Validator.FORMAT_CHECKER)


@cache
def _fast_validator(kind: str, version: str | None, task_types: tuple[str, ...]) -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(_schema(kind, version, task_types), validate_formats=True)


def _fast_valid(kind: str, version: str | None, obj: Any) -> bool:
    """True when jsonschema-rs finds `obj` valid; False when it finds an error or cannot take the value
    (an integer past 64 bits, a type it does not convert): jsonschema then decides."""
    try:
        return _fast_validator(kind, version, _task_types()).is_valid(obj)
    except (ValueError, TypeError, OverflowError):
        return False


def _describe(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    message = error.message if len(error.message) <= 200 else error.message[:197] + "..."
    return f"{where}: {message}"


def non_finite(value: Any, where: str = "") -> tuple[str, float] | None:
    """(path, value) of the first NaN or infinity in a JSON-like value, else None."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (where, value)
    if isinstance(value, Mapping):
        items: Iterable[tuple[Any, Any]] = value.items()
    elif isinstance(value, (list, tuple)):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = non_finite(item, f"{where}/{key}" if where else str(key))
        if found is not None:
            return found
    return None


def check_finite(obj: Any, *, what: str) -> None:
    """Raise ContractError naming `what` and the path of the first NaN or infinity (no JSON holds one)."""
    bad = non_finite(obj)
    if bad is not None:
        where, value = bad
        raise ContractError(
            f"{what}: {where or '(top level)'}: {value} is not a finite number (NaN and infinities are not JSON)"
        )


def validate(kind: str, obj: Mapping[str, Any], *, what: str) -> None:
    """Raise ContractError naming `what` and the first violated rule, on one line.

    An object of an older version this release still reads (`READABLE`) is checked against its own
    schema; one of any other version is reported as such, not as a list of field errors.
    """
    found = obj.get("schema_version") if isinstance(obj, Mapping) else None
    if found is not None and not isinstance(found, str):  # a list or object is no version (and not hashable)
        raise ContractError(f"{what}: schema_version must be a string, got {type(found).__name__} {found!r:.60}")
    expected = SCHEMA_VERSIONS[kind]
    older = READABLE.get(kind, {})
    if found is not None and found != expected and found not in older:
        readable = " or ".join(repr(v) for v in (expected, *older))
        raise ContractError(
            f"{what}: schema version {found!r} is not supported: this version of hteb reads "
            f"{readable} (an older or newer release wrote it; regenerate it, or read it with that "
            f"release)"
        )
    version = found if found in older else None
    check_finite(obj, what=what)
    if _fast_valid(kind, version, obj):
        return
    error = jsonschema.exceptions.best_match(_validator(kind, version, _task_types()).iter_errors(obj))
    if error is not None:
        raise ContractError(f"{what}: does not match the {kind} schema: {_describe(error)}")
