"""On-disk embedding cache shared between runs: sqlite (WAL) keyed by
sha256(model identity, prompt text, text), so two runs may share it safely; the identity
(model_identity) covers weights, tokenizer, module configs, backend and precision, so a changed
model is never served another's embeddings. A killed run leaves only whole rows (each batch is
one transaction). A model whose identity is unknown is never cached (encode.EmbeddingTable
refuses it)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from hteb_contract.errors import HtebError
from hteb_contract.common.sqlite_wal import open_wal

#: The one table's columns: key, the vector's length, its float32 bytes.
EMB = "key TEXT PRIMARY KEY, dim INTEGER, vec BLOB"


class EmbeddingCache:
    def __init__(self, folder: Path) -> None:
        folder = Path(folder)
        self.folder = folder
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self._db = open_wal(
                folder / "embeddings.sqlite", f"CREATE TABLE IF NOT EXISTS emb ({EMB})", expect={"emb": EMB}
            )
        except (OSError, sqlite3.Error) as err:
            raise HtebError(f"embedding cache {folder} is not usable ({err})") from None

    def get_many(self, keys: Sequence[str], dim: int | None = None) -> dict[str, np.ndarray]:
        """The rows held for `keys` (a torn row is left out, to be encoded again); rows of another
        dimension than `dim` or than each other, or not finite, are a one-line error: the cache is
        not what this model wrote."""
        found: dict[str, np.ndarray] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, size, blob in self._db.execute(f"SELECT key, dim, vec FROM emb WHERE key IN ({marks})", part):
                vector = np.frombuffer(blob, dtype=np.float32) if isinstance(blob, bytes) else np.zeros(0)
                if vector.size == size and vector.size > 0:
                    found[key] = vector
        sizes = sorted({v.size for v in found.values()} | ({dim} if dim is not None and found else set()))
        if len(sizes) > 1:
            raise HtebError(
                f"embedding cache {self.folder} holds rows of dimensions {', '.join(map(str, sizes))} "
                f"for this model{'' if dim is None else f' (its embeddings have {dim})'}: "
                "it is not what this model wrote"
            )
        if not all(np.isfinite(v).all() for v in found.values()):
            raise HtebError(
                f"embedding cache {self.folder} holds a row with NaN or infinity: it is not what this model wrote"
            )
        return found

    def put_many(self, vectors: Mapping[str, np.ndarray]) -> None:
        rows = [(k, int(v.size), np.asarray(v, dtype=np.float32).tobytes()) for k, v in vectors.items()]
        with self._db:
            self._db.executemany("INSERT OR IGNORE INTO emb (key, dim, vec) VALUES (?, ?, ?)", rows)
