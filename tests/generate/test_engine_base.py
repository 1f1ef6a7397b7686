"""The backend registry and its options, the chat template switch, finish reasons through the
cache — without loading any model."""

from __future__ import annotations

import inspect
from dataclasses import asdict
from pathlib import Path

import pytest
from hteb_generate.engine import ENGINES, CachedEngine, CallCache, ChatRequest, ChatResult, Engine, create_engine
from hteb_generate.engine.base import chat_template_kwargs
from hteb_generate.engine.cache import _key
from hteb_contract.errors import HtebError


def test_unknown_engine_names_the_known_ones():
    assert ENGINES.names() == ["transformers", "vllm"]
    with pytest.raises(HtebError, match="unknown engine 'vlm' \\(did you mean 'vllm'\\?\\); known: transformers, vllm"):
        create_engine("vlm", model_path="x", model_id="x", revision="x")


@pytest.mark.parametrize("name", ["transformers", "vllm"])
def test_declared_options_are_the_constructor_keywords(name):
    backend = ENGINES.get(name)
    keywords = [p.name for p in inspect.signature(backend).parameters.values() if p.kind is p.KEYWORD_ONLY]
    assert keywords == ["model_id", "revision", *backend.options]


@pytest.mark.parametrize(
    "name, option, message",
    [
        ("vllm", {"threads": 2}, "engine 'vllm' does not take option 'threads' (it takes: tensor_parallel_size, "),
        (
            "transformers",
            {"tensor_parallel_size": 2},
            "engine 'transformers' does not take option 'tensor_parallel_size' (it takes: batch_size, threads)",
        ),
        ("vllm", {"batch_size": 16}, "engine 'vllm' does not take option 'batch_size'"),
    ],
)
def test_an_option_the_engine_does_not_take_is_refused_before_loading(name, option, message):
    with pytest.raises(HtebError) as refused:
        create_engine(name, model_path="/nonexistent", model_id="x", revision="x", **option)
    assert message in str(refused.value) and "\n" not in str(refused.value)


# A Qwen3-style chat template: it opens an empty think block when told enable_thinking=False.
QWEN3_TEMPLATE = (Path(__file__).parent / "data" / "qwen3-style-chat-template.jinja").read_text()
CHATML = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>'"
    " + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def test_thinking_is_switched_off_only_where_the_template_reads_the_switch():
    assert chat_template_kwargs(QWEN3_TEMPLATE) == {"enable_thinking": False}
    assert chat_template_kwargs(CHATML) == {} and chat_template_kwargs(None) == {}
    assert chat_template_kwargs({"default": CHATML, "tool_use": QWEN3_TEMPLATE}) == {"enable_thinking": False}


class _Counting(Engine):
    """A deterministic stand-in backend: replies with the text's length, cut ("length") past max_tokens."""

    model_id, revision = "count", "1"

    def __init__(self) -> None:
        self.asked = 0

    def chat_results(self, requests):
        self.asked += len(requests)
        words = [len(r.messages[-1][1].split()) for r in requests]
        return [ChatResult(str(n), "length" if n > r.max_tokens else "stop") for n, r in zip(words, requests)]

    def next_token_logprobs(self, conversations, candidates):
        return [{c: -1.0 for c in candidates} for _ in conversations]


def test_finish_reasons_survive_the_cache_and_old_text_only_entries_are_not_read(tmp_path):
    requests = [
        ChatRequest((("user", "one two three"),), 0.0, 1.0, 2, 1),
        ChatRequest((("user", "one"),), 0.0, 1.0, 2, 1),
    ]
    cache = CallCache(tmp_path / "calls.sqlite")
    old = _key({"kind": "chat", "model": "count", "revision": "1", **asdict(requests[0])})
    cache.put_many({old: "an answer from before finish reasons were kept"})
    backend = _Counting()
    cached = CachedEngine(backend, cache, model_id="count", revision="1", name="count")
    assert cached.chat_results(requests) == [ChatResult("3", "length"), ChatResult("1", "stop")]
    assert backend.asked == 2  # the old entry was not taken for the new kind
    again = CachedEngine(lambda: pytest.fail("cached: no load"), cache, model_id="count", revision="1", name="count")
    assert again.chat_results(requests) == [ChatResult("3", "length"), ChatResult("1", "stop")]
    assert again.chat(requests) == ["3", "1"]  # the judge's view: texts only
