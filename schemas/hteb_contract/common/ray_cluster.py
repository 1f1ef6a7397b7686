"""Joining a Ray cluster, for both programs' `--ray-address local|auto|ADDRESS`: the generator spreads
its engine calls over it, the scorer its work units. Ray is imported here only when a run asks for it
(each program's `ray` extra), so the contract itself never needs it.

Ray's driver prints its raylet's messages (a worker died, a task is retried) to stdout from a thread
of its own, at any time while it is joined; stdout holds each command's result lines. So a command
joins inside a `session`: stdout goes to stderr during it, the session leaves what `connect` joined
at its end, and the command prints its results after it."""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

from hteb_contract.errors import HtebError

LOCAL = "local"  # start a Ray instance on this machine for the run
PROBE_S = 10  # how long a named cluster's head has to answer

_joined: Any = None  # the ray module, when connect called ray.init and _leave has not shut it down yet


def connect(address: str, *, num_cpus: int | None, extra: str) -> Any:
    """The `ray` module, joined to the cluster at `address` ("auto": the one `ray start` made here;
    LOCAL: a new one of `num_cpus`, default all); a missing Ray (`extra`: the pip extra that brings it)
    or an unreachable cluster is one line."""
    try:
        import ray
    except ImportError:
        raise HtebError(f"--ray-address needs Ray: pip install '{extra}'") from None
    if not ray.is_initialized():
        if address not in ("auto", LOCAL):
            _reachable(address)
        options: dict[str, Any] = {"num_cpus": num_cpus} if address == LOCAL and num_cpus else {}
        try:
            ray.init(address=address, log_to_driver=False, include_dashboard=False, **options)
        except (ConnectionError, RuntimeError, ValueError) as err:
            hint = ""
            if address not in ("auto", LOCAL) and "RAY_AUTH_MODE" not in os.environ:
                # ray start turns token authentication on, and ray.init only turns it on for "auto"
                # (ray/_private/worker.py, init: maybe_enable_token_auth_if_token_available)
                hint = " (a cluster made by `ray start` wants RAY_AUTH_MODE=token when its address is named)"
            first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
            raise HtebError(f"cannot reach the Ray cluster at {address!r}: {first}{hint}") from None
        global _joined
        _joined = ray
    return ray


def _leave() -> None:
    """Leave the cluster `connect` joined (one it started here stops); Ray joined by someone else in
    this process is theirs to leave."""
    global _joined
    ray, _joined = _joined, None
    if ray is not None and ray.is_initialized():  # not already shut down by whoever holds this process
        ray.shutdown()  # joins Ray's message thread: nothing of it prints after this


@contextlib.contextmanager
def session() -> Iterator[None]:
    """A command's use of Ray: stdout goes to stderr during the block, and what `connect` joins in it
    is left at its end, error or not. Print the result lines after the block."""
    with contextlib.redirect_stdout(sys.stderr):
        try:
            yield
        finally:
            _leave()


def _reachable(address: str) -> None:
    """A named cluster's head answers on its port within PROBE_S: Ray itself retries an address
    that does not answer for minutes before it gives up."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise HtebError(f"--ray-address {address!r}: expected local, auto or HOST:PORT")
    try:
        socket.create_connection((host, int(port)), timeout=PROBE_S).close()
    except OSError as err:
        raise HtebError(f"cannot reach the Ray cluster at {address!r}: {err.strerror or err}") from None
