"""`hteb-generate --corpus-noise` refused where it has nothing to perturb or nothing to perturb with:
one line, exit 2, nothing written (`validate` and the run alike)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ENTRY = "from hteb_generate.cli import main; main()"

CASES = {
    "no-retrieval-dataset": (
        ["--profile", "noise", "--datasets", "STSBenchmark"],
        "--corpus-noise needs a Retrieval dataset among the datasets",
    ),
    "no-noise-rule": (
        ["--profile", "cpu", "--datasets", "SciFact", "--transformations", "paraphrasing"],
        "--corpus-noise needs a noise rule among the transformations",
    ),
}


@pytest.mark.parametrize("command", [["validate"], []], ids=["validate", "run"])
@pytest.mark.parametrize("case", CASES)
def test_refused_corpus_noise(case: str, command: list[str], tmp_path: Path, shared_data: Path) -> None:
    args, needle = CASES[case]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            ENTRY,
            *command,
            "--seed",
            "1339",
            *args,
            "--corpus-noise",
            "--data-dir",
            str(shared_data),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--store",
            str(tmp_path / "store"),
            "--manifest-md",
            str(tmp_path / "M.md"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.startswith("error: ") and needle in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []
