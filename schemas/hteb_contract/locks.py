"""One writer at a time: an exclusive lock between processes on a lock file (fcntl.flock).

Two runs that would write the same thing (one revision's staging folder, one store's labels,
one --out folder) take the same lock: the second waits for the first, or is refused in one line
naming the process that holds it. The kernel drops a lock when its process dies, so a killed run
never leaves a folder locked; the lock file itself stays (removing it would let a third process
lock a file the second still waits on).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from hteb_contract.errors import HtebError


class Busy(HtebError):
    """Another process holds the lock."""


@contextlib.contextmanager
def exclusive(path: Path, *, wait: bool, busy: str) -> Iterator[None]:
    """Hold the lock of `path` for the block. Without `wait`, a held lock is a Busy error whose one
    line is `busy` followed by the holder's pid."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            raise Busy(f"{busy} (process {holder} holds the lock)") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)
