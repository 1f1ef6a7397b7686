"""The run's embeddings held once (issue 11 item 4): one float32 matrix in RAM, moved to a
memory-mapped file past a threshold, with the same vectors either way."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hteb_score.encoding.encoder import EmbeddingTable, Encoder
from hteb_score.encoding.vector_store import VectorStore
from models import minilm_path


def test_rows_come_back_in_the_order_asked_and_a_key_keeps_its_first_vector():
    rng = np.random.default_rng(0)
    store = VectorStore()
    first = rng.standard_normal((5, 3)).astype(np.float32)
    store.add(list("abcde"), first)
    store.add(["c", "f"], rng.standard_normal((2, 3)).astype(np.float32))
    assert len(store) == 6 and "f" in store and "g" not in store
    assert np.array_equal(store.rows(["e", "a", "c", "a"]), first[[4, 0, 2, 0]])
    with pytest.raises(KeyError, match="'g'"):
        store.rows(["a", "g"])
    with pytest.raises(ValueError, match="dimension 4, the store holds 3"):
        store.add(["z"], np.zeros((1, 4)))


def test_past_the_threshold_the_vectors_move_to_a_mapped_file_and_stay_equal(tmp_path):
    rng = np.random.default_rng(1)
    vectors = rng.standard_normal((5000, 16)).astype(np.float32)
    keys = [f"text {i}" for i in range(5000)]
    in_ram, mapped = VectorStore(), VectorStore(memmap_bytes=64 * 1024, folder=tmp_path)
    for start in range(0, 5000, 700):  # grows several times, crossing the threshold on the way
        in_ram.add(keys[start : start + 700], vectors[start : start + 700])
        mapped.add(keys[start : start + 700], vectors[start : start + 700])
    assert not in_ram.mapped and mapped.mapped
    [folder] = list(tmp_path.iterdir())
    assert [p.name for p in folder.iterdir()] == [Path(mapped._matrix.filename).name]  # only the live file
    order = rng.permutation(5000)
    picked = [keys[i] for i in order]
    assert np.array_equal(mapped.rows(picked), vectors[order])
    assert np.array_equal(in_ram.rows(picked), mapped.rows(picked))
    mapped.close()
    assert not folder.exists()


@pytest.mark.slow
def test_a_mapped_embedding_table_serves_the_same_vectors_as_one_in_ram(shared_data):
    """Real texts (STSBenchmark) through the real model: every vector equal, whichever way it is held."""
    rows = [json.loads(line) for line in (shared_data / "STSBenchmark" / "test.jsonl").open()][:300]
    texts = [r["sentence1"] for r in rows] + [r["sentence2"] for r in rows]
    encoder = Encoder.load(str(minilm_path()), device="cpu", progress=False)
    tables = [EmbeddingTable(encoder), EmbeddingTable(encoder, memmap_bytes=100 * 384 * 4)]
    for table in tables:
        table.fill([(None, t, None) for t in texts], progress=False, chunk=128)
    assert tables[1]._vectors.mapped and not tables[0]._vectors.mapped
    assert tables[0].unique == tables[1].unique == len(set(texts))
    shuffled = list(reversed(texts))
    assert np.array_equal(tables[0].view(None)(shuffled, None), tables[1].view(None)(shuffled, None))
