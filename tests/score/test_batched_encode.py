"""The GPU encode path (issue 11 item 3), tested on CPU: pre-tokenised, length-sorted token-budget
batches prepared one ahead, one replica per device, equal to SentenceTransformer.encode in fp32
with the rows in input order."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hteb_score.encoding.batched import budget_batches, encode_batched, replicate
from models import minilm_path


@given(st.lists(st.integers(1, 512), max_size=200), st.integers(1, 4096))
def test_fuzz_budget_batches_cover_every_text_once_within_the_budget(lengths, budget):
    batches = budget_batches(lengths, budget)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= budget
    flat = [lengths[i] for b in batches for i in b]
    assert flat == sorted(flat, reverse=True)  # longest first: the padding each batch carries is small


@pytest.fixture(scope="module")
def model():
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(str(minilm_path()), device="cpu")


@pytest.fixture(scope="module")
def texts(shared_data) -> list[str]:
    """Short sentences and abstracts past max_seq_length, shuffled so that input order is not length order."""
    sts = [json.loads(line) for line in (shared_data / "STSBenchmark" / "test.jsonl").open()][:60]
    docs = [json.loads(line) for line in (shared_data / "SciFact" / "corpus.jsonl").open()][:12]
    mixed = [r["sentence1"] for r in sts] + [d["text"] for d in docs] + ["", "a"]
    return [mixed[i] for i in np.random.default_rng(7).permutation(len(mixed))]


@pytest.mark.slow
@pytest.mark.parametrize("prompt", [None, "query: "])
def test_equal_to_sentence_transformers_encode_in_input_order(model, texts, prompt):
    reference = model.encode(texts, prompt=prompt, convert_to_numpy=True)
    for budget in (256, 4096, 1 << 20):
        assert np.abs(encode_batched([model], texts, prompt=prompt, token_budget=budget) - reference).max() < 1e-5


@pytest.mark.slow
def test_truncation_at_max_seq_length_is_sentence_transformers(texts):
    from sentence_transformers import SentenceTransformer

    short = SentenceTransformer(str(minilm_path()), device="cpu")
    short.max_seq_length = 16
    assert np.abs(encode_batched([short], texts, token_budget=512) - short.encode(texts)).max() < 1e-5


@pytest.mark.slow
def test_two_replicas_give_what_one_gives(model, texts):
    replicas = replicate(model, ["cpu", "cpu"])
    assert replicas[0] is model and replicas[1] is not model
    one = encode_batched([model], texts, token_budget=1024)
    assert np.array_equal(encode_batched(replicas, texts, token_budget=1024), one)


@pytest.mark.slow
def test_each_batch_the_model_runs_is_within_the_budget(model, texts):
    seen = []
    forward = model.forward

    def recording(features, **kwargs):
        seen.append(tuple(features["input_ids"].shape))
        return forward(features, **kwargs)

    model.forward = recording
    try:
        encode_batched([model], texts, token_budget=1000)
    finally:
        del model.forward
    assert sum(rows for rows, _ in seen) == len(texts)
    assert all(rows == 1 or rows * width <= 1000 for rows, width in seen)
    assert len(seen) < len(texts) / 4  # short texts share batches


@pytest.mark.slow
def test_the_encoder_takes_the_path_with_a_token_budget_and_a_device_list(texts):
    from hteb_score.encoding.encoder import Encoder

    plain = Encoder.load(str(minilm_path()), device="cpu", progress=False)
    batched = Encoder.load(str(minilm_path()), device="cpu,cpu", progress=False)
    assert plain.token_budget is None and batched.token_budget == 16384 and len(batched.replicas) == 2
    assert batched.settings()["token_budget"] == 16384
    assert np.abs(batched.encode(texts, None) - plain.encode(texts, None)).max() < 1e-5
