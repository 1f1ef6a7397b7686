"""Language identification on real sentences of the benchmark's multilingual datasets."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from hteb_generate.transform import langid

PER_LANGUAGE = 30


def _by_language(path: Path, field: str) -> dict[str, list[str]]:
    texts: dict[str, list[str]] = defaultdict(list)
    with path.open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if len(texts[row["lang"]]) < PER_LANGUAGE:
                texts[row["lang"]].append(row[field])
    return texts


@pytest.fixture(scope="module")
def semrel(shared_data: Path) -> dict[str, list[str]]:
    return _by_language(shared_data / "SemRel2024" / "test.jsonl", "sentence1")


@pytest.fixture(scope="module")
def masakha(shared_data: Path) -> dict[str, list[str]]:
    return _by_language(shared_data / "MasakhaNEWS" / "test.jsonl", "text")


def _shares(texts: list[str], code: str) -> tuple[float, float]:
    """(share recognised as ``code``, share confidently read as another language)."""
    found = [langid.detect_language(t) for t in texts]
    right = sum(1 for f in found if f is not None and langid.same_language(f, code))
    wrong = sum(1 for f in found if f is not None and not langid.same_language(f, code))
    return right / len(texts), wrong / len(texts)


@pytest.mark.parametrize("code", ["afr", "arb", "arq", "ary", "eng", "hin", "ind", "mar", "tel"])
def test_semrel_sentences_are_recognised(semrel: dict[str, list[str]], code: str) -> None:
    right, wrong = _shares(semrel[code], code)
    assert right >= 0.8, (code, right)
    assert wrong <= 0.1, (code, wrong)


@pytest.mark.parametrize("code", ["eng", "fra", "lug", "sna", "som", "swa", "yor", "xho"])
def test_masakhanews_headlines_are_recognised(masakha: dict[str, list[str]], code: str) -> None:
    right, wrong = _shares(masakha[code], code)
    assert right >= 0.8, (code, right)
    assert wrong <= 0.1, (code, wrong)


def test_isizulu_news_is_zulu(shared_data: Path) -> None:
    with (shared_data / "IsiZuluNews" / "train.jsonl").open(encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for _, line in zip(range(PER_LANGUAGE), f)]
    assert langid.detect_language(texts[0]) == "zul"  # " uyazethemba umfundi odlule ebunzimeni "
    right, wrong = _shares(texts, "zul")
    assert right >= 0.8 and wrong <= 0.1, (right, wrong)


def test_arabic_varieties_are_one_language(semrel: dict[str, list[str]]) -> None:
    assert langid.detect_language(semrel["ary"][0]) == "ara"
    assert langid.same_language("arb", "ary") and langid.same_language("ara", "arq")
    assert langid.is_supported("arq")
    assert not langid.same_language("eng", "deu")


def test_close_languages_are_confusable_not_merged() -> None:
    assert langid.same_language("xho", "zul") and langid.same_language("ind", "msa")
    assert langid.same_language("hin", "mar") and langid.same_language("MAR", "hin ")
    assert langid.same_language("arq", "fas") and langid.same_language("urd", "ary")
    assert not langid.same_language("ara", "fas") and not langid.same_language("arb", "urd")
    assert langid.canonical("zul") == "zul"


@pytest.mark.parametrize("code", ["amh", "tir"])
def test_unsupported_ethiopic_script_is_not_guessed(masakha: dict[str, list[str]], code: str) -> None:
    assert code in langid.UNSUPPORTED_BENCHMARK_LANGUAGES
    assert all(langid.detect_language(t) is None for t in masakha[code])


def test_unsupported_languages_are_listed_in_code_and_docstring() -> None:
    expected = {"amh", "asm", "hau", "ibo", "kan", "kin", "lin", "mal", "orm", "ory", "pcm", "run", "tir"}
    assert set(langid.UNSUPPORTED_BENCHMARK_LANGUAGES) == expected
    documented = set(re.findall(r"\b([a-z]{3}) [A-Z]", langid.__doc__ or ""))
    assert expected <= documented
    assert not langid.UNSUPPORTED_BENCHMARK_LANGUAGES & langid.SUPPORTED
    assert langid.HTEB_LANGUAGES - langid.UNSUPPORTED_BENCHMARK_LANGUAGES <= langid.SUPPORTED


@pytest.mark.parametrize("text", ["", "   ", "42", "3.5 / 5", "OK", "..."])
def test_no_basis_no_answer(text: str) -> None:
    assert langid.detect_language(text) is None


def test_detector_info_is_recordable() -> None:
    info = langid.detector_info()
    assert info["library"] == "lingua-language-detector" and info["languages"] == 75
    assert info["unsupported_benchmark_languages"] == sorted(langid.UNSUPPORTED_BENCHMARK_LANGUAGES)
    assert json.loads(json.dumps(info)) == info
