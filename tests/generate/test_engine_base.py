"""The backend registry and its options, without loading any model."""

from __future__ import annotations

import inspect

import pytest
from hteb_generate.engine import ENGINES, create_engine
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
        ("transformers", {"tensor_parallel_size": 2},
         "engine 'transformers' does not take option 'tensor_parallel_size' (it takes: batch_size, threads)"),
        ("vllm", {"batch_size": 16}, "engine 'vllm' does not take option 'batch_size'"),
    ],
)
def test_an_option_the_engine_does_not_take_is_refused_before_loading(name, option, message):
    with pytest.raises(HtebError) as refused:
        create_engine(name, model_path="/nonexistent", model_id="x", revision="x", **option)
    assert message in str(refused.value) and "\n" not in str(refused.value)
