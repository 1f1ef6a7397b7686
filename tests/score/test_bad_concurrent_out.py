"""Two runs given one --out at once, and an --out inside a store (issue 24 items 2 and 4): one run
writes the folder, the other is refused in one line (both used to exit 0 and print the path while
the folder held one of them); an output inside a revision store is refused before any work."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hteb_score.cli import main
from hteb_score.cli.output import OutputFolder
from models import minilm_path
from revision_factory import build_revision, install
from together import Finished, run_together

ROUNDS = 6
BUSY = "another run is writing --out"


def _write_result(args: list[str]) -> None:
    """What a scoring run does with its output, with the work in the middle taking a while."""
    out, name = Path(args[0]), args[1]
    output = OutputFolder.check(out, marker="result_card.json", overwrite=False)
    with output.staged() as folder:
        time.sleep(0.3)
        (folder / "result_card.json").write_text(json.dumps({"run": name}))


def _outcome(finished) -> tuple[list[int], list[str]]:
    statuses = sorted(one.status for one in finished)
    return statuses, [one.output for one in finished]


@pytest.mark.parametrize("round_", range(ROUNDS))
def test_two_writers_of_one_out(tmp_path, round_):
    """Real processes released together: one result, the other refused in one line; never both 'written'."""
    out = tmp_path / "out"
    from hteb_contract.errors import HtebError

    def entry(args: list[str]) -> None:
        try:
            _write_result(args)
        except HtebError as refused:
            print(f"error: {refused}")
            raise SystemExit(2) from None

    finished = run_together(entry, [[str(out), "a"], [str(out), "b"]], tmp_path / "logs")
    statuses, outputs = _outcome(finished)
    assert statuses == [0, 2], outputs
    refused = next(one.output for one in finished if one.status == 2).strip()
    assert refused.count("\n") == 0 and (BUSY in refused or "holds an earlier result" in refused), refused
    winner = next(i for i, one in enumerate(finished) if one.status == 0)
    assert json.loads((out / "result_card.json").read_text()) == {"run": "ab"[winner]}
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".hteb-partial")) == []


@pytest.fixture(scope="module")
def store(tmp_path_factory, shared_data) -> Path:
    root = tmp_path_factory.mktemp("store")
    build_revision(root / "rev", shared_data, ["STSBenchmark"], label="v1", rows=4)
    install(root / "store", root / "rev")
    return root / "store"


@pytest.mark.parametrize("inside", ["objects/{digest}", "objects/{digest}/data", "labels", "", "objects"])
def test_refused_out_inside_the_store(store, tmp_path, capsys, inside):
    digest = next((store / "objects").iterdir()).name
    out = store / inside.format(digest=digest) / "results"
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    assert main(["no-such-model", "--store", str(store), "--revision", "v1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {out} is inside the store {store}" in err, err
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before


def test_refused_out_inside_another_store(store, tmp_path, capsys):
    """An output inside any local store, not only the one scored."""
    other = tmp_path / "other"
    install(other, next(store.parent.glob("rev")))
    out = other / "objects" / "results"
    assert main(["no-such-model", "--store", str(store), "--revision", "v1", "--out", str(out)]) == 2
    assert f"--out {out} is inside the store {other}" in capsys.readouterr().err


@pytest.mark.slow
def test_two_scoring_runs_on_one_out(store, tmp_path):
    """hteb-score itself, twice at once on one --out: one card. Two fresh interpreters (`python -m`), as a user
    starts them: a process forked from a test run that has loaded torch and OpenVINO can crash in their threads.
    Both read and check the revision and load the model before writing, so their writes overlap."""
    out = tmp_path / "out"
    common = [
        sys.executable,
        "-m",
        "hteb_score.cli",
        minilm_path(),
        "--store",
        str(store),
        "--revision",
        "v1",
        "--out",
        str(out),
        "--quiet",
    ]
    runs = [subprocess.Popen(common, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for _ in range(2)]
    finished = [Finished(run.wait(timeout=900), run.stdout.read()) for run in runs]
    statuses, outputs = _outcome(finished)
    assert statuses == [0, 2], outputs  # refused as busy, or (started after the first) as holding its result
    for one in finished:
        assert "Traceback" not in one.output, one.output
        if one.status == 2:
            assert BUSY in one.output or "holds an earlier result" in one.output, one.output
    card = out / "result_card.json"
    assert json.loads(card.read_text())["model"]
    assert stat.S_IMODE(os.stat(card).st_mode) == 0o666 & ~_umask()  # cards follow the umask
    assert not list(tmp_path.glob(".hteb-*")), "a lock file or a staged folder left beside --out"


def main_exit(args: list[str]) -> None:
    raise SystemExit(main(args))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
