"""One writer at a time: an exclusive lock between processes on a lock file (fcntl.flock).

Two runs that would write the same thing (one revision's staging folder, one store's labels,
one --out folder) take the same lock: the second waits for the first, or is refused in one line
naming the process that holds it. The kernel drops a lock when its process dies, so a killed run
never leaves a folder locked. The lock file stays, unless the holder asks to remove it (`remove`:
a lock file beside a user's output folder): then it is unlinked while still locked, and a process
that locked a file no longer at `path` (removed under it) starts again on the new one, so two
processes never both hold "the" lock.
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
def exclusive(path: Path, *, wait: bool, busy: str, remove: bool = False) -> Iterator[None]:
    """Hold the lock of `path` for the block. Without `wait`, a held lock is a Busy error whose one
    line is `busy` followed by the holder's pid. With `remove`, the lock file is gone afterwards."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = _locked(path, wait, busy)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        yield
    finally:
        if remove:
            os.unlink(path)  # still locked: a waiter on this file finds it gone and starts again
        os.close(fd)


def _locked(path: Path, wait: bool, busy: str) -> int:
    """A descriptor of the file at `path`, locked; retried while the locked file is not the one at `path`."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise Busy(f"{busy} (process {holder} holds the lock)") from None
        try:
            if os.fstat(fd).st_ino == os.stat(path).st_ino:
                return fd
        except FileNotFoundError:  # removed by the holder we waited for
            pass
        os.close(fd)
