"""The run's embeddings, held once: one contiguous float32 matrix and a key -> row index.

Why: a dict of per-text numpy arrays costs ~100 bytes of object overhead per vector on top of the
vector and fragments the heap; a full HTEB revision has hundreds of thousands of unique texts. Rows
live in RAM until they pass `memmap_bytes`, then in a memory-mapped file in a private temporary
folder (removed on close), so resident memory stays bounded by what the OS keeps cached while the
run's peak is the model plus the keys. Memory = rows x dim x 4 bytes (RAM or page cache) + the keys.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Hashable, Sequence
from pathlib import Path

import numpy as np

DEFAULT_MEMMAP_BYTES = 1 << 30  # 1 GiB of vectors: ~700k MiniLM vectors, ~350k of a 768-dim model


class VectorStore:
    """Append-only (key -> vector) storage; `rows(keys)` returns a stacked copy in the given order."""

    def __init__(self, *, memmap_bytes: int = DEFAULT_MEMMAP_BYTES, folder: Path | None = None) -> None:
        self.memmap_bytes = memmap_bytes
        self._parent = folder  # where the memory-mapped file's temporary folder goes (None: the system's)
        self._index: dict[Hashable, int] = {}
        self._matrix: np.ndarray | None = None
        self._folder: Path | None = None

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._index

    @property
    def dim(self) -> int | None:
        """The dimension of the rows held (None: none yet)."""
        return None if self._matrix is None else int(self._matrix.shape[1])

    @property
    def mapped(self) -> bool:
        """Whether the vectors are in a memory-mapped file (past `memmap_bytes`)."""
        return isinstance(self._matrix, np.memmap)

    def add(self, keys: Sequence[Hashable], vectors: np.ndarray) -> None:
        """Store new rows; a key already held keeps its first vector (a text is embedded once)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(keys):
            raise ValueError(f"{len(keys)} keys but vectors of shape {vectors.shape}")
        fresh = [i for i, key in enumerate(keys) if key not in self._index]
        if not fresh:
            return
        if self._matrix is not None and vectors.shape[1] != self._matrix.shape[1]:
            raise ValueError(f"vectors of dimension {vectors.shape[1]}, the store holds {self._matrix.shape[1]}")
        start = len(self._index)
        matrix = self._reserve(start + len(fresh), vectors.shape[1])
        matrix[start : start + len(fresh)] = vectors[fresh]
        for offset, i in enumerate(fresh):
            self._index.setdefault(keys[i], start + offset)

    def rows(self, keys: Sequence[Hashable]) -> np.ndarray:
        """The vectors of `keys`, stacked in order (a copy); KeyError names the first unknown key."""
        try:
            indices = [self._index[key] for key in keys]
        except KeyError as missing:
            raise KeyError(missing.args[0]) from None
        if self._matrix is None:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(self._matrix[indices])

    def _reserve(self, rows: int, dim: int) -> np.ndarray:
        """The matrix, with room for `rows` rows: capacity doubles; past `memmap_bytes` it moves to a file."""
        if self._matrix is not None and rows <= self._matrix.shape[0]:
            return self._matrix
        held = 0 if self._matrix is None else self._matrix.shape[0]
        capacity = max(rows, 2 * held, 1024)
        used = len(self._index)
        if capacity * dim * 4 <= self.memmap_bytes:
            grown = np.empty((capacity, dim), dtype=np.float32)
        else:
            grown = self._mapped(capacity, dim)
        if self._matrix is not None:
            grown[:used] = self._matrix[:used]
        old = self._matrix
        self._matrix = grown
        self._drop(old)
        return grown

    def _mapped(self, capacity: int, dim: int) -> np.memmap:
        if self._folder is None:
            self._folder = Path(tempfile.mkdtemp(prefix="hteb-vectors-", dir=self._parent))
        path = self._folder / f"vectors-{capacity}.f32"
        return np.memmap(path, dtype=np.float32, mode="w+", shape=(capacity, dim))

    def _drop(self, old: np.ndarray | None) -> None:
        """Release a replaced matrix (and its file)."""
        if isinstance(old, np.memmap) and old.filename is not None:  # unmapped when its last view goes
            Path(old.filename).unlink(missing_ok=True)

    def close(self) -> None:
        """Free the vectors and remove the memory-mapped file's folder."""
        self._drop(self._matrix)
        self._matrix = None
        self._index.clear()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None

    def __del__(self) -> None:
        self.close()
