"""The test run as `make test` makes it: under `--dist loadgroup` the tests of one `xdist_group` run on one
worker, so a module's costly fixture (an engine started, a reference run) is made once. pytest-xdist 3.8
names a group by rewriting `item._nodeid`, which pytest 9.2 stopped reading: every group was split over
the two workers and each made its module fixtures again (17 minutes of a 73-minute run). A real session
of pytest, in a subprocess, on a generated module."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

MODULE = """
import os
import pytest

pytestmark = pytest.mark.xdist_group("one-worker")


@pytest.fixture(scope="module")
def costly():
    with open(os.environ["SETUPS"], "a") as log:
        log.write(os.environ["PYTEST_XDIST_WORKER"] + "\\n")


@pytest.mark.parametrize("n", range(8))
def test_uses_it(costly, n):
    pass


@pytest.mark.parametrize("n", range(8))
def test_free(n):
    pass
"""


def test_a_group_runs_on_one_worker_and_makes_its_module_fixture_once(tmp_path: Path):
    (tmp_path / "test_grouped.py").write_text(MODULE, encoding="utf-8")
    setups = tmp_path / "setups.txt"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-p",
            "no:cacheprovider",
            "-q",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SETUPS": str(setups)},
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert len(setups.read_text().split()) == 1, setups.read_text()


def test_each_worker_and_what_it_starts_use_the_workers_share_of_the_cores():
    """Two workers' torch pools of every core each spin against each other (tests/core_share.py): each worker,
    and each process a test starts, sizes its pools to cores // workers."""
    import torch

    from core_share import CORES, USER_THREADS

    if USER_THREADS:
        pytest.skip(f"OMP_NUM_THREADS={USER_THREADS} is the user's")
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    share = max(1, CORES // workers)
    assert torch.get_num_threads() == share
    started = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.get_num_threads())"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert int(started.stdout) == share
