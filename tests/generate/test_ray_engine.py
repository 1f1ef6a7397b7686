"""The Ray engine on a real local Ray cluster (2 workers, SmolLM2 through the transformers engine):
every answer equals the single-process engine's, chunk by chunk."""

from __future__ import annotations

from functools import partial

import pytest

from hteb_generate.engine import CachedEngine, CallCache, ChatRequest, create_engine

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

TEXTS = ["A man is playing a guitar.", "What is the capital of France?", "Name a colour.",
         "The cat sat on the mat.", "How do I reset my card PIN?", "Rain is expected tomorrow.",
         "She reads a book in the park.", "Where is the nearest station?"]


def _requests() -> list[ChatRequest]:
    return [ChatRequest((("system", "Rephrase the text."), ("user", t)), 0.0 if i % 2 else 0.8, 0.9, 10, 1339 + i)
            for i, t in enumerate(TEXTS)]


@pytest.fixture(scope="module")
def ray_engine(smollm2_dir):
    from hteb_generate.engine.ray_engine import RayEngine

    factory = partial(create_engine, "transformers", model_path=str(smollm2_dir), model_id="smollm2-test",
                      revision="test", batch_size=4, threads=1)
    engine = RayEngine(factory, model_id="smollm2-test", revision="test", address="local", workers=2,
                       resources={"num_cpus": 1})
    yield engine
    engine.close()
    ray.shutdown()


def test_chunks_answered_by_two_workers_equal_the_single_process_engine(tmp_path, smollm2_engine, ray_engine):
    single = CachedEngine(smollm2_engine, CallCache(tmp_path / "one.sqlite"), model_id="m", revision="r",
                          name="transformers", commit_every=3)
    spread = CachedEngine(ray_engine, CallCache(tmp_path / "ray.sqlite"), model_id="m", revision="r",
                          name="transformers", commit_every=3)
    reported: list[int] = []
    spread.on_progress = reported.append
    assert spread.chat_results(_requests()) == single.chat_results(_requests())
    assert sum(reported) == len(TEXTS) and spread.calls == len(TEXTS)
    conversations = [r.messages for r in _requests()]
    assert spread.next_token_logprobs(conversations, ["The", "A"]) == single.next_token_logprobs(conversations, ["The", "A"])


def test_an_engine_error_in_a_worker_is_raised_as_itself(ray_engine):
    from hteb_contract.errors import HtebError

    with pytest.raises(HtebError):
        ray_engine.next_token_logprobs([_requests()[0].messages], [""])  # a candidate without tokens
