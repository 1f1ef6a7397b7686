"""Several runs opening one new cache file at once (two shells on the default cache, issue 24
item 2): each gets its cache, none is told "database is locked". Real processes released together
at a barrier, on the generator's call cache and the scorer's embedding cache."""

from __future__ import annotations

import numpy as np
import pytest

from together import run_together
from hteb_generate.engine.cache import CallCache
from hteb_score.encoding.cache import EmbeddingCache

PROCESSES = 6
ROUNDS = 8


def _call_cache(args: list[str]) -> None:
    cache = CallCache(args[0])
    cache.put_many({args[1]: {"text": args[1], "finish_reason": "stop"}})
    assert cache.get_many([args[1]]) == {args[1]: {"text": args[1], "finish_reason": "stop"}}
    cache.close()


def _embedding_cache(args: list[str]) -> None:
    cache = EmbeddingCache(args[0])
    cache.put_many({args[1]: np.full(4, float(len(args[1])), dtype=np.float32)})
    assert set(cache.get_many([args[1]])) == {args[1]}


@pytest.mark.parametrize(
    "entry, name, cache", [(_call_cache, "calls.sqlite", CallCache), (_embedding_cache, "embeddings", EmbeddingCache)]
)
def test_runs_that_open_one_new_cache_together_all_get_it(tmp_path, entry, name, cache):
    keys = [f"key-{i}" for i in range(PROCESSES)]
    for round_ in range(ROUNDS):
        path = tmp_path / f"round-{round_}" / name
        finished = run_together(entry, [[str(path), key] for key in keys], tmp_path / f"logs-{round_}")
        assert [one.status for one in finished] == [0] * PROCESSES, [one.output for one in finished if one.status]
        assert sorted(cache(path).get_many(keys)) == keys  # every run's row is there
