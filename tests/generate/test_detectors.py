"""The ten error detectors on real model outputs, on the cases of issue 9, on adversarial outputs
and on the rules' exact boundaries.

Real outputs: tests/generate/data/smollm2_outputs.jsonl, produced by
tests/generate/data/collect_smollm2_outputs.py (SmolLM2-135M-Instruct, the paper's App. D prompts,
greedy decoding, real source texts of ../shared/data); they go through the clean-ups first, as in
the generator. Adversarial outputs: tests/generate/data/adversarial_outputs.jsonl, a table of
outputs that should and should not trip each error type, on real source texts where
../shared/data has one (each row names its origin; the test checks the text is that row's).
Boundary cases reuse real source texts.
"""

from __future__ import annotations

import json
from pathlib import Path

import importlib.util
import re
from itertools import islice

import pytest
from hteb_contract.specs.transformations import transformation_spec
from hteb_generate.checks import detectors
from hteb_generate.transform.cleanup import clean_output
from hteb_generate.checks.detector_rules import UNSPACED_SCRIPTS, count_words
from hteb_generate.checks.detectors import DETECTORS, ERROR_TYPES, detect_errors, error_rates, total_error_rate
from hteb_contract.errors import HtebError
from hteb_contract.common.registry import RegistryError

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "SPEC.md"

OUTPUTS = Path(__file__).resolve().parent / "data" / "smollm2_outputs.jsonl"
ADVERSARIAL = Path(__file__).resolve().parent / "data" / "adversarial_outputs.jsonl"


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
    """The errors the generator records: the detectors read the cleaned output."""
    return detect_errors(
        clean_output(record["output"], record["source"]).output,
        record["source"],
        transformation=transformation_spec(transformation or record["transformation"]),
        source_language=record["source_language"],
        expected_language=record["expected_language"],
    )


def errors(
    output: str,
    source: str,
    transformation: str = "paraphrasing",
    lang: str = "eng",
    expected: str | None = None,
    finish_reason: str | None = None,
) -> list[str]:
    return detect_errors(
        output,
        source,
        transformation=transformation_spec(transformation),
        source_language=lang,
        expected_language=expected or lang,
        finish_reason=finish_reason,
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
        # identical but for a doubled space: the source has "1 week.  Is this ok?", the output one space
        # (was [] before issue 9, which counts whitespace differences as no change)
        ("summarisation", "I am still waiting for my card after 1 week.", ["identical"]),
        # a refusal in quotes: strip_quotes removes them, the refusal is still 40 words for 5
        ("style_change", "i have not received my card", ["runaway"]),
        # translation asked for French, answered mostly in English, with an "Explanation:" paragraph
        # (reasoning_leak since issue 9: a line opening with "Explanation:" is commentary)
        ("translation", "Is there a way to know when my card will arrive?", ["reasoning_leak", "wrong_language"]),
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


def test_identical_ignores_case_whitespace_quotes_and_a_final_full_stop(shared_data: Path) -> None:
    with (shared_data / "IsiZuluNews" / "train.jsonl").open(encoding="utf-8") as f:
        source = json.loads(f.readline())["text"]
    assert source != source.strip()  # " uyazethemba umfundi odlule ebunzimeni "
    assert errors("Uyazethemba Umfundi Odlule Ebunzimeni\n", source, lang="zul") == ["identical"]
    # issue 9: inner whitespace no longer counts (this doubled space was "not identical" before)
    assert errors("uyazethemba  umfundi odlule ebunzimeni", source, lang="zul") == ["identical"]
    assert errors("“uyazethemba umfundi odlule ebunzimeni.”", source, lang="zul") == ["identical"]
    assert "identical" not in errors("uyazethemba umfundi odlule", source, lang="zul")
    assert "identical" not in errors("uyazethemba umfundi odlule ebunzimeni?", source, lang="zul")


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
    [
        ('{"paraphrase": "A person draws."}', True),
        ('  ["A person draws."]', True),
        ("[1, 2]", True),
        ("{", True),
        ("A person draws [a cat].", False),
        ("[1] A person draws.", False),
        ("{A person} draws.", False),
    ],
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


# --- the cases of issue 9 (item 6): bad outputs that got through, good ones that were flagged -----------

LOCATE = "How do I locate my card?"  # Banking77 test row 0
CYCLING = "A man is cycling."  # STSBenchmark test row 12, sentence1
#: Banking77 test rows 0 and 1 rendered in Japanese: ../shared/data holds no Japanese source text
JA_LOCATE = "カードの場所はどうやって確認できますか？"
JA_NOT_RECEIVED = "一週間以上前に注文した新しいカードがまだ届いていません。"


def _row(shared_data: Path, name: str, index: int, field: str) -> str:
    with (shared_data / name).open(encoding="utf-8") as f:
        return json.loads(next(islice(f, index, None)))[field]


def test_issue_sources_are_real_rows(shared_data: Path) -> None:
    assert _row(shared_data, "Banking77/test.jsonl", 0, "text") == LOCATE
    assert _row(shared_data, "STSBenchmark/test.jsonl", 12, "sentence1") == CYCLING


@pytest.mark.parametrize(
    ("case", "raw", "source", "transformation", "expected", "cleanup"),
    [
        ("code fence", "```\nHow can I find my card?\n```", LOCATE, "paraphrasing", ["json_fragment"], ()),
        (
            "Sure! Here's a paraphrase:",
            "Sure! Here's a paraphrase: How can I find my card?",
            LOCATE,
            "paraphrasing",
            ["prefix_leak"],
            (),
        ),
        (
            "**Translation (Spanish):**",
            "**Translation (Spanish):** ¿Cómo localizo mi tarjeta?",
            LOCATE,
            "translation",
            ["prefix_leak"],
            (),
        ),
        ("Traducción:", "Traducción: ¿Cómo localizo mi tarjeta?", LOCATE, "translation", ["prefix_leak"], ()),
        ("Rephrased:", "Rephrased: How can I find my card?", LOCATE, "paraphrasing", ["prefix_leak"], ()),
        (
            "closed think block",
            "<think>\nThe user wants a paraphrase.\n</think>\n\nHow can I find my card?",
            LOCATE,
            "paraphrasing",
            [],
            ("drop_think_block",),
        ),
        (
            "unclosed think block",
            "<think>\nThe user wants a paraphrase of a banking question, so",
            LOCATE,
            "paraphrasing",
            ["reasoning_leak"],
            (),
        ),
        (
            "Okay, so the user wants",
            "Okay, so the user wants a paraphrase. How can I find my card?",
            LOCATE,
            "paraphrasing",
            ["reasoning_leak"],
            (),
        ),
        (
            "(Note: …)",
            "How can I find my card? (Note: I kept the question form.)",
            LOCATE,
            "paraphrasing",
            ["reasoning_leak"],
            (),
        ),
        ("identical but a final period", "A man is cycling", CYCLING, "paraphrasing", ["identical"], ()),
        ("identical but quotes", '"A man is cycling."', CYCLING, "paraphrasing", ["identical"], ("strip_quotes",)),
        ("identical but doubled spaces", "A man  is cycling.", CYCLING, "paraphrasing", ["identical"], ()),
    ],
)
def test_issue_bad_outputs_are_caught(
    case: str, raw: str, source: str, transformation: str, expected: list[str], cleanup: tuple[str, ...]
) -> None:
    cleaned = clean_output(raw, source)
    assert cleaned.applied == cleanup, case
    target = "spa" if transformation == "translation" else "eng"
    assert errors(cleaned.output, source, transformation, expected=target) == expected, case


def test_issue_output_cut_at_max_tokens_is_truncated() -> None:
    cut = "How can I find out where my bank card is, and"  # long enough by words
    assert errors(cut, LOCATE) == errors(cut, LOCATE, finish_reason="stop") == []
    assert errors(cut, LOCATE, finish_reason="length") == ["truncated"]
    assert errors(cut, LOCATE, "summarisation", finish_reason="length") == ["truncated", "summary_too_long"]


def test_issue_japanese_pivots_and_japanese_to_spanish_are_not_runaway(shared_data: Path) -> None:
    english = _row(shared_data, "Banking77/test.jsonl", 1, "text")
    # an English text's Japanese pivot, checked as generation checks the first step of backtranslation
    assert len(JA_NOT_RECEIVED.split()) * 5 < len(english.split())  # one token: "truncated" by whitespace
    assert errors(JA_NOT_RECEIVED, english, "translation", expected="jpn") == []
    # a Japanese text's English pivot, its way back, and its translation to Spanish
    pivot = "I ordered a new card more than a week ago and still have not received it."
    spanish = "Todavía no he recibido mi nueva tarjeta; la pedí hace más de una semana."
    assert len(pivot.split()) > 5 * len(JA_NOT_RECEIVED.split())  # "runaway" by whitespace
    assert errors(pivot, JA_NOT_RECEIVED, "translation", lang="jpn", expected="eng") == []
    assert (
        errors("一週間以上前に頼んだ新しいカードがまだ来ていません。", JA_NOT_RECEIVED, "backtranslation", lang="jpn")
        == []
    )
    assert errors(spanish, JA_NOT_RECEIVED, "translation", lang="jpn", expected="spa") == []


def test_issue_i_ll_inside_a_correct_translation_is_no_reasoning_leak(shared_data: Path) -> None:
    afrikaans = _row(shared_data, "SemRel2024/test.jsonl", 61, "sentence1")  # "Ek sal Obesa Lodge ... aanbeveel."
    faithful = ["I'll recommend Obesa Lodge to anyone at any time.", "Honestly, I'll recommend Obesa Lodge to anyone."]
    for output in faithful:
        assert errors(output, afrikaans, "translation", lang="afr", expected="eng") == []
        assert errors(output, afrikaans, "cross_translation", lang="afr", expected="eng") == []
    leak = "I'll translate it: I recommend Obesa Lodge to anyone at any time."
    assert errors(leak, afrikaans, "translation", lang="afr", expected="eng") == ["reasoning_leak"]
    # outside the cross-language transformations the paper's marker stands, unless the source has it
    assert errors(faithful[0], "Obesa Lodge is worth recommending to anyone.", "style_change") == ["reasoning_leak"]
    assert errors(faithful[0], "I will recommend Obesa Lodge to anyone.", "style_change") == []


def test_issue_a_source_that_starts_with_a_bracket(shared_data: Path) -> None:
    title = _row(shared_data, "SciFact/corpus.jsonl", 3366, "title")
    assert title.startswith("[Vitamin D")
    spanish = "[La vitamina D y la latitud como factores ambientales en la esclerosis múltiple]."
    assert errors(spanish, title, "translation", expected="spa") == []
    assert errors('{"title": "' + spanish[1:-2] + '"}', title, "translation", expected="spa") == ["json_fragment"]
    # a bracketed word in an output whose source has none is text, not JSON
    assert errors("[Vitamin D] Latitude and vitamin D as causes of multiple sclerosis.", CYCLING) == []


# --- words of scripts written without spaces ----------------------------------------------------------------


def test_words_of_spaced_scripts_are_whitespace_tokens(shared_data: Path) -> None:
    """Latin, Arabic, Devanagari, Ethiopic, Telugu, ... real texts: the count is exactly str.split()'s."""
    with (shared_data / "SemRel2024" / "test.jsonl").open(encoding="utf-8") as f:
        texts = [r[field] for r in map(json.loads, f) for field in ("sentence1", "sentence2")]
    unspaced = re.compile("[" + "".join(script.characters for script in UNSPACED_SCRIPTS) + "]")
    mixed = [t for t in texts if unspaced.search(t)]
    assert all(count_words(t) == len(t.split()) for t in texts if t not in mixed)
    # 4 Indonesian sentences quote Han names: "(南京析津府)" is 5 characters at 1.5, not one token
    assert len(mixed) == 4
    nanjing = next(t for t in mixed if "(南京析津府)" in t)
    assert count_words(nanjing) == pytest.approx(len(nanjing.split()) - 1 + 5 / 1.5)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("男性がギターを弾いている。", 12 / 2.3),  # Japanese: kana present, so Han counts at 2.3 too
        ("我一个多星期前订的新卡还没有收到。", 16 / 1.5),  # Chinese: Han alone, 1.5
        ("2024年に東京へ", 1 + 5 / 2.3),  # the digits make one word more
        ("Visa カードの場所は？", 1 + 7 / 2.3),
        ("ฉันยังไม่ได้รับบัตรใหม่ ฉันสั่งไป", 32 / 4.5),  # Thai: two tokens, 32 characters
        ("「」。", 1.0),  # punctuation alone: one token as str.split() has it
    ],
)
def test_words_of_unspaced_scripts_are_characters_over_the_rate(text: str, words: float) -> None:
    assert count_words(text) == pytest.approx(words)


def test_characters_per_word_are_measured_on_massive_and_stated_in_the_docstring(shared_data: Path) -> None:
    """Rate = mean characters of the language's MASSIVE test utterances / English's x English characters
    per word (Banking77, counting the space); rounded to 0.1. Lao is not in MASSIVE and takes Thai's."""
    spec = importlib.util.find_spec("mteb")
    assert spec is not None and spec.origin is not None
    stats_file = Path(spec.origin).parent / "descriptive_stats" / "Classification" / "MassiveIntentClassification.json"
    subsets = json.loads(stats_file.read_text(encoding="utf-8"))["test"]["hf_subset_descriptive_stats"]
    length = {name: s["text_statistics"]["average_text_length"] for name, s in subsets.items()}
    with (shared_data / "Banking77" / "test.jsonl").open(encoding="utf-8") as f:
        english = [json.loads(line)["text"] for line in f]
    english_chars_per_word = sum(len(t) + 1 for t in english) / sum(len(t.split()) for t in english)
    assert english_chars_per_word == pytest.approx(5.04, abs=0.005)
    massive = {
        "Japanese": ["ja"],
        "Chinese": ["zh-CN", "zh-TW"],
        "Thai": ["th"],
        "Lao": ["th"],
        "Khmer": ["km"],
        "Myanmar": ["my"],
    }
    assert [s.name for s in UNSPACED_SCRIPTS] == list(massive)
    for script in UNSPACED_SCRIPTS:
        ratios = [length[code] / length["en"] for code in massive[script.name]]
        assert round(sum(ratios) / len(ratios) * english_chars_per_word, 1) == script.chars_per_word, script.name
        assert f"{script.name} {script.chars_per_word}" in detectors.__doc__


# --- adversarial outputs: a table, five or more per error type, both ways ------------------------------------


def _adversarial() -> list[dict]:
    with ADVERSARIAL.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f]


CASES = _adversarial()


def _source(case: dict, shared_data: Path) -> str:
    """The row's source text: read from ../shared/data where it names a row (and checked against the table)."""
    origin = case["origin"]
    if "file" not in origin:
        return case["source"]
    text = _row(shared_data, origin["file"], origin["row"], origin["field"])
    assert case["source"] in (None, text), origin
    return text


@pytest.mark.parametrize(
    "case", CASES, ids=[f"{c['error']}-{'fires' if c['fires'] else 'quiet'}-{i}" for i, c in enumerate(CASES)]
)
def test_adversarial_output(case: dict, shared_data: Path) -> None:
    source = _source(case, shared_data)
    found = detect_errors(
        clean_output(case["output"], source).output,
        source,
        transformation=transformation_spec(case["transformation"]),
        source_language=case["source_language"],
        expected_language=case["expected_language"],
        finish_reason=case["finish_reason"],
    )
    assert (case["error"] in found) is case["fires"], case["why"]


def test_adversarial_table_covers_every_error_type_both_ways() -> None:
    for name in ERROR_TYPES:
        rows = [c for c in CASES if c["error"] == name]
        assert len(rows) >= 5 and {c["fires"] for c in rows} == {True, False}, name
    written = [c for c in CASES if "file" not in c["origin"]]
    assert all(c["origin"]["renders"] for c in written)  # a written source says what real row it renders
    assert len(written) <= len(CASES) // 5


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
