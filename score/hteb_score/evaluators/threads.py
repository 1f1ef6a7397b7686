"""scikit-learn fits run single-threaded. With torch loaded, two OpenMP runtimes and several
OpenBLAS copies compete for the cores, and small MiniBatchKMeans fits ran 100x slower (15 s
instead of 0.15 s for ten 512-document rounds on 2 cores). The fitted results do not depend on
the thread count (the same V-measure to the last digit with 1 and 2 threads)."""

from __future__ import annotations

from threadpoolctl import threadpool_limits


def single_threaded() -> threadpool_limits:
    """A context in which BLAS and OpenMP use one thread."""
    return threadpool_limits(limits=1)
