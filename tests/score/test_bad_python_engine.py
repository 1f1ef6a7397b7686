"""An `--encoder python` engine that loads, then misbehaves, and an embedding cache that is not what
the model wrote: one line naming the engine (or the cache), exit 2, nothing written. The engines are
small files written here; a well-behaved one scores, so each refusal is the misbehaviour's."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from refusal import assert_one_line, partials, run

pytest.importorskip("mteb")

ENGINES = '''
import sys

import numpy as np


class Engine:
    """Rows of 8 numbers from each text's characters; `bad` says how to misbehave."""

    identity = "toy-engine-1"

    def __init__(self, bad=None):
        self.bad = bad
        self.calls = 0

    def encode(self, inputs, **kwargs):
        texts = [text for batch in inputs for text in batch["text"]]
        self.calls += 1
        rows = np.array([[len(t) % 7 + 1, t.count(" ") + 1, *map(ord, (t + "        ")[:6])] for t in texts],
                        dtype=np.float32)
        if self.bad == "raises":
            raise MemoryError("engine ran out of arena")
        if self.bad == "exit0":
            sys.exit(0)
        if self.bad == "nan":
            rows[len(rows) // 2, 3] = np.nan
        if self.bad == "inf":
            rows[0, 0] = np.inf
        if self.bad == "strings":
            return [str(row) for row in rows]
        if self.bad == "ragged":
            return [list(row[: 4 + i % 2]) for i, row in enumerate(rows)]
        if self.bad == "one_short":
            return rows[:-1]
        if self.bad == "flat":
            return rows.ravel()
        if self.bad == "grows" and self.calls > 1:
            return np.hstack([rows, rows[:, :1]])
        return rows


def good():
    return Engine()


def exits_in_factory():
    sys.exit(0)


def exits_nonzero_in_factory():
    raise SystemExit("no licence")
'''
BAD = ("raises", "exit0", "nan", "inf", "strings", "ragged", "one_short", "flat", "grows")
DATASETS = "STSBenchmark,TwitterSemEval2015"  # two mteb tasks: two calls of encode


@pytest.fixture
def engines(tmp_path):
    path = tmp_path / "engines.py"
    path.write_text(ENGINES + "".join(f"\n\ndef {bad}():\n    return Engine({bad!r})\n" for bad in BAD))
    return path


def _refused(tmp_path, target, *args, needles=()):
    out = tmp_path / "out"
    code, _, err = run(target, "--encoder", "python", "--datasets", DATASETS, *args, "--out", out, "--quiet")
    notes, error = err.splitlines()[:-1], err.splitlines(keepends=True)[-1]
    assert all(note.startswith("encoder: python for ") for note in notes), err  # said once the engine loaded
    assert_one_line(code, error, *needles)
    assert not out.exists() and partials(tmp_path) == []


def test_a_good_engine_scores(engines, tmp_path):
    out = tmp_path / "out"
    assert run(f"{engines}:good", "--encoder", "python", "--datasets", DATASETS, "--out", out, "--quiet")[0] == 0
    assert (out / "result_card.json").is_file()


@pytest.mark.parametrize(
    ("factory", "needles"),
    [
        ("raises", ("engines.py:raises failed in encode: MemoryError: engine ran out of arena",)),
        ("exit0", ("engines.py:exit0 called sys.exit(0) in encode",)),
        ("exits_in_factory", ("engines.py:exits_in_factory called sys.exit(0) in its factory",)),
        ("exits_nonzero_in_factory", ("engines.py:exits_nonzero_in_factory called sys.exit('no licence')",)),
        ("nan", ("engines.py:nan gave NaN or infinite vectors for 1 of", "nothing was scored")),
        ("inf", ("engines.py:inf gave NaN or infinite vectors",)),
        ("strings", ("engines.py:strings.encode gave a list of <U", "not numbers")),
        ("ragged", ("engines.py:ragged.encode gave a list that is not an array of numbers",)),
        ("one_short", ("engines.py:one_short.encode gave shape (", "one row per text is needed")),
        ("flat", ("engines.py:flat.encode gave shape (", "one row per text is needed")),
        ("grows", ("engines.py:grows.encode gave rows of dimension 9 after rows of dimension 8",)),
    ],
)
def test_refused_an_engine_that_misbehaves(factory, needles, engines, tmp_path):
    _refused(tmp_path, f"{engines}:{factory}", needles=needles)


def _tamper(cache, vector):
    """Replace one cached row by `vector` (its dim column kept consistent, as another writer would)."""
    with sqlite3.connect(cache / "embeddings.sqlite") as db:
        key = db.execute("SELECT key FROM emb ORDER BY key LIMIT 1").fetchone()[0]
        db.execute("UPDATE emb SET dim = ?, vec = ? WHERE key = ?", (vector.size, vector.tobytes(), key))


@pytest.mark.parametrize(
    ("vector", "needles"),
    [
        (np.ones(5, dtype=np.float32), ("holds rows of dimensions 5, 8", "not what this model wrote")),
        (np.full(8, np.nan, dtype=np.float32), ("holds a row with NaN or infinity",)),
    ],
    ids=["dimension", "nan"],
)
def test_refused_an_embedding_cache_of_another_model(vector, needles, engines, tmp_path):
    cache = tmp_path / "cache"
    first = tmp_path / "first"
    assert (
        run(
            f"{engines}:good",
            "--encoder",
            "python",
            "--datasets",
            "STSBenchmark",
            "--cache-dir",
            cache,
            "--out",
            first,
            "--quiet",
        )[0]
        == 0
    )
    _tamper(cache, vector)
    _refused(tmp_path, f"{engines}:good", "--cache-dir", cache, needles=(str(cache), *needles))
