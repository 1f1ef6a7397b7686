"""The one reader of YAML (issue 46): the packaged spec tables (datasets, transformations, noise scripts)
and a revision's eval.yaml. Safe loading only, never a Python object a document names; PyYAML's C
loader where it is built (the dataset table is read at every start). A document that does not parse,
or a file that cannot be read, is one line of the caller's error naming where it came from, so every
reader of the kind refuses alike.

tests/test_inputs.py fails when library code reads YAML anywhere else.

>>> loads("a: [1, 2]", "x.yaml")
{'a': [1, 2]}
>>> loads("a: [1", "x.yaml")
Traceback (most recent call last):
hteb_contract.errors.ContractError: x.yaml: not valid YAML (while parsing a flow sequence)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from hteb_contract.errors import ContractError, first_line

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def loads(text: str | bytes, where: str, error: Callable[[str], Exception] = ContractError) -> Any:
    """The YAML document `text` (text, or UTF-8 bytes) read from `where`; one that does not parse is `error`."""
    try:
        return yaml.load(text, Loader=_LOADER)  # a safe loader: no Python object a document names
    except yaml.YAMLError as err:
        raise error(f"{where}: not valid YAML ({first_line(err)})") from None


def read(path: Path, error: Callable[[str], Exception] = ContractError) -> Any:
    """The YAML file at `path` (named by its file name, as the packaged tables are); unreadable: `error` too."""
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise error(f"{Path(path).name}: cannot be read ({err.strerror})") from None
    return loads(raw, Path(path).name, error)
