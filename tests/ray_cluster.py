"""A Ray cluster started as a user starts one (`ray start --head` in a process group of its own,
on free ports, in a short temporary folder), and stopped alone: `ray stop` would end every Ray
process of the machine, other users' clusters too. For the tests of the generator's and the
scorer's Ray runs; one cluster serves a whole test module."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import closing, contextmanager
from pathlib import Path
from typing import NamedTuple

PORT_OPTIONS = (
    "--port",
    "--node-manager-port",
    "--object-manager-port",
    "--dashboard-agent-listen-port",
    "--dashboard-agent-grpc-port",
    "--runtime-env-agent-port",
    "--metrics-export-port",
    "--ray-client-server-port",
)


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    with closing(sockets[0]):
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        ports = [s.getsockname()[1] for s in sockets]
        for s in sockets[1:]:
            s.close()
    return ports


def group(pgid: int) -> list[int]:
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


def stop(pgid: int, grace_s: float = 15.0) -> None:
    """`ray stop` for this cluster alone: its processes keep the process group `ray start` was started in;
    those still there `grace_s` after SIGTERM are killed."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while group(pgid) and time.monotonic() < deadline:
            time.sleep(0.2)


class Cluster(NamedTuple):
    address: str
    pgid: int  # the process group its processes (and its workers) keep

    def processes(self, title: str) -> list[int]:
        """Its processes, and theirs below them, whose title starts with `title` (an actor's: `ray::ClassName`)."""
        found = []
        for pid in descendants(group(self.pgid)):
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0].startswith(title.encode()):
                    found.append(pid)
            except OSError:
                continue
        return sorted(found)


def descendants(pids: list[int]) -> set[int]:
    """`pids` and every process below them."""
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = set(pids), set(pids)
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


@contextmanager
def started_cluster(env: Mapping[str, str], *, num_cpus: int = 1, grace_s: float = 15.0) -> Iterator[Cluster]:
    """`ray start --head` in `env`; yields it, stops it (`stop`) and checks no process of it is left."""
    folder = tempfile.mkdtemp(prefix="hteb-ray-", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    ports = free_ports(len(PORT_OPTIONS))
    command = [
        str(Path(sys.executable).with_name("ray")),
        "start",
        "--head",
        "--node-ip-address=127.0.0.1",
        f"--temp-dir={folder}",
        f"--num-cpus={num_cpus}",
        "--include-dashboard=false",
        "--disable-usage-stats",
        *(f"{option}={port}" for option, port in zip(PORT_OPTIONS, ports)),
    ]
    start = subprocess.Popen(
        command, env=dict(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )  # a process group of its own, which its daemons keep
    try:
        out, err = start.communicate(timeout=180)
        assert start.returncode == 0, err[-3000:]
        yield Cluster(f"127.0.0.1:{ports[0]}", start.pid)
    finally:
        start.kill()
        start.wait()
        stop(start.pid, grace_s)
        shutil.rmtree(folder, ignore_errors=True)
    assert group(start.pid) == []
