"""The environment an engine worker sees on a Ray cluster started as a user starts one (`ray start
--head` in its own process, then the driver joins it by address): Ray starts such a cluster's workers
with `ray start`'s environment, not the driver's, so what the engines read (VLLM_BATCH_INVARIANT, the
Hugging Face variables) must reach them through the engine itself. One cluster, SmolLM2 on one worker."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from contextlib import closing
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

DRIVER_ONLY = {"VLLM_BATCH_INVARIANT": "1", "HF_HUB_OFFLINE": "1", "VLLM_USE_TRITON_AWQ": "1"}
PORT_OPTIONS = ("--port", "--node-manager-port", "--object-manager-port", "--dashboard-agent-listen-port",
                "--dashboard-agent-grpc-port", "--runtime-env-agent-port", "--metrics-export-port",
                "--ray-client-server-port")


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    with closing(sockets[0]):
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        ports = [s.getsockname()[1] for s in sockets]
        for s in sockets[1:]:
            s.close()
    return ports


def _group(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (zombies left to init do not count)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _stop(pgid: int) -> None:
    """`ray stop` for this cluster alone: its processes keep the process group `ray start` was started in
    (ray stop itself ends every Ray process of the machine, other users' clusters too)."""
    for sig, wait in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while _group(pgid) and time.monotonic() < deadline:
            time.sleep(0.2)


@pytest.fixture
def started_cluster():
    """`ray start --head` as a user runs it, in an environment without DRIVER_ONLY; its address."""
    folder = tempfile.mkdtemp(prefix="hteb-ray-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    ports = _free_ports(len(PORT_OPTIONS))
    env = {k: v for k, v in os.environ.items() if k not in DRIVER_ONLY}
    command = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--node-ip-address=127.0.0.1",
               f"--temp-dir={folder}", "--num-cpus=1", "--include-dashboard=false", "--disable-usage-stats",
               *(f"{option}={port}" for option, port in zip(PORT_OPTIONS, ports))]
    start = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)  # a process group of its own, which its daemons keep
    try:
        out, err = start.communicate(timeout=180)
        assert start.returncode == 0, err[-3000:]
        yield f"127.0.0.1:{ports[0]}"
    finally:
        if ray.is_initialized():
            ray.shutdown()
        start.kill()
        start.wait()
        _stop(start.pid)
        shutil.rmtree(folder, ignore_errors=True)
    assert _group(start.pid) == []


DRIVER = textwrap.dedent(
    """
    import json, sys
    from functools import partial

    import ray
    from hteb_generate.engine import ChatRequest, create_engine
    from hteb_generate.engine.ray_engine import RayEngine

    address, model, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    factory = partial(create_engine, "transformers", model_path=model, model_id="smollm2-test", revision="test",
                      batch_size=2, threads=1)
    engine = RayEngine(factory, model_id="smollm2-test", revision="test", address=address, workers=1,
                       resources={"num_cpus": 1})
    try:
        seen = ray.get(engine.workers[0].environment.remote(names))
        reply = engine.chat([ChatRequest((("user", "Name a colour."),), 0.0, 1.0, 4, 1)])
    finally:
        engine.close()
    print("RESULT " + json.dumps({"seen": seen, "passed": engine.env, "reply": reply, "left": len(engine.workers)}))
    """
)


def test_a_worker_on_a_started_cluster_sees_the_drivers_engine_environment(started_cluster, smollm2_dir):
    """The driver as a user runs it: its own process, the variables set before it starts, and
    RAY_AUTH_MODE=token, which Ray wants for a named address of a cluster made by `ray start`."""
    env = {**os.environ, **DRIVER_ONLY, "RAY_AUTH_MODE": "token"}
    done = subprocess.run([sys.executable, "-c", DRIVER, started_cluster, str(smollm2_dir), ",".join(DRIVER_ONLY)],
                          env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT "):])
    assert result["seen"] == DRIVER_ONLY and result["passed"]["VLLM_BATCH_INVARIANT"] == "1"
    assert len(result["reply"]) == 1 and result["reply"][0] and result["left"] == 0
