"""Each xdist worker's share of the cores, for the thread pools torch and BLAS start (in the worker and in every
process its tests start): each pool otherwise takes every core, and two workers' pools on two cores spin against
each other. Measured: two processes embedding 3,000 texts with all-MiniLM-L6-v2 at once took 104 s with two
threads each, 66 s with one; the whole `make test` 2,507 s against 3,101 s.

Sized in the workers only, since the controller's environment is the one they start with; a size the user set
is kept."""

from __future__ import annotations

import os
import sys

#: the cores this process may run on (sched_getaffinity is Linux's; elsewhere the machine's)
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
CORE_SHARE = max(1, CORES // int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")))
USER_THREADS = os.environ.get("OMP_NUM_THREADS")
POOLS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def size_pools() -> None:
    """In an xdist worker, each pool not sized by the user to CORE_SHARE threads."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return
    for pool in POOLS:
        os.environ.setdefault(pool, str(CORE_SHARE))
    if "torch" in sys.modules and not USER_THREADS:  # a plugin imported it before conftest: its pool is sized
        sys.modules["torch"].set_num_threads(CORE_SHARE)
