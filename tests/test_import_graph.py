"""The import graph of the three packages: no cycle between modules and no private name taken from
another module.

Every `import` statement counts, wherever it stands: at the top, inside a function (a deferred
import) or under `if TYPE_CHECKING:`. A cycle kept from failing by deferring one of its imports is
still two modules that cannot be understood one without the other, so the test reads the source
with `ast` rather than importing it.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGES = [REPO / "schemas" / "hteb_contract", REPO / "score" / "hteb_score", REPO / "generate" / "hteb_generate"]


def module_files() -> dict[str, Path]:
    """Every module of the three packages by dotted name (a package by its own name, for its __init__)."""
    modules = {}
    for package in PACKAGES:
        for path in sorted(package.rglob("*.py")):
            parts = list(path.relative_to(package.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


MODULES = module_files()


def _absolute(importer: str, node: ast.ImportFrom, modules: Mapping[str, Path]) -> str:
    """The module an ImportFrom names, relative imports resolved against the importer."""
    if not node.level:
        return node.module or ""
    is_package = modules[importer].name == "__init__.py"
    parts = importer.split(".")
    base = parts[: len(parts) - node.level + is_package]
    return ".".join(base + ([node.module] if node.module else []))


def imports(importer: str, modules: Mapping[str, Path] = MODULES) -> list[tuple[str, str | None]]:
    """(module, name) for each project module the importer imports, anywhere in its source;
    `name` is the imported name when it is an attribute of that module rather than a module."""
    found = []
    for node in ast.walk(ast.parse(modules[importer].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name in modules]
        elif isinstance(node, ast.ImportFrom):
            source = _absolute(importer, node, modules)
            for alias in node.names:
                if f"{source}.{alias.name}" in modules:
                    found.append((f"{source}.{alias.name}", None))
                elif source in modules:
                    found.append((source, alias.name))
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    return {m: {target for target, _ in imports(m) if target != m} for m in MODULES}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_deferred_relative_and_type_checking_imports(tmp_path):
    files = {
        "p": "from p import a\n",
        "p.a": "def f():\n    from .b import _helper\n",
        "p.b": "if TYPE_CHECKING:\n    import p.c\n",
        "p.c": "from p.a import f\nimport json\n",
    }
    modules = {}
    for name, text in files.items():
        path = tmp_path / (name.replace(".", "/") + ("/__init__.py" if name == "p" else ".py"))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        modules[name] = path
    assert [imports(m, modules) for m in files] == [
        [("p.a", None)],
        [("p.b", "_helper")],
        [("p.c", None)],
        [("p.a", "f")],
    ]
    assert cycles({m: {t for t, _ in imports(m, modules)} for m in files}) == [["p.a", "p.b", "p.c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_every_package_is_read():
    assert {"hteb_contract", "hteb_score", "hteb_generate", "hteb_score.cli.app"} <= set(MODULES)


def test_no_import_cycle_between_modules():
    assert cycles(graph()) == []


def test_no_private_name_is_imported_from_another_module():
    private = [
        f"{m} imports {name} from {source}"
        for m in MODULES
        for source, name in imports(m)
        if name and name.startswith("_") and not name.startswith("__")
    ]
    assert private == []


#: The scorer's stages in the order data flows through them; a module imports only from its own
#: stage or an earlier one (the package's top-level modules, flags and strict JSON, come first).
SCORER_STAGES = ("hteb_score", "encoding", "evaluators", "stats", "scoring", "mteb_interop", "report", "cli")


def _stage(module: str) -> int:
    parts = module.split(".")
    return SCORER_STAGES.index(parts[1]) if len(parts) > 2 or parts[-1] in SCORER_STAGES[1:] else 0


def test_no_scorer_stage_imports_a_later_one():
    backwards = [
        f"{m} imports {target}"
        for m, targets in graph().items()
        if m.startswith("hteb_score")
        for target in targets
        if target.startswith("hteb_score.") and _stage(target) > _stage(m)
    ]
    assert backwards == []


#: The generator's stages in the order data flows through them, enforced the same way.
GENERATOR_STAGES = ("hteb_generate", "sources", "transform", "engine", "checks", "setup", "revision", "run", "cli")


def _generator_stage(module: str) -> int:
    parts = module.split(".")
    return GENERATOR_STAGES.index(parts[1]) if len(parts) > 2 or parts[-1] in GENERATOR_STAGES[1:] else 0


def test_the_generator_is_in_stage_folders():
    """Every generator module but the package's few top-level ones sits in a stage folder."""
    top = sorted(
        m
        for m in MODULES
        if m.startswith("hteb_generate.") and m.count(".") == 1 and m.split(".")[1] not in GENERATOR_STAGES
    )
    assert top == ["hteb_generate.bounds", "hteb_generate.progress", "hteb_generate.seeding"]


def test_no_generator_stage_imports_a_later_one():
    backwards = [
        f"{m} imports {target}"
        for m, targets in graph().items()
        if m.startswith("hteb_generate")
        for target in targets
        if target.startswith("hteb_generate.") and _generator_stage(target) > _generator_stage(m)
    ]
    assert backwards == []


#: hteb_score.report's rooms in the stage order: a room reads only the rooms before it (and the shared formatting and
#: rendering: how numbers are printed, the templates).
REPORT_ROOMS = ("hteb_score.report.card", "hteb_score.report.compare", "hteb_score.report.site")
SHARED = ("hteb_score.report.formatting", "hteb_score.report.provenance", "hteb_score.report.rendering")


def test_the_report_rooms_read_only_the_rooms_before_them():
    backward = []
    for module, targets in graph().items():
        mine = next((i for i, room in enumerate(REPORT_ROOMS) if module.startswith(room)), None)
        if mine is None:
            continue
        for target in targets:
            theirs = next((i for i, room in enumerate(REPORT_ROOMS) if target.startswith(room)), None)
            if theirs is not None and theirs > mine:
                backward.append(f"{module} -> {target}")
    assert not backward, backward
    shared = [f"{m} -> {t}" for m in SHARED for t in graph()[m] if t.startswith(REPORT_ROOMS)]
    assert not shared, shared  # what the rooms share reads none of them
    assert all(
        any(m.startswith(room) for room in REPORT_ROOMS) or m in ("hteb_score.report", *SHARED)
        for m in MODULES
        if m.startswith("hteb_score.report")
    )


def _folders(package: str) -> dict[str, set[str]]:
    """`package`'s graph with each of its subpackages one node (its top-level modules stay their own)."""

    def node(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for module, targets in graph().items():
        if module.split(".")[0] == package:
            edges.setdefault(node(module), set()).update(
                node(t) for t in targets if t.split(".")[0] == package and node(t) != node(module)
            )
    return edges


def test_no_import_cycle_between_a_packages_folders():
    """A folder (the contract's specs/, revision/, stores/, common/; the scorer's and generator's stages) and the
    modules around it never import each other both ways: each folder is a layer a reader can take on its own."""
    assert {package: cycles(_folders(package)) for package in ("hteb_contract", "hteb_score", "hteb_generate")} == {
        "hteb_contract": [],
        "hteb_score": [],
        "hteb_generate": [],
    }


def test_the_runtime_tooling_reads_nothing_of_the_data_contract():
    """hteb_contract.common (atomic writes, locks, SQLite, Ray, paths, the registry, escaping) is what both programs
    share that is not the data contract: it reads none of the contract's modules but its errors."""
    reads = {
        f"{m} -> {t}"
        for m, targets in graph().items()
        if m.startswith("hteb_contract.common")
        for t in targets
        if t.startswith("hteb_contract") and not t.startswith("hteb_contract.common") and t != "hteb_contract.errors"
    }
    assert reads == set()
