"""The two distributions keep their promises: hteb-score is light and never needs vllm or the
generator; hteb-generate may use hteb-score, never the reverse."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _imports(package: Path) -> set[str]:
    names = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def test_score_never_imports_vllm_or_the_generator():
    assert not _imports(REPO / "score" / "hteb_score") & {"vllm", "hteb_generate"}
    deps = tomllib.loads((REPO / "score" / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not any(d.startswith(("vllm", "hteb-generate")) for d in deps)


def test_importing_the_scorer_loads_no_vllm():
    code = ("import sys, hteb_score.cli, hteb_contract.stores, hteb_contract.revision; "
            "print(any(m == 'vllm' or m.startswith('vllm.') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_generate_depends_on_score():
    project = tomllib.loads((REPO / "generate" / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("hteb-score") for d in project["dependencies"])


def test_schemas_ship_inside_the_score_package():
    from hteb_contract.validation import SCHEMA_DIR, SCHEMAS

    for filename in SCHEMAS.values():
        assert (SCHEMA_DIR / filename).read_bytes() == (REPO / "schemas" / filename).read_bytes()
