"""One door per kind of input and output (issue 46): library code reads JSON, YAML, Parquet, SQLite and CSV,
and creates or replaces a file, only in the modules listed for that kind here, so a fix to a door holds for
the whole kind. An AST scan of the three packages finds every call of each kind (names resolved through the
module's imports: `pq.read_table` is `pyarrow.parquet.read_table`); a module outside the doors that makes one
is listed under `elsewhere` with why, and a listed module that no longer makes one fails too.

docs/inputs-and-outputs.md holds the doors' table this module renders from KINDS (`python
tests/test_inputs.py` writes it again), every command's options as click declares them and every
environment value the packages name.
"""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import click
import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGES = [REPO / "schemas" / "hteb_contract", REPO / "score" / "hteb_score", REPO / "generate" / "hteb_generate"]
PAGE = REPO / "docs" / "inputs-and-outputs.md"


@dataclass(frozen=True)
class Call:
    """A call as the scan sees it: the dotted name it resolves to through imports (None: a method of a value),
    the method's name when it is one, and the node (its arguments)."""

    name: str | None
    method: str | None
    node: ast.Call


def _imports(tree: ast.Module) -> dict[str, str]:
    """Local name -> the dotted name it stands for (`import pyarrow.parquet as pq`: pq -> pyarrow.parquet)."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".")[0]
                names[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
    return names


def _resolve(func: ast.expr, imports: Mapping[str, str]) -> str | None:
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return None
    if func.id not in imports:
        return None if parts else func.id  # a builtin (open), or a method of a local value
    return ".".join([imports[func.id], *reversed(parts)])


def calls(source: str) -> list[Call]:
    tree = ast.parse(source)
    imports = _imports(tree)
    return [
        Call(_resolve(node.func, imports), node.func.attr if isinstance(node.func, ast.Attribute) else None, node)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    ]


# --- spellings: what makes a call one of a kind ---------------------------------------------------------------


def named(*names: str) -> Callable[[Call], bool]:
    return lambda call: call.name in names


def _argument(call: Call, position: int, keyword: str) -> ast.expr | None:
    given = [k.value for k in call.node.keywords if k.arg == keyword]
    return given[0] if given else (call.node.args[position] if len(call.node.args) > position else None)


def _mode_writes(mode: ast.expr | None, *, unknown: bool) -> bool:
    """Whether an open mode writes; `unknown`: what a mode the scan cannot read counts as."""
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(set(mode.value) & set("wax+"))
    return unknown


#: os.open flags that write, create or truncate.
WRITE_FLAGS = {"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"}
#: Calls that create, replace or link a file whatever their arguments.
WRITE_CALLS = named(
    "os.replace",
    "os.rename",
    "os.link",
    "os.symlink",
    "shutil.copy",
    "shutil.copy2",
    "shutil.copyfile",
    "shutil.copytree",
    "shutil.move",
    "tempfile.mkstemp",
    "tempfile.NamedTemporaryFile",
    "torch.onnx.export",
)
#: Methods that write a file whatever they are called on (pathlib's; transformers' save_pretrained).
WRITE_METHODS = {"write_text", "write_bytes", "touch", "rename", "symlink_to", "hardlink_to", "save_pretrained"}


def writes(call: Call) -> bool:
    """Whether a call creates, replaces or writes into a file. `open` and `os.fdopen` with a mode that is not a
    literal count as writing; a method `open` only with a literal writing mode (`Revision.open(folder)` reads);
    `.replace(x)` with one argument is pathlib's (str.replace takes two)."""
    if WRITE_CALLS(call) or call.method in WRITE_METHODS:
        return True
    if call.name in ("open", "io.open", "os.fdopen"):
        return _mode_writes(_argument(call, 1, "mode"), unknown=True)
    if call.name == "os.open":  # flags spelled as os.O_* names only, none of them writing
        flags = _argument(call, 1, "flags")
        parts = list(ast.walk(flags)) if flags is not None else []
        spelled = {n.attr for n in parts if isinstance(n, ast.Attribute)}
        plain = bool(parts) and all(
            isinstance(n, (ast.BinOp, ast.BitOr, ast.Attribute, ast.Load)) or (isinstance(n, ast.Name) and n.id == "os")
            for n in parts
        )
        return not plain or bool(spelled & WRITE_FLAGS)
    if call.name == "numpy.memmap":  # numpy's default mode, r+, writes
        mode = _argument(call, 2, "mode")
        return mode is None or _mode_writes(mode, unknown=True)
    if call.method == "open" and call.name is None:
        return _mode_writes(_argument(call, 0, "mode"), unknown=False)
    return call.method == "replace" and len(call.node.args) == 1 and not call.node.keywords


class Door(NamedTuple):
    """What passes a door, and the tests that give it generated input (none yet: an empty tuple)."""

    what: str
    fuzzed_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Kind:
    """A kind of input or output: its spellings, its doors (module -> Door), the modules that make a call of it
    elsewhere (module -> why), and a probe: source whose lines ending `# found` are exactly those the scan
    must find."""

    title: str
    finds: Callable[[Call], bool]
    doors: Mapping[str, Door]
    elsewhere: Mapping[str, str]
    probe: str


KINDS = {
    "json": Kind(
        "JSON read",
        named("json.load", "json.loads"),
        {
            "hteb_contract/common/json_input.py": Door(
                "manifests, cards, parts, run records, mteb results, facts files",
                ("tests/contract/test_json_input.py",),
            )
        },
        {
            "hteb_generate/checks/detector_rules.py": "the json_fragment detector asks whether an LLM's output "
            "parses as Python's json parses it; refusing more would change which records are flagged",
            "hteb_generate/engine/cache.py": "the LLM call cache reads back what it wrote itself, and a "
            "log-probability may be -Infinity there",
        },
        "import json\nfrom json import load\njson.loads(t)  # found\nload(f)  # found\njson.dumps(x)\n",
    ),
    "yaml": Kind(
        "YAML read",
        named(*(f"yaml.{f}" for f in ("load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all"))),
        {
            "hteb_contract/common/yaml_input.py": Door(
                "the spec tables (datasets, transformations, noise scripts), eval.yaml",
                ("tests/contract/test_yaml_input.py",),
            )
        },
        {},
        "import yaml\nfrom yaml import safe_load as s\n"
        "yaml.load(t, Loader=yaml.CSafeLoader)  # found\nyaml.safe_load(t)  # found\ns(t)  # found\n"
        "yaml.safe_dump(x)\n",
    ),
    "parquet": Kind(
        "Parquet read or encoded",
        named(
            *(f"pyarrow.parquet.{f}" for f in ("read_table", "ParquetFile", "read_metadata", "read_schema")),
            *(f"pyarrow.parquet.{f}" for f in ("ParquetDataset", "write_table", "ParquetWriter")),
            "pandas.read_parquet",
            "datasets.load_dataset",
            "datasets.load_from_disk",
        ),
        {
            "hteb_contract/parquet_io.py": Door(
                "item and source tables, footers (rows, schema), items and outcomes files",
                ("tests/contract/test_columnar.py",),
            )
        },
        {
            "hteb_generate/sources/hub_sources.py": "the Hub's source datasets, loaded as mteb loads them "
            "(datasets.load_dataset); the rows are checked as a source copy's are",
            "hteb_generate/revision/card_configs.py": "checks that a revision's card loads as a user loads it: "
            "datasets.load_dataset is the thing checked",
        },
        "import pyarrow.parquet as pq\nimport datasets\nimport pandas as pd\n"
        "pq.read_table(p)  # found\npq.ParquetFile(p)  # found\npq.read_metadata(h)  # found\n"
        "pq.read_schema(p)  # found\npq.write_table(t, b)  # found\ndatasets.load_dataset(r)  # found\n"
        "pd.read_parquet(p)  # found\npq.FileMetaData\n",
    ),
    "sqlite": Kind(
        "SQLite opened",
        named("sqlite3.connect"),
        {
            "hteb_contract/common/sqlite_wal.py": Door(
                "the LLM call cache, the embedding cache", ("tests/contract/test_sqlite_wal.py",)
            )
        },
        {},
        "import sqlite3\nfrom sqlite3 import connect\nsqlite3.connect(p)  # found\nconnect(p)  # found\n"
        "sqlite3.Error()\n",
    ),
    "csv": Kind(
        "CSV read",
        named("csv.reader", "csv.DictReader", "pandas.read_csv"),
        {
            "hteb_contract/common/csv_input.py": Door(
                "compare's --scores-table, the paper's typed-in totals", ("tests/contract/test_csv_input.py",)
            )
        },
        {},
        "import csv\nimport pandas as pd\ncsv.reader(f)  # found\ncsv.DictReader(f)  # found\n"
        "pd.read_csv(p)  # found\ncsv.writer(out)\n",
    ),
    "write": Kind(
        "File written",
        writes,
        {
            "hteb_contract/common/atomic.py": Door(
                "one file, replaced whole: a temporary file beside it, fsync, rename",
                ("tests/contract/test_atomic.py",),
            ),
            "hteb_contract/common/output_set.py": Door(
                "files that say one thing (a page and its CSV), replaced together",
                ("tests/contract/test_output_set.py",),
            ),
            "hteb_contract/common/locks.py": Door("lock files (the holder's pid)", ("tests/contract/test_locks.py",)),
            "hteb_score/cli/output.py": Door(
                "a run's --out folder, staged beside it and renamed into place whole",
                ("tests/score/report/test_bad_compare.py", "tests/score/report/test_outputs_interrupted.py"),
            ),
            "hteb_contract/stores/local.py": Door(
                "a published revision, copied in whole, and its label, linked once",
                ("tests/contract/test_local_store_input.py",),
            ),
        },
        {
            "hteb_score/encoding/backends.py": "an ONNX export: torch and onnxruntime write the file at a path "
            "they are given (with a data file beside it); renamed into place",
            "hteb_generate/engine/models.py": "a model conversion: transformers' save_pretrained writes a folder, "
            "renamed into place under the conversion's lock",
            "hteb_score/encoding/vector_store.py": "a memory-mapped scratch file of vectors in a private "
            "temporary folder, removed when the run ends; no output",
        },
        "import os, shutil, tempfile\nimport numpy as np\nfrom pathlib import Path\n"
        "open(p, 'w')  # found\nopen(p, mode)  # found\nopen(p)\nopen(p, 'rb')\n"
        "Path(p).open('a')  # found\nRevision.open(folder)\nos.fdopen(fd, 'wb')  # found\nos.fdopen(fd, 'rb')\n"
        "os.open(p, os.O_RDWR | os.O_CREAT, 0o666)  # found\nos.open(p, flags)  # found\nos.open(p, os.O_RDONLY)\n"
        "p.write_text(t)  # found\np.write_bytes(b)  # found\ntempfile.mkstemp(dir=d)  # found\n"
        "tempfile.mkdtemp()\nshutil.copytree(a, b)  # found\nos.replace(a, b)  # found\nos.rename(a, b)  # found\n"
        "os.link(a, b)  # found\nnp.memmap(p, dtype=f, mode='w+')  # found\nnp.memmap(p, mode='r')\n"
        "model.save_pretrained(d)  # found\np.replace(q)  # found\nt.replace('a', 'b')\n",
    ),
}


def module_files() -> dict[str, Path]:
    return {path.relative_to(package.parent).as_posix(): path for package in PACKAGES for path in package.rglob("*.py")}


def found(kind: Kind, source: str) -> list[int]:
    return sorted({call.node.lineno for call in calls(source) if kind.finds(call)})


@pytest.mark.parametrize("name", KINDS)
def test_each_kind_is_read_or_written_through_its_doors_only(name):
    kind = KINDS[name]
    makers = {m for m, path in module_files().items() if found(kind, path.read_text(encoding="utf-8"))}
    outside = makers - set(kind.doors)
    assert outside == set(kind.elsewhere), {
        "not a door and not listed": sorted(outside - set(kind.elsewhere)),
        "listed but no longer a maker": sorted(set(kind.elsewhere) - outside),
    }
    assert set(kind.doors) <= makers, f"a door that makes no {kind.title}: {sorted(set(kind.doors) - makers)}"


@pytest.mark.parametrize("name", KINDS)
def test_the_scan_finds_each_spelling(name):
    """A test of the test: each spelling the packages use is found, and the look-alikes are not."""
    kind = KINDS[name]
    lines = kind.probe.splitlines()
    assert found(kind, kind.probe) == [at for at, line in enumerate(lines, 1) if line.endswith("# found")]


@pytest.mark.parametrize("door", [d for kind in KINDS.values() for d in kind.doors if kind.doors[d].fuzzed_by])
def test_a_doors_tests_give_it_generated_input(door):
    """Each test named as fuzzing a door draws examples (Hypothesis) and imports that door."""
    (fuzzed_by,) = [kind.doors[door].fuzzed_by for kind in KINDS.values() if door in kind.doors]
    module = Path(door).with_suffix("").as_posix().replace("/", ".")
    for test in fuzzed_by:
        text = (REPO / test).read_text(encoding="utf-8")
        imported = _imports(ast.parse(text)).values()
        assert "@given" in text and any(name == module or name.startswith(f"{module}.") for name in imported), test


# --- the page -------------------------------------------------------------------------------------------------

DOORS_START, DOORS_END = "<!-- doors: written by tests/test_inputs.py -->", "<!-- end of doors -->"
OPTIONS_START, OPTIONS_END = "<!-- options: written by tests/test_inputs.py -->", "<!-- end of options -->"
#: An environment value's name as the packages spell it.
ENV_NAME = re.compile(r"(?:HF|HTEB|HUGGING_FACE|VLLM|RAY|PYTORCH)_[A-Z0-9_]+")


def doors_table() -> str:
    rows = ["| Kind | Door | What passes it | Generated-input test |", "|---|---|---|---|"]
    for kind in KINDS.values():
        for module, door in kind.doors.items():
            tests = ", ".join(f"`{t}`" for t in door.fuzzed_by) or "none yet"
            rows.append(f"| {kind.title} | `{module}` | {door.what} | {tests} |")
    rows += ["", "Made elsewhere, and why:", "", "| Kind | Module | Why it is not a door |", "|---|---|---|"]
    rows += [f"| {k.title} | `{module}` | {why} |" for k in KINDS.values() for module, why in k.elsewhere.items()]
    return "\n".join(rows)


def _commands() -> dict[str, click.Group]:
    from hteb_generate.cli.app import cli as generate
    from hteb_score.cli.app import cli as score

    return {"hteb-generate": generate, "hteb-score": score}


def options_table() -> str:
    rows = ["| Command | Arguments and options |", "|---|---|"]
    for program, group in _commands().items():
        for name, command in group.commands.items():
            params = [p.opts[0] if isinstance(p, click.Option) else p.name.upper() for p in command.params]
            rows.append(f"| `{program} {name}` | {', '.join(f'`{p}`' for p in params)} |")
    return "\n".join(rows)


def _filled(text: str, start: str, end: str, table: str) -> str:
    head, rest = text.split(start, 1)
    return f"{head}{start}\n{table}\n{end}{rest.split(end, 1)[1]}"


def generated(text: str) -> str:
    """The page with its generated sections rendered again from this module."""
    text = _filled(text, DOORS_START, DOORS_END, doors_table())
    return _filled(text, OPTIONS_START, OPTIONS_END, options_table())


def test_the_page_is_rendered_from_this_test():
    text = PAGE.read_text(encoding="utf-8")
    assert text == generated(text), "docs/inputs-and-outputs.md is stale: run python tests/test_inputs.py"


def test_the_page_names_every_command_and_environment_value():
    text = PAGE.read_text(encoding="utf-8")
    before = text.split(OPTIONS_START, 1)[0]  # the hand-written tables, not the generated one
    commands = [f"`{program} {name}`" for program, group in _commands().items() for name in group.commands]
    assert [c for c in commands if c not in before] == []
    named_here = {
        node.value
        for path in module_files().values()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and ENV_NAME.fullmatch(node.value)
    }
    assert sorted(n for n in named_here if f"`{n}`" not in text) == []


if __name__ == "__main__":  # write the generated sections of the page again
    sys.path[:0] = [str(REPO / "schemas"), str(REPO / "score"), str(REPO / "generate")]
    PAGE.write_text(generated(PAGE.read_text(encoding="utf-8")), encoding="utf-8")
