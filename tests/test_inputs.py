"""Every JSON a command reads passes the one door (hteb_contract/common/json_input.py, issue 46): an
AST scan of the three packages finds no call of `json.loads` or `json.load` anywhere else, but for
the places listed here with why they are not reading a file's JSON."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = [REPO / "schemas" / "hteb_contract", REPO / "score" / "hteb_score", REPO / "generate" / "hteb_generate"]
DOOR = "hteb_contract/common/json_input.py"
#: Modules that call `json` themselves, and why that is not reading a file's JSON.
NOT_A_FILE = {
    "hteb_generate/checks/detector_rules.py": "the json_fragment detector asks whether an LLM's output parses as "
    "Python's json parses it; refusing more would change which records are flagged",
    "hteb_generate/engine/cache.py": "the LLM call cache reads back what it wrote itself, and a log-probability "
    "may be -Infinity there",
}


def _json_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("loads", "load")
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "json"
    ]


def test_json_is_read_through_the_one_door():
    found = {}
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            name = path.relative_to(package.parent).as_posix()
            lines = _json_calls(path)
            if lines and name != DOOR:
                found[name] = lines
    assert set(found) == set(NOT_A_FILE), {k: v for k, v in found.items() if k not in NOT_A_FILE}


def test_the_scan_finds_a_call(tmp_path):
    """A test of the test: the scan sees each spelling the packages use."""
    probe = tmp_path / "probe.py"
    probe.write_text("import json\nx = json.loads('1')\nwith open('f') as f:\n    y = json.load(f)\n", encoding="utf-8")
    assert _json_calls(probe) == [2, 4]
