"""A test step that must not block: a read of a FIFO that nobody writes to blocks forever, so a test
of it fails after a deadline instead of hanging the suite (SIGALRM interrupts the blocked open)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator


class Blocked(AssertionError):
    """The step was still running at its deadline."""


@contextlib.contextmanager
def deadline(seconds: int = 20) -> Iterator[None]:
    def expire(signum, frame):
        raise Blocked(f"still running after {seconds} s: a read blocked (a FIFO opened for reading?)")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
