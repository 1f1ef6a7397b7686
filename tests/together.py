"""Run one command in several real processes at the same instant, to hit the races of concurrent
writers: the processes are forked once the code is imported and start together at a barrier
(started by `python -m`, they would spend seconds importing and rarely overlap)."""

from __future__ import annotations

import multiprocessing
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Finished:
    """How one process ended: its exit status and what it printed (stdout and stderr together)."""

    status: int
    output: str


def _child(entry: Callable[[list[str]], object], args: list[str], barrier, log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    sys.stdout = sys.stderr = os.fdopen(fd, "w", buffering=1)  # not the test runner's capture
    status = 0
    try:
        barrier.wait(timeout=60)
        entry(args)
    except SystemExit as done:
        status = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    except BaseException:  # what the user would see: a traceback
        traceback.print_exc()
        status = 99
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def run_together(
    entry: Callable[[list[str]], object], commands: Sequence[list[str]], logs: Path, timeout: float = 300
) -> list[Finished]:
    """Run `entry(args)` for each command line in its own forked process, all released at once."""
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(len(commands))
    logs.mkdir(parents=True, exist_ok=True)
    paths = [logs / f"process-{index}.log" for index in range(len(commands))]
    processes = [
        context.Process(target=_child, args=(entry, list(args), barrier, str(path)))
        for args, path in zip(commands, paths)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join()
    return [Finished(process.exitcode, path.read_text(errors="replace")) for process, path in zip(processes, paths)]
