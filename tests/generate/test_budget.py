"""Token estimates, each step's max_tokens, and what the generation stage does with finish reasons."""

from __future__ import annotations

import pytest
from hteb_contract.specs.transformations import transformation_table
from hteb_generate.transform.budget import estimate_tokens, estimate_tokens_of_chars, max_tokens_for, step_max_tokens
from hteb_generate.engine import CachedEngine, CallCache, ChatResult, Engine
from hteb_contract.records import Sampling
from hteb_generate.run.generation import Decoding, TextJob, transform_units
from hteb_generate.transform.transformations import PROMPT_SETS, TRANSFORMATIONS, LanguagePlan


TABLE = transformation_table()


@pytest.mark.parametrize(
    "text, tokens",
    [
        ("A man is playing a guitar.", 7),  # 26 Latin characters / 4 = 6.5
        ("Où est ma carte ?", 5),  # é and ù are Latin: 17 / 4 = 4.25
        ("Где моя карта?", 5),  # Cyrillic letters 3 per token, space and ? 4: 11/3 + 3/4 = 4.42
        ("カードはどこですか", 6),  # 9 kana / 1.5
        ("मेरा कार्ड कहाँ है", 9),  # 16 Devanagari code points / 2 + 3 spaces / 4 = 8.75
        ("", 0),
    ],
)
def test_tokens_are_characters_over_a_rate_per_script(text, tokens):
    assert estimate_tokens(text) == tokens


def test_counts_without_texts_use_the_script_of_the_language():
    assert estimate_tokens_of_chars(100, "Latn") == 25.0
    assert estimate_tokens_of_chars(90, "Jpan") == estimate_tokens_of_chars(90, "Hang") == 60.0
    assert estimate_tokens_of_chars(100, "Arab") == pytest.approx(33.33, abs=0.01)
    assert estimate_tokens_of_chars(100, "Ethi") == estimate_tokens_of_chars(100, "Zzzz") == 50.0


def test_a_step_budget_grows_with_its_input_between_the_floor_and_the_ceiling():
    expand, paraphrase, translate = (TABLE.template(name) for name in ("expand", "paraphrase", "translate"))
    assert max_tokens_for(expand, 300, 1024, 4096) == 6 * 300 + 64
    assert max_tokens_for(expand, 1375, 1024, 4096) == 4096  # ArguAna's longest query: the ceiling
    assert max_tokens_for(paraphrase, 100, 1024, 4096) == 1024  # short texts keep the floor
    assert max_tokens_for(translate, 700, 1024, 4096) == 2 * 700 + 64
    assert max_tokens_for(expand, 300, 48, None) == 48  # no ceiling: every step gets max_tokens
    assert step_max_tokens(TABLE.get("expansion").steps[0], "word " * 240, 1024, 4096) == 1864


class _Capped(Engine):
    """A stand-in backend: answers the text plus a sentence, stopped by "length" when max_tokens is under 1500."""

    model_id, revision = "capped", "1"

    def __init__(self) -> None:
        self.max_tokens: list[int] = []

    def chat_results(self, requests):
        self.max_tokens += [r.max_tokens for r in requests]
        return [
            ChatResult(r.messages[-1][1] + " It matters to everyone.", "length" if r.max_tokens < 1500 else "stop")
            for r in requests
        ]

    def next_token_logprobs(self, conversations, candidates):
        raise AssertionError("not used")


@pytest.mark.slow
def test_requests_get_their_step_budget_and_a_length_stop_is_truncated(tmp_path):
    long_text = (
        "The committee argues that the proposal should be adopted without delay. " * 16
    )  # 1,152 chars, 288 tokens
    short_text = "The proposal should be adopted."
    units = [
        TextJob(1339, "ArguAna", TRANSFORMATIONS.get("expansion"), long_text, LanguagePlan("eng", None, None)),
        TextJob(
            1339, "ArguAna", TRANSFORMATIONS.get("summarised_expansion"), short_text, LanguagePlan("eng", None, None)
        ),
    ]
    backend = _Capped()
    engine = CachedEngine(backend, CallCache(tmp_path / "calls.sqlite"), model_id="capped", revision="1", name="t")
    decoding = Decoding(Sampling(0.0, 1.0, 1024), 0.7, 2, max_tokens_ceiling=4096)
    transform_units(units, engine, PROMPT_SETS.get("paper"), decoding)
    expansion, two_step = units
    assert sorted(set(backend.max_tokens)) == [1024, 6 * 288 + 64]
    assert expansion.attempts[0].finish_reasons == ("stop",) and "truncated" not in expansion.attempts[0].errors
    assert [a.finish_reasons for a in two_step.attempts] == [("length", "length")] * 2  # retried, cut again
    assert all("truncated" in a.errors for a in two_step.attempts)
