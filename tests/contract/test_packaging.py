"""The three distributions keep their promises: hteb-contract sits below both programs and imports
neither; hteb-score is light and never needs vllm or the generator; hteb-generate never needs the
scorer. The two programs meet only through the contract."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGES = {
    "contract": REPO / "schemas" / "hteb_contract",
    "score": REPO / "score" / "hteb_score",
    "generate": REPO / "generate" / "hteb_generate",
}
PROJECTS = {"contract": REPO / "schemas", "score": REPO / "score", "generate": REPO / "generate"}


def _imports(package: Path) -> set[str]:
    names = set()
    for path in package.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def _dependencies(project: str) -> list[str]:
    return tomllib.loads((PROJECTS[project] / "pyproject.toml").read_text())["project"]["dependencies"]


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("contract", {"hteb_score", "hteb_generate", "vllm", "torch", "sentence_transformers"}),
        ("score", {"hteb_generate", "vllm"}),
        ("generate", {"hteb_score"}),
    ],
)
def test_no_package_imports_what_it_must_not(package, forbidden):
    assert not _imports(PACKAGES[package]) & forbidden


def test_both_programs_depend_on_the_contract_and_not_on_each_other():
    for program, other in (("score", "hteb-generate"), ("generate", "hteb-score")):
        deps = _dependencies(program)
        assert any(d.startswith("hteb-contract") for d in deps)
        assert not any(d.startswith((other, "vllm")) for d in deps)


#: (file, function) allowed to look outside its package: the generator's probe that tells a checkout
#: from an installed package (None outside the repository, where nothing of the repository is needed;
#: tests/generate/test_cli.py::test_manifest_md_is_the_repositorys_or_none_for_an_installed_package).
REPOSITORY_PROBES = {(PACKAGES["generate"] / "setup" / "config.py", "repository_root")}


def _outside_probes(path: Path) -> str:
    """The source of `path` without the bodies of its allowed repository probes."""
    text = path.read_text(encoding="utf-8")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.FunctionDef) and (path, node.name) in REPOSITORY_PROBES:
            text = text.replace(ast.get_source_segment(text, node), "")
    return text


def test_no_package_reaches_into_the_repository_by_relative_path():
    for package in PACKAGES.values():
        for path in package.rglob("*.py"):
            assert "parents[" not in _outside_probes(path), path


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_scorer_loads_no_vllm():
    code = (
        "import sys, hteb_score.cli, hteb_contract.stores, hteb_contract.revision; "
        "print(any(m == 'vllm' or m.startswith('vllm.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@pytest.mark.slow
@pytest.mark.xdist_group("source-tree-builds")  # builds in schemas/: never beside tests/test_wheels.py's builds
def test_the_contract_wheel_carries_every_json_schema_and_table(tmp_path):
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(tmp_path),
            str(PROJECTS["contract"]),
        ],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("hteb_contract-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    from hteb_contract.validation import SCHEMAS

    assert {f"hteb_contract/json/{filename}" for filename in SCHEMAS.values()} <= names
    assert {"hteb_contract/specs/datasets.yaml", "hteb_contract/specs/datasets.schema.json"} <= names
    assert {"hteb_contract/specs/transformations.yaml", "hteb_contract/specs/transformations.schema.json"} <= names
