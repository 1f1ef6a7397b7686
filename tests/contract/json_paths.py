"""Paths into JSON-like objects, for tests that break one value of a real record or manifest."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

Path = tuple[str | int, ...]


def value_paths(obj: Any, prefix: Path = ()) -> Iterator[Path]:
    """The path of every value inside `obj`, nested ones included, `obj` itself (the empty path) aside."""
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, list):
        items = enumerate(obj)
    else:
        return
    for key, value in items:
        yield prefix + (key,)
        yield from value_paths(value, prefix + (key,))


def edited(obj: Any, path: Path, value: Any) -> Any:
    """A deep copy of `obj` with the value at `path` replaced by `value`."""
    copied = copy.deepcopy(obj)
    target = copied
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return copied
