"""The one reader of YAML (issue 46): the packaged spec tables (datasets, transformations, noise scripts)
and a revision's eval.yaml. Safe loading only, never a Python object a document names; PyYAML's C
loader where it is built (the dataset table is read at every start). A document that does not parse,
or a file that cannot be read, is one line of the caller's error naming where it came from, so every
reader of the kind refuses alike. Refused besides, which PyYAML reads silently: a mapping naming one key
twice (the last value wins, so the row read is not the row shown: `task_type` twice), and aliases that
expand beyond MAX_NODES (a "billion laughs" document: PyYAML shares the aliased object, and whatever walks
the value, a schema check or a JSON dump, walks every copy). Anchors and aliases themselves are fine (the
transformation table shares its detector lists so).

tests/test_inputs.py fails when library code reads YAML anywhere else.

>>> loads("a: [1, 2]", "x.yaml")
{'a': [1, 2]}
>>> loads("a: [1", "x.yaml")
Traceback (most recent call last):
hteb_contract.errors.ContractError: x.yaml: not valid YAML (while parsing a flow sequence)
>>> loads("task_type: STS\\nname: x\\ntask_type: Retrieval", "x.yaml")
Traceback (most recent call last):
hteb_contract.errors.ContractError: x.yaml: not valid YAML (the key 'task_type' is given twice, line 3)
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from hteb_contract.errors import ContractError, first_line

#: The most nodes a document may expand to, its aliases counted as copies (the largest table: ~30,000).
MAX_NODES = 1_000_000


class _Refused(yaml.YAMLError):
    """A document PyYAML would read that the door refuses (a key given twice, too many nodes)."""


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The safe loader, refusing a key given twice and a document whose aliases expand beyond MAX_NODES."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_size(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *anchor`: the merged keys may be overridden, as YAML means it
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, (str, int, float, bool)) or key is None:
                if key in seen:
                    line = key_node.start_mark.line + 1
                    raise _Refused(f"the key {key!r} is given twice, line {line}")
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _children(node: yaml.Node) -> list[yaml.Node]:
    """A node's direct children: a sequence's items, a mapping's keys and values, none for a scalar."""
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_size(root: yaml.Node) -> None:
    """The number of nodes `root` expands to (each alias a copy of its anchor's node), counted once per node."""
    sizes: dict[int, int] = {}
    order, stack = [], [root]
    while stack:  # children before parents, each node once however often it is aliased
        node = stack.pop()
        if id(node) in sizes:
            continue
        sizes[id(node)] = 0
        order.append(node)
        stack += _children(node)
    for node in reversed(order):
        sizes[id(node)] = 1 + sum(sizes[id(child)] for child in _children(node))
        if sizes[id(node)] > MAX_NODES:
            raise _Refused(f"its aliases expand to more than {MAX_NODES:,} nodes")


def loads(text: str | bytes, where: str, error: Callable[[str], Exception] = ContractError) -> Any:
    """The YAML document `text` (text, or UTF-8 bytes) read from `where`; one that does not parse is `error`."""
    try:
        return yaml.load(text, Loader=_Loader)  # a safe loader: no Python object a document names
    except yaml.YAMLError as err:
        raise error(f"{where}: not valid YAML ({first_line(err)})") from None


def read(path: Path, error: Callable[[str], Exception] = ContractError) -> Any:
    """The YAML file at `path` (named by its file name, as the packaged tables are); unreadable: `error` too."""
    try:
        raw = Path(path).read_bytes()
    except OSError as err:
        raise error(f"{Path(path).name}: cannot be read ({err.strerror})") from None
    return loads(raw, Path(path).name, error)
