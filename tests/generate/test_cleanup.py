"""The light clean-ups of raw outputs: each one on real-looking outputs, their order, idempotence,
and their names recorded per attempt by the generator while the raw steps stay as they came.

Sources are real rows of ../shared/data; raw outputs are shaped as the models give them (a
Qwen3-style template opens ``<think>`` in the prompt, so the output holds only its end) or are
real SmolLM2 outputs (tests/generate/data/smollm2_outputs.jsonl).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hteb_generate.transform.cleanup import (
    CLEANUPS,
    Cleaned,
    clean_output,
    drop_think_block,
    is_quoted,
    strip_quotes,
    unquote,
)
from hteb_generate.engine import CachedEngine, CallCache, ChatResult, Engine
from hteb_contract.records import Sampling
from hteb_generate.run.generation import Decoding, TextJob, transform_units
from hteb_generate.transform.transformations import PROMPT_SETS, TRANSFORMATIONS, plan_languages

OUTPUTS = Path(__file__).resolve().parent / "data" / "smollm2_outputs.jsonl"

LOCATE = "How do I locate my card?"  # Banking77 test row 0
QUOTED_HINDI = '"चोरी की तस्वीरें सी सीटीवी में कैद हो गयी।"'  # SemRel2024 test row 5354, sentence2
QUOTED_HEADLINE = "'The barriers to entry have gone - go for it now'"  # MasakhaNEWS test row 377 (eng)


def _row(shared_data: Path, name: str, index: int, field: str) -> str:
    with (shared_data / name).open(encoding="utf-8") as f:
        return json.loads(next(line for i, line in enumerate(f) if i == index))[field]


def test_the_quoted_sources_are_real_rows(shared_data: Path) -> None:
    assert _row(shared_data, "Banking77/test.jsonl", 0, "text") == LOCATE
    assert _row(shared_data, "SemRel2024/test.jsonl", 5354, "sentence2") == QUOTED_HINDI
    assert _row(shared_data, "MasakhaNEWS/test.jsonl", 377, "text") == QUOTED_HEADLINE


# --- drop_think_block -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Qwen3 with thinking on: the template wrote "<think>\n" into the prompt
        (
            "Okay, the user wants a paraphrase of a banking question.\n</think>\n\nHow can I find my card?",
            "How can I find my card?",
        ),
        (
            "<think>\nShort question; keep it a question.\n</think>\n\nWhere can I find my card?",
            "Where can I find my card?",
        ),
        # the empty block a template writes when thinking is switched off
        ("<think>\n\n</think>\n\nHow can I find my card?", "How can I find my card?"),
        ("<think>first</think><think>second</think> Where is my card?", "Where is my card?"),
        ("<think>The user asks for nothing else.</think>\n\n", ""),  # nothing after the block: left to `empty`
    ],
)
def test_drop_think_block(raw: str, expected: str) -> None:
    assert drop_think_block(raw, LOCATE) == expected
    assert clean_output(raw, LOCATE) == Cleaned(expected, ("drop_think_block",))


@pytest.mark.parametrize(
    ("raw", "source"),
    [
        ("<think>\nThe user wants me to rephrase", LOCATE),  # never closed (cut at max_tokens): a reasoning_leak
        ("How can I find my card?", LOCATE),
        ("Where is the </think> tag documented? It closes a block.", "Where is the </think> tag documented?"),
    ],
)
def test_drop_think_block_leaves_unclosed_blocks_and_sources_that_have_the_tag(raw: str, source: str) -> None:
    assert drop_think_block(raw, source) == raw
    assert "drop_think_block" not in clean_output(raw, source).applied


# --- strip_quotes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('"How can I find my card?"', "How can I find my card?"),
        ("“How can I find my card?”\n", "How can I find my card?"),
        ("« Comment puis-je localiser ma carte ? »", "Comment puis-je localiser ma carte ?"),
        ("„Wie finde ich meine Karte?“", "Wie finde ich meine Karte?"),
        ("「カードの場所はどうやって確認できますか？」", "カードの場所はどうやって確認できますか？"),
        ("'I don't know where my card is.'", "I don't know where my card is."),  # an apostrophe is no closing mark
        ("\"'Where is my card?'\"", "Where is my card?"),  # every layer
        ('""', ""),
    ],
)
def test_strip_quotes(raw: str, expected: str) -> None:
    assert strip_quotes(raw, LOCATE) == expected
    assert clean_output(raw, LOCATE) == Cleaned(expected, ("strip_quotes",))


@pytest.mark.parametrize(
    "raw",
    [
        '"Where is my card?" she asked, "and when will it come?"',  # two quotations, not one around it all
        'The "card" has not arrived.',
        '"Where is my card?',  # an opening mark only
        "'Where is my card?\"",  # marks of different pairs
    ],
)
def test_strip_quotes_leaves_text_that_is_not_wrapped(raw: str) -> None:
    assert not is_quoted(raw)
    assert clean_output(raw, LOCATE) == Cleaned(raw, ())


@pytest.mark.parametrize(
    ("source", "output"),
    [
        (QUOTED_HINDI, '"सीसीटीवी में चोरी की तस्वीरें कैद हो गईं।"'),
        (QUOTED_HEADLINE, "'Barriers to entry are gone, so go for it now'"),
    ],
)
def test_strip_quotes_keeps_quotes_the_source_has(source: str, output: str) -> None:
    assert is_quoted(source)
    assert clean_output(output, source) == Cleaned(output, ())


def test_strip_quotes_on_a_real_smollm2_output() -> None:
    with OUTPUTS.open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    record = next(
        r for r in rows if r["transformation"] == "style_change" and r["source"] == "i have not received my card"
    )
    cleaned = clean_output(record["output"], record["source"])
    assert cleaned.applied == ("strip_quotes",)
    assert cleaned.output == record["output"][1:-1]
    quoted = [r for r in rows if is_quoted(r["output"])]
    assert quoted == [record]  # the one wrapped output of the 114


def test_unquote_strips_whitespace_inside_each_layer() -> None:
    assert unquote(' « "Un hombre dibuja." » ') == "Un hombre dibuja."
    assert unquote("no quotes ") == "no quotes"


# --- order, idempotence, names -------------------------------------------------------------------------

RAW_OUTPUTS = [
    'The user wants a formal paraphrase.\n</think>\n\n"How may I locate my card?"',
    "<think>\nKeep it a question.\n</think>\n“Where might my card be?”",
    '"<think>x</think> Where is my card?"',
    '"How can I find my card?"',
    "<think>\n\n</think>\n\nHow can I find my card?",
    "How can I find my card?",
    "<think>\nThe user wants",
    '""',
]


def test_the_clean_ups_run_in_a_fixed_order() -> None:
    assert CLEANUPS.names() == ["drop_think_block", "strip_quotes"]
    both = Cleaned("How may I locate my card?", ("drop_think_block", "strip_quotes"))
    assert clean_output(RAW_OUTPUTS[0], LOCATE) == both
    # quotes around the whole think block: dropping the block first leaves a lone closing mark, kept
    assert clean_output(RAW_OUTPUTS[2], LOCATE) == Cleaned('Where is my card?"', ("drop_think_block",))


@pytest.mark.parametrize("raw", RAW_OUTPUTS)
def test_clean_output_is_idempotent(raw: str) -> None:
    once = clean_output(raw, LOCATE)
    assert clean_output(once.output, LOCATE) == Cleaned(once.output, ())


def test_unknown_clean_up_is_a_user_error() -> None:
    from hteb_contract.errors import HtebError

    with pytest.raises(HtebError, match="unknown clean-up 'strip_quote' \\(did you mean 'strip_quotes'\\?\\)"):
        CLEANUPS.get("strip_quote")


class _Scripted(Engine):
    """A stand-in model that needs no weights: answers every request with the next scripted reply.

    Why not a real model: no small model reliably wraps its answer in a think block and quotes,
    and this test is about what the generator records, not about the model."""

    model_id, revision = "scripted", "test"

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies

    def chat_results(self, requests):
        return [ChatResult(self.replies.pop(0), "stop") for _ in requests]

    def next_token_logprobs(self, conversations, candidates):
        raise AssertionError("this test judges nothing")


def test_generator_records_each_attempts_clean_ups_and_keeps_the_raw_steps(tmp_path: Path, shared_data: Path) -> None:
    source = _row(shared_data, "Banking77/test.jsonl", 0, "text")
    paraphrasing = TRANSFORMATIONS.get("paraphrasing")
    plan = plan_languages("paraphrasing", seed=1339, dataset="Banking77", item="0", source="eng")
    unit = TextJob(1339, "Banking77", paraphrasing, source, plan)
    raw = [
        f"<think>\nThe user wants a paraphrase.\n</think>\n\n{source}",  # cleaned: identical, so retried
        'The user wants it kept a question.\n</think>\n\n"Where can I find my card?"',
    ]
    engine = CachedEngine(
        _Scripted(list(raw)),
        CallCache(tmp_path / "calls.sqlite"),
        model_id="scripted",
        revision="test",
        name="scripted",
    )
    transform_units([unit], engine, PROMPT_SETS.get("paper"), Decoding(Sampling(0.0, 1.0, 64), 0.7, 3))
    first, second = unit.attempts
    assert (first.steps, first.output, first.cleanup, first.errors) == (
        (raw[0],),
        source,
        ("drop_think_block",),
        ("identical",),
    )
    assert (second.steps, second.output, second.cleanup, second.errors) == (
        (raw[1],),
        "Where can I find my card?",
        ("drop_think_block", "strip_quotes"),
        (),
    )
    assert unit.kept.output == "Where can I find my card?"
