"""The one reader of JSON that comes from a file (issue 46): a manifest, a card, a part, a run's
records, an mteb result, a facts file, a model's configuration. Python's `json` accepts what no
JSON writer of ours writes and what a reader of a figure must not take silently: an object naming
one key twice (the last one wins, so the value read is not the value shown), `NaN` and `Infinity`
(not JSON), numbers beyond a float (read as infinity), integers of more digits than Python reads (a
ValueError of its own) and nesting that exhausts the stack. Here each
is a one-line error of the caller's kind, naming where the JSON came from; what passes is read
exactly as `json.loads` reads it.

tests/contract/test_json_input.py gives it generated documents of every kind; tests/test_inputs.py
fails when library code reads JSON anywhere else.

>>> loads('{"a": 1, "b": [1.5, null]}', "x.json")
{'a': 1, 'b': [1.5, None]}
>>> loads('{"a": 1, "a": 2}', "card.json")
Traceback (most recent call last):
hteb_contract.errors.ContractError: card.json: not valid JSON (the key 'a' is given twice in one object)
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hteb_contract.errors import ContractError


class _Refused(ValueError):
    """What the strict hooks raise; turned into the caller's error by `loads`."""


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _Refused(f"the key {key!r} is given twice in one object")
        found[key] = value
    return found


def _constant(name: str) -> Any:
    raise _Refused(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is beyond a float")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:  # past Python's limit on digits read (4300 by default): a ValueError of its own
        raise _Refused(f"the integer {text[:20]}... has {len(text.lstrip('-'))} digits, more than are read") from None


def loads(raw: str | bytes, where: str, error: Callable[[str], Exception] = ContractError, *, nan: bool = False) -> Any:
    """The JSON document `raw` (text, or UTF-8 bytes) read from `where`; anything not strict JSON is
    `error` (see the module docstring), one line naming `where`. `nan`: a bare NaN reads as a float NaN, for
    files of a writer that writes one (mteb's result files, where a metric could not be computed); the reader
    of its values refuses it where a number is needed."""
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
        constant = (lambda name: math.nan if name == "NaN" else _constant(name)) if nan else _constant
        return json.loads(
            text, object_pairs_hook=_unique_keys, parse_constant=constant, parse_float=_finite, parse_int=_integer
        )
    except (_Refused, json.JSONDecodeError, UnicodeDecodeError) as err:
        raise error(f"{where}: not valid JSON ({err})") from None
    except RecursionError:
        raise error(f"{where}: not valid JSON (nested too deeply)") from None


def load_object(
    raw: str | bytes, where: str, error: Callable[[str], Exception] = ContractError, *, nan: bool = False
) -> dict[str, Any]:
    """`loads`, for a document that must be one JSON object."""
    data = loads(raw, where, error, nan=nan)
    if not isinstance(data, dict):
        raise error(f"{where}: expected a JSON object")
    return data


def read(path: Path, error: Callable[[str], Exception] = ContractError, *, nan: bool = False) -> Any:
    """The JSON file at `path`; a file that cannot be read is `error` too."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise error(f"{path}: no such file") from None
    except OSError as err:
        raise error(f"{path}: cannot be read ({err.strerror})") from None
    return loads(raw, str(path), error, nan=nan)


def plain(value: Any) -> Any:
    """`value` as the JSON values it is written as and read back (tuples as lists, keys as strings): how a
    setting compares with what a file recorded of it."""
    return json.loads(json.dumps(value))
