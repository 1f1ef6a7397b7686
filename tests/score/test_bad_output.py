"""`hteb-score --out`: refused before any work when it cannot be written, when it holds an earlier
result (without --overwrite) or someone else's files; written whole or not at all; a killed run's
partial folder removed by the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from hteb_contract.stores.local import LocalStore
from hteb_score.cli.output import PARTIAL
from models import minilm_path
from refusal import assert_one_line, partials, run, run_unprivileged, snapshot
from revision_factory import build_revision


def earlier_result(out: Path) -> dict[str, bytes]:
    """An output folder as a finished run leaves it (card, markdown, mteb JSON); returns its files."""
    (out / "mteb" / "other-model" / "sha256_0").mkdir(parents=True)
    (out / "result_card.json").write_text('{"earlier": true}\n')
    (out / "result_card.md").write_text("# earlier\n")
    (out / "mteb" / "other-model" / "sha256_0" / "STSBenchmark.json").write_text("{}\n")
    return snapshot(out)


def dead_pid() -> int:
    """The id of a process that has exited."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_refused_out_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("mine\n")
    code, _, err = run(minilm_path(), "--out", tmp_path / "out", "--quiet")
    assert_one_line(code, err, "'--out'", "is a file")
    assert (tmp_path / "out").read_text() == "mine\n" and partials(tmp_path) == []


def test_refused_out_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("mine\n")
    code, _, err = run(minilm_path(), "--out", tmp_path / "file" / "deeper" / "out", "--quiet")
    assert_one_line(code, err, "--out", f"{tmp_path / 'file'} is a file, not a folder")
    assert (tmp_path / "file").read_text() == "mine\n" and partials(tmp_path) == []


@pytest.mark.slow  # a fresh interpreter
def test_refused_out_in_a_read_only_folder() -> None:
    """chmod 555: refused in one line before anything is read (as user nobody when the tests run as root)."""
    folder = Path(tempfile.mkdtemp(prefix="hteb-read-only-"))
    try:
        folder.chmod(0o555)
        code, _, err = run_unprivileged("--out", folder / "results", "--quiet")
        assert_one_line(code, err, "--out", f"{folder} is not writable")
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o755)
        folder.rmdir()


def test_refused_out_holding_an_earlier_result(tmp_path: Path) -> None:
    before = earlier_result(tmp_path / "out")
    code, _, err = run(minilm_path(), "--out", tmp_path / "out", "--quiet")
    assert_one_line(code, err, f"--out {tmp_path / 'out'} holds an earlier result", "--overwrite")
    assert snapshot(tmp_path / "out") == before and partials(tmp_path) == []


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["plain", "with-overwrite"])
def test_refused_out_holding_other_files(tmp_path: Path, overwrite: list[str]) -> None:
    """A non-empty folder that is not an earlier result is never replaced, --overwrite or not."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "thesis.tex").write_text("mine\n")
    code, _, err = run(minilm_path(), "--out", tmp_path / "out", *overwrite, "--quiet")
    assert_one_line(code, err, "is a non-empty folder without result_card.json")
    assert snapshot(tmp_path / "out") == {"thesis.tex": b"mine\n"} and partials(tmp_path) == []


def test_refused_failure_after_staging_leaves_the_earlier_result(tmp_path: Path) -> None:
    """--overwrite, then a failure once the run has started: the earlier result stays whole."""
    before = earlier_result(tmp_path / "out")
    code, _, err = run(minilm_path(), "--datasets", "Nope", "--out", tmp_path / "out", "--overwrite", "--quiet")
    assert_one_line(code, err, "no dataset 'Nope'")
    assert snapshot(tmp_path / "out") == before and partials(tmp_path) == []


def test_a_killed_runs_partial_folders_are_removed_by_the_next_run(tmp_path: Path) -> None:
    """Partial folders of dead runs go; an earlier result a dead run had moved aside comes back;
    the partial folder of a running process (pid 1) stays."""
    pid = dead_pid()
    stale = tmp_path / f"{PARTIAL}out-{pid}-0a0a0a0a"
    (stale / "mteb").mkdir(parents=True)
    (stale / "result_card.json").write_text("{}\n")
    moved = tmp_path / f"{PARTIAL}out-{pid}-1b1b1b1b-old"
    before = earlier_result(moved)
    running = tmp_path / f"{PARTIAL}out-1-2c2c2c2c"
    running.mkdir()
    other = tmp_path / f"{PARTIAL}elsewhere-{pid}-3d3d3d3d"
    other.mkdir()
    code, _, err = run(minilm_path(), "--datasets", "Nope", "--out", tmp_path / "out", "--overwrite", "--quiet")
    assert_one_line(code, err, "no dataset 'Nope'")
    assert snapshot(tmp_path / "out") == before
    assert partials(tmp_path) == sorted([running.name, other.name])


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    root = tmp_path_factory.mktemp("small")
    build_revision(root / "rev", shared_data, ["STSBenchmark"], label="s1", rows=6)
    LocalStore(root / "store").publish(root / "rev")
    return root / "store"


@pytest.mark.slow
def test_kill_9_mid_run_leaves_the_earlier_result_and_the_next_run_cleans_up(small_store: Path, tmp_path: Path) -> None:
    """SIGKILL while a --overwrite run is scoring: the earlier result is untouched, the partial
    folder is the only trace, and the next run removes it and replaces the result whole."""
    out = tmp_path / "out"
    before = earlier_result(out)
    args = [minilm_path(), "--store", small_store, "--revision", "s1", "--out", out, "--overwrite", "--quiet"]
    log = tmp_path / "child.log"
    with log.open("w") as stderr:
        child = subprocess.Popen([sys.executable, "-m", "hteb_score.cli", *map(str, args)], stderr=stderr)
    deadline = time.monotonic() + 60
    while not partials(tmp_path) and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.2)  # into the revision read and the model load
    assert child.poll() is None, f"the run ended before it could be killed: {log.read_text()}"
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert snapshot(out) == before and len(partials(tmp_path)) == 1
    log.unlink()

    code, stdout, err = run(*args)
    assert code == 0, err
    assert partials(tmp_path) == [] and f"-> {out}" in stdout
    files = snapshot(out)
    assert "result_card.json" in files and not any(name.startswith("mteb/other-model/") for name in files)
