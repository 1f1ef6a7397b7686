"""A findings round's work units wherever they are: in the tree while a model is scored, at the commit the round's
`parts-at` names once the model's parts left the tree (the device tool sends the whole tree, 64 MiB at most)."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from hteb_score.report.site.parts_at import MARKER, blobs_at, names_at

REPO = Path(__file__).resolve().parent.parent
FINDINGS = REPO / "docs" / "findings"


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def parts_at(label: str) -> str:
    """The commit holding the parts of `label`'s models whose parts left the tree; skips in a shallow clone."""
    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        pytest.skip("a shallow clone: the parts that left the tree are in the history it lacks")
    return (FINDINGS / label / MARKER).read_text(encoding="utf-8").strip()


def models(label: str) -> list[str]:
    """Every model of the round: those with parts in the tree and those with cards whose parts left it."""
    folder = FINDINGS / label
    return sorted(
        {p.name for p in (folder / "parts").glob("*/")} | {p.parent.name for p in folder.glob("*/result_card.json")}
    )


def parts_folder(label: str, model: str) -> Path:
    """`model`'s parts of `label`: the tree's folder, or a folder written once from the `parts-at` commit."""
    in_tree = FINDINGS / label / "parts" / model
    if in_tree.is_dir():
        return in_tree
    commit = parts_at(label)
    # in the test run's own cache (tests/conftest.py: removed with the run), shared by the worker's tests
    folder = (
        Path(os.environ.get("XDG_CACHE_HOME") or tempfile.gettempdir()) / "hteb-parts" / commit[:12] / label / model
    )
    marker = FINDINGS / label / MARKER
    names = names_at(marker, commit, f"docs/findings/{label}/parts/{model}")
    if not names:
        raise FileNotFoundError(f"no parts of {model} in docs/findings/{label}/parts or at {commit}")
    folder.mkdir(parents=True, exist_ok=True)
    for name, blob in zip(names, blobs_at(marker, commit, names)):
        target = folder / Path(name).name
        if not target.exists():  # written whole or not at all: parallel test workers share the folder
            temporary = target.with_name(f".{target.name}.{os.getpid()}")
            temporary.write_bytes(blob)
            temporary.replace(target)
    return folder


def part(label: str, model: str, dataset: str) -> Path:
    return parts_folder(label, model) / f"{dataset}.hteb_part.json.gz"
