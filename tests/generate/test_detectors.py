"""The ten error detectors on real model outputs and on the rules' exact boundaries.

Real outputs: tests/generate/data/smollm2_outputs.jsonl, produced by
tests/generate/data/collect_smollm2_outputs.py (SmolLM2-135M-Instruct, the paper's App. D prompts,
greedy decoding, real source texts of ../shared/data). Boundary cases reuse real source texts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hteb_generate.detectors import DETECTORS, ERROR_TYPES, detect_errors, error_rates, total_error_rate
from hteb_contract.errors import HtebError
from hteb_contract.registry import RegistryError

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "SPEC.md"

OUTPUTS = Path(__file__).resolve().parent / "data" / "smollm2_outputs.jsonl"


@pytest.fixture(scope="module")
def outputs() -> list[dict]:
    with OUTPUTS.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def real(outputs: list[dict], transformation: str, source_start: str) -> dict:
    """The one recorded output of ``transformation`` whose source starts with ``source_start``."""
    found = [r for r in outputs if r["transformation"] == transformation and r["source"].startswith(source_start)]
    assert len(found) == 1, (transformation, source_start, len(found))
    return found[0]


def errors_of(record: dict, transformation: str | None = None) -> list[str]:
    return detect_errors(
        record["output"],
        record["source"],
        transformation=transformation or record["transformation"],
        source_language=record["source_language"],
        expected_language=record["expected_language"],
    )


def errors(
    output: str, source: str, transformation: str = "paraphrasing", lang: str = "eng", expected: str | None = None
) -> list[str]:
    return detect_errors(
        output, source, transformation=transformation, source_language=lang, expected_language=expected or lang
    )


# --- real model outputs -------------------------------------------------------------------------


def test_real_outputs_file_covers_the_model_run(outputs: list[dict]) -> None:
    assert len(outputs) >= 100
    assert {r["transformation"] for r in outputs} >= {
        "paraphrasing",
        "style_change",
        "expansion",
        "summarisation",
        "translation",
    }
    assert all(r["model"].startswith("SmolLM2-135M-Instruct") for r in outputs)


@pytest.mark.parametrize(
    ("transformation", "source_start", "expected"),
    [
        # the model gave the sentence back unchanged
        ("paraphrasing", "A girl is styling her hair.", ["identical"]),
        ("summarisation", "Ons leer immers ons kinders", ["identical"]),
        # asked to paraphrase Afrikaans / isiZulu / isiXhosa, it echoed the instruction in English
        ("paraphrasing", "Venus beweeg tot 16 November", ["wrong_language"]),
        ("paraphrasing", "akulungiswe isimo", ["wrong_language"]),
        ("paraphrasing", "Ingqwalasela kuqoqosho", ["wrong_language"]),
        # 4 isiZulu words -> 29 words of "ugur"; 6 English words -> an answer of 49 words
        ("paraphrasing", "uyazethemba umfundi", ["runaway"]),
        ("paraphrasing", "How do I locate my card?", ["runaway"]),
        # English instruction echo and runaway at once
        ("paraphrasing", "Vashandi vepaMugodhi", ["wrong_language", "runaway"]),
        # a "summary" longer than its input
        ("summarisation", "How do I locate my card?", ["summary_too_long"]),
        ("summarisation", "Venus beweeg tot 16 November", ["summary_too_long"]),
        # translation asked for French, answered mostly in English
        ("translation", "Is there a way to know when my card will arrive?", ["wrong_language"]),
        # nonsense, but Spanish and of a sensible length: the detectors check form, not meaning
        ("translation", "A girl is styling her hair.", []),
        # an Indonesian paraphrase lingua reads as Malay: confusable, not flagged
        ("paraphrasing", "Satanika-2 menikahi", []),
        # a refusal that promises "I'll do my best to assist you"
        ("paraphrasing", "I am still waiting for my card after 1 week.", ["reasoning_leak"]),
        # "Translated text:" in the middle of the output is no prefix leak
        ("paraphrasing", "Vechidiki Voita", []),
        # 364 / 494 SummEval words came back as 70 / 55 words (the run's 96-token cap cut them)
        ("paraphrasing", "Paul Merson has restarted", ["truncated"]),
        ("translation", "Chelsea have made an offer", ["wrong_language", "truncated"]),
        # a real summary of 150 words in 58 words: short on purpose, not truncated
        ("summarisation", "Chelsea have made an offer", []),
    ],
)
def test_real_output_errors(outputs: list[dict], transformation: str, source_start: str, expected: list[str]) -> None:
    assert errors_of(real(outputs, transformation, source_start)) == expected


def test_expansion_of_real_output_is_never_runaway(outputs: list[dict]) -> None:
    record = real(outputs, "expansion", "A group of men play soccer on the beach.")
    assert len(record["output"].split()) > 5 * len(record["source"].split())
    assert "runaway" not in errors_of(record)
    assert "runaway" not in errors_of(record, "summarised_expansion")
    assert "runaway" in errors_of(record, "paraphrasing")


# --- identical, empty, ellipsis, json_fragment --------------------------------------------------


def test_identical_ignores_case_and_surrounding_whitespace(shared_data: Path) -> None:
    with (shared_data / "IsiZuluNews" / "train.jsonl").open(encoding="utf-8") as f:
        source = json.loads(f.readline())["text"]
    assert source != source.strip()  # " uyazethemba umfundi odlule ebunzimeni "
    assert errors("Uyazethemba Umfundi Odlule Ebunzimeni\n", source, lang="zul") == ["identical"]
    assert "identical" not in errors("uyazethemba  umfundi odlule ebunzimeni", source, lang="zul")
    assert "identical" not in errors("uyazethemba umfundi odlule", source, lang="zul")


@pytest.mark.parametrize("output", ["", " ", "\n\t  "])
def test_empty(output: str) -> None:
    found = errors(output, "A young woman is putting stickers all over her face.")
    assert found[0] == "empty" and "truncated" in found


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("...", True),
        ("..", True),
        ("…", True),
        (" … ", True),
        (". . .", False),
        (".", False),
        ("Wait...", False),
        ("...?", False),
    ],
)
def test_ellipsis(output: str, expected: bool) -> None:
    assert ("ellipsis" in errors(output, "Someone is drawing.")) is expected


@pytest.mark.parametrize(
    ("output", "expected"),
    [('{"paraphrase": "A person draws."}', True), ('  ["A person draws."]', True), ("A person draws [a cat].", False)],
)
def test_json_fragment(output: str, expected: bool) -> None:
    assert ("json_fragment" in errors(output, "Someone is drawing.")) is expected


# --- reasoning_leak, prefix_leak -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Let me think. A person is making a drawing.", True),
        ("Here are my reasoning steps: the subject draws.", True),
        ("Step 1: identify the verb. A person is sketching.", True),
        ("I'll rephrase it: a person is sketching.", True),
        ("I’ll rephrase it: a person is sketching.", True),
        ("A person is sketching, step by step.", False),
        ("A person is sketching; they will finish soon.", False),
    ],
)
def test_reasoning_leak(output: str, expected: bool) -> None:
    assert ("reasoning_leak" in errors(output, "Someone is drawing.")) is expected


def test_reasoning_marker_carried_by_the_source_is_no_leak() -> None:
    source = "My phone is not with me at the moment so I will not be able to access the app."  # Banking77
    informal = "Don't have my phone on me rn so I'll not be able to get into the app."
    assert "reasoning_leak" not in errors(informal, source, "style_change")
    assert "reasoning_leak" in errors(informal, "My phone is not with me at the moment.", "style_change")
    # no real source in ../shared/data has "Step N:"; a how-to question keeps its own numbering
    how_to = "Step 1: open the app. Step 2: tap 'Cards'. Why is my card not listed?"
    assert "reasoning_leak" not in errors("Step 1: open the app; step 2: tap Cards. Where is my card?", how_to)


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("Translated text: Un hombre pone tres trozos de carne en una sartén.", True),
        ("Translation: Un hombre pone tres trozos de carne en una sartén.", True),
        ("Paraphrased text: A man places three pieces of meat in a pan.", True),
        ("Paraphrase: A man places three pieces of meat in a pan.", True),
        ("Summary: Man puts meat in pan.", True),
        ("**Summary:** Man puts meat in pan.", True),
        ("summary : Man puts meat in pan.", True),
        ("Summary of events: Man puts meat in pan.", False),
        ("A man puts meat in a pan. Summary: meat.", False),
    ],
)
def test_prefix_leak(output: str, expected: bool) -> None:
    assert ("prefix_leak" in errors(output, "A man puts three pieces of meat into a pan.", "paraphrasing")) is expected


# --- wrong_language --------------------------------------------------------------------------------


def test_wrong_language_never_for_languages_the_detector_cannot_read(shared_data: Path, outputs: list[dict]) -> None:
    with (shared_data / "SemRel2024" / "test.jsonl").open(encoding="utf-8") as f:
        hausa = next(r["sentence1"] for r in map(json.loads, f) if r["lang"] == "hau")
    english = real(outputs, "paraphrasing", "Venus beweeg tot 16 November")["output"]
    assert errors(english, hausa, lang="hau") == []
    assert errors(english, hausa, "translation", lang="hau", expected="amh") == []
    assert errors(english, hausa, "translation", lang="hau", expected="deu") == ["wrong_language"]


def test_wrong_language_checks_the_target_for_translations(outputs: list[dict]) -> None:
    spanish = real(outputs, "translation", "A girl is styling her hair.")
    assert spanish["expected_language"] == "spa"
    assert errors_of(spanish) == []
    assert "wrong_language" in errors(spanish["output"], spanish["source"], "cross_translation", expected="tur")
    # backtranslation's second step goes back to the source language: Spanish there is wrong
    assert "wrong_language" in errors(spanish["output"], spanish["source"], "backtranslation", expected="eng")


def test_wrong_language_arabic_varieties_are_one(shared_data: Path) -> None:
    with (shared_data / "SemRel2024" / "test.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    msa = next(r["sentence2"] for r in rows if r["lang"] == "arb")
    moroccan = next(r["sentence1"] for r in rows if r["lang"] == "ary")
    assert errors(msa, moroccan, lang="ary") == []


def test_wrong_language_false_alarms_on_real_same_language_pairs(shared_data: Path) -> None:
    """sentence2 of a SemRel2024 pair stands in for a correct output in the pair's language."""
    with (shared_data / "SemRel2024" / "test.jsonl").open(encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    for lang in ("afr", "arb", "arq", "ary", "eng", "hin", "ind", "mar", "tel"):
        pairs = [r for r in rows if r["lang"] == lang][:100]
        alarms = sum("wrong_language" in errors(r["sentence2"], r["sentence1"], lang=lang) for r in pairs)
        assert alarms <= 1, (lang, alarms)


def test_wrong_language_not_flagged_when_the_detector_misreads_the_source(shared_data: Path) -> None:
    # English SemRel2024 sentences full of Italian place names, which lingua reads as Italian
    with (shared_data / "SemRel2024" / "test.jsonl").open(encoding="utf-8") as f:
        english = [json.loads(line)["sentence1"] for line in f]
    source = next(t for t in english if t.startswith("Travagliato is a comune"))
    output = next(t for t in english if t.startswith("Pescia is an Italian city"))
    assert errors(output, source, lang="eng") == []
    assert errors(output, "A man is playing a guitar.", lang="eng") == ["wrong_language"]


# --- runaway, truncated, summary_too_long: exact boundaries ----------------------------------------

TEN_WORDS = "A young woman is putting stickers all over her face."  # STSBenchmark, 10 words
THREE_WORDS = "Someone is drawing."  # STSBenchmark, 3 words


def _words(n: int) -> str:
    vocabulary = TEN_WORDS.rstrip(".").split()
    return " ".join(vocabulary[i % len(vocabulary)] for i in range(n))


def test_runaway_boundary_exactly_five_times() -> None:
    assert "runaway" not in errors(_words(50), TEN_WORDS)
    assert "runaway" in errors(_words(51), TEN_WORDS)


@pytest.mark.parametrize("transformation", ["expansion", "summarised_expansion"])
def test_runaway_not_for_expansions(transformation: str) -> None:
    assert "runaway" not in errors(_words(200), TEN_WORDS, transformation)


def test_truncated_boundary_exactly_twenty_percent() -> None:
    assert "truncated" not in errors(_words(2), TEN_WORDS)
    assert "truncated" in errors(_words(1), TEN_WORDS)


def test_truncated_for_summaries_only_of_inputs_up_to_three_words() -> None:
    assert len(THREE_WORDS.split()) == 3
    assert "truncated" in errors("", THREE_WORDS, "summarisation")
    assert "truncated" not in errors("Drawing.", THREE_WORDS, "summarisation")  # 1 word of 3: 33%
    assert "truncated" not in errors(_words(1), TEN_WORDS, "summarisation")  # 10%, but 10 > 3 words
    assert "truncated" in errors(_words(1), TEN_WORDS, "summarised_expansion")


def test_summary_too_long_boundary() -> None:
    assert "summary_too_long" not in errors(_words(10), TEN_WORDS, "summarisation")
    assert "summary_too_long" in errors(_words(11), TEN_WORDS, "summarisation")
    assert "summary_too_long" not in errors(_words(11), TEN_WORDS, "summarised_expansion")
    assert "summary_too_long" not in errors(_words(11), TEN_WORDS, "paraphrasing")


def test_empty_source_has_no_length_errors() -> None:
    assert errors(_words(3), "", "paraphrasing") == []


# --- registry, order, rates --------------------------------------------------------------------------


def test_errors_come_in_spec_order_and_every_type_has_a_rule() -> None:
    table = SPEC.read_text(encoding="utf-8").split("## Error types", 1)[1].split("\n## ", 1)[0]
    rows = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("| ")]
    assert ERROR_TYPES == tuple(rows[1:])  # SPEC.md's table, header row left out
    found = errors("Summary: " + _words(60), TEN_WORDS, "summarisation")
    assert found == ["prefix_leak", "runaway", "summary_too_long"]


def test_every_error_type_has_exactly_one_rule_and_nothing_else_has_one() -> None:
    assert DETECTORS.names() == list(ERROR_TYPES)
    assert all(callable(rule) for _, rule in DETECTORS.items())


def test_unknown_names_are_user_errors() -> None:
    with pytest.raises(HtebError, match="unknown transformation 'summarization' \\(did you mean 'summarisation'\\?\\)"):
        errors("x", "y", "summarization")
    with pytest.raises(HtebError, match="unknown error type 'runaways' \\(did you mean 'runaway'\\?\\)"):
        DETECTORS.get("runaways")


def test_registry_refuses_a_second_rule_for_an_error_type() -> None:
    with pytest.raises(RegistryError, match="error type 'empty' is registered twice"):
        DETECTORS.register("empty")(lambda output, source, ctx: False)


def test_total_error_rate_counts_an_item_once() -> None:
    per_item = [["identical", "wrong_language"], [], ["runaway"], []]
    assert total_error_rate(per_item) == 0.5
    rates = error_rates(per_item)
    assert rates["identical"] == rates["runaway"] == 0.25 and rates["empty"] == 0.0
    assert rates["total"] == 0.5
    with pytest.raises(HtebError):
        total_error_rate([])


def test_real_run_error_rates(outputs: list[dict]) -> None:
    per_item = [errors_of(r) for r in outputs]
    rates = error_rates(per_item)
    assert rates["total"] == sum(1 for e in per_item if e) / len(per_item)
    assert max(rates[name] for name in ERROR_TYPES) <= rates["total"] <= sum(rates[name] for name in ERROR_TYPES)
