"""The transformers engine and the on-disk call cache, on the real SmolLM2."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hteb_generate.engine import CachedEngine, CallCache, ChatRequest

MESSAGES = [
    (("system", "Rephrase the text. Reply with the rephrased text only."), ("user", "A man is playing a guitar.")),
    (("user", "What is the capital of France?"),),
    (("user", "Name a colour."),),
]


def _requests(temperature: float = 0.0, max_tokens: int = 12) -> list[ChatRequest]:
    return [
        ChatRequest(m, temperature, 0.9 if temperature else 1.0, max_tokens, 1339 + i) for i, m in enumerate(MESSAGES)
    ]


def test_greedy_batch_equals_one_at_a_time_and_hf_generate(smollm2_engine):
    import torch

    batched = smollm2_engine.chat(_requests())
    assert batched == [smollm2_engine.chat([r])[0] for r in _requests()]
    ids = smollm2_engine._prompt_ids(MESSAGES[1])
    out = smollm2_engine.model.generate(input_ids=torch.tensor([ids]), max_new_tokens=12, do_sample=False)
    assert batched[1] == smollm2_engine.tokenizer.decode(out[0, len(ids) :], skip_special_tokens=True).strip()


def test_sampling_depends_on_each_request_seed_not_on_the_batch(smollm2_engine):
    sampled = _requests(temperature=0.9)
    forward = smollm2_engine.chat(sampled)
    assert forward == smollm2_engine.chat(sampled[::-1])[::-1]
    reseeded = smollm2_engine.chat([replace(r, seed=r.seed + 100) for r in sampled])
    assert reseeded != forward


def test_logprobs_are_a_distribution_over_first_tokens(smollm2_engine):
    import math

    (probs,) = smollm2_engine.next_token_logprobs([MESSAGES[1]], ["The", "Paris", "banana"])
    assert all(v < 0 for v in probs.values()) and sum(math.exp(v) for v in probs.values()) <= 1
    assert probs["The"] > probs["banana"]


def test_cache_hits_persist_and_any_parameter_change_misses(tmp_path, smollm2_engine):
    cached = CachedEngine(
        smollm2_engine, CallCache(tmp_path / "calls.sqlite"), model_id="m", revision="r", name="transformers"
    )
    first = cached.chat(_requests())
    assert (cached.calls, cached.hits) == (3, 0)
    assert cached.chat(_requests()) == first and (cached.calls, cached.hits) == (3, 3)
    cached.chat([replace(_requests()[0], seed=1)])
    cached.chat([replace(_requests()[0], max_tokens=13)])
    assert cached.calls == 5
    cached.next_token_logprobs([MESSAGES[1]], ["yes", "no"])
    cached.next_token_logprobs([MESSAGES[1]], ["yes", "no"])
    assert (cached.calls, cached.hits) == (6, 4)
    cached.cache.close()

    def never() -> None:
        pytest.fail("a fully cached run must not load the model")

    reopened = CachedEngine(
        never, CallCache(tmp_path / "calls.sqlite"), model_id="m", revision="r", name="transformers"
    )
    assert reopened.chat(_requests()) == first and (reopened.calls, reopened.hits) == (0, 3)
    other_revision = CachedEngine(
        smollm2_engine, CallCache(tmp_path / "calls.sqlite"), model_id="m", revision="r2", name="transformers"
    )
    other_revision.chat(_requests()[:1])
    assert other_revision.calls == 1


def test_progress_counts_every_answer_once_across_calls(tmp_path, smollm2_engine):
    """Progress is reported per answered chunk (cache hits at once), so one bar can span the
    judge's chat call and its log-probability call and ends at exactly their total."""
    cached = CachedEngine(
        smollm2_engine,
        CallCache(tmp_path / "calls.sqlite"),
        model_id="m",
        revision="r",
        name="transformers",
        commit_every=2,
    )
    cached.chat(_requests()[:1])
    reported: list[int] = []
    cached.on_progress = reported.append
    cached.chat(_requests())
    cached.next_token_logprobs([MESSAGES[1]], ["yes", "no"])
    assert reported == [1, 2, 0, 1] and sum(reported) == len(_requests()) + 1


def test_a_repeated_request_is_one_call_and_counts_as_a_hit(tmp_path, smollm2_engine):
    cached = CachedEngine(
        smollm2_engine, CallCache(tmp_path / "calls.sqlite"), model_id="m", revision="r", name="transformers"
    )
    request = _requests()[1]
    first = cached.chat([request, request, request])
    assert first[0] == first[1] == first[2] and (cached.calls, cached.hits) == (1, 2)


def test_finish_reason_says_whether_max_tokens_cut_the_reply(smollm2_engine):
    cut, whole = smollm2_engine.chat_results(
        [ChatRequest(MESSAGES[1], 0.0, 1.0, 2, 1), ChatRequest(MESSAGES[1], 0.0, 1.0, 64, 1)]
    )
    assert cut.finish_reason == "length" and len(smollm2_engine.tokenizer.encode(cut.text)) <= 2
    assert whole.finish_reason == "stop" and whole.text.startswith(cut.text)


def test_a_template_with_the_thinking_switch_is_rendered_with_thinking_off(smollm2_engine):
    from hteb_generate.engine.base import chat_template_kwargs

    template = (Path(__file__).parent / "data" / "qwen3-style-chat-template.jinja").read_text()
    own = smollm2_engine.tokenizer.chat_template
    assert smollm2_engine.template_kwargs == chat_template_kwargs(own) == {}  # SmolLM2's template has no switch
    try:
        smollm2_engine.tokenizer.chat_template = template
        smollm2_engine.template_kwargs = chat_template_kwargs(template)
        prompt = smollm2_engine.tokenizer.decode(smollm2_engine._prompt_ids(MESSAGES[1]))
    finally:
        smollm2_engine.tokenizer.chat_template, smollm2_engine.template_kwargs = own, {}
    assert prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
