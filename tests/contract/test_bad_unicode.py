"""Lone surrogates in source texts (issue 24): JSON may spell half a UTF-16 pair (`"\\ud800"`), which
Python reads into a str that no UTF-8 encoder takes. It used to pass `hteb-generate validate` and
die with UnicodeEncodeError at the embedding cache key after the model had loaded. The source reader
refuses it in one line, wherever it sits in a text; a whole pair (an emoji) stays text."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract.errors import SourceError
from hteb_contract.sources import read_source_dir
from hteb_generate.cli.app import main as generate
from source_copies import copy_source

#: dataset -> (table, a text field of its rows)
TEXTS = {
    "STSBenchmark": ("test", "sentence1"),
    "TwitterSemEval2015": ("test", "sentence2"),
    "Banking77": ("test", "text"),
    "SciFact": ("queries", "text"),
    "MasakhaNEWS": ("test", "text"),
}


def _set_text(folder: Path, table: str, field: str, number: int, escaped: str) -> None:
    """Row `number`'s `field` set to the JSON string body `escaped` (written as is: `\\ud800` stays an escape)."""
    path = folder / f"{table}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[number - 1])
    row[field] = "@@TEXT@@"
    lines[number - 1] = json.dumps(row).replace('"@@TEXT@@"', f'"{escaped}"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


SURROGATES = st.integers(0xD800, 0xDFFF).map(lambda c: f"\\u{c:04x}")
PLAIN = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters='"\\'), max_size=12)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(TEXTS)), before=PLAIN, surrogate=SURROGATES, after=PLAIN, row=st.integers(1, 3))
def test_refused_lone_surrogate_anywhere(shared_data, name, before, surrogate, after, row):
    table, field = TEXTS[name]
    if surrogate[2:4] in ("d8", "d9", "da", "db") and after.startswith("\\u"):
        return  # PLAIN holds no backslash: a high half is never completed
    with tempfile.TemporaryDirectory() as tmp:
        folder = copy_source(shared_data, name, Path(tmp))
        _set_text(folder, table, field, row, before + surrogate + after)
        with pytest.raises(SourceError) as refused:
            read_source_dir(folder)
    message = str(refused.value)
    assert "\n" not in message and f"{table} row {row}: {field} holds a lone surrogate" in message


def test_a_whole_pair_is_text(tmp_path, shared_data):
    folder = copy_source(shared_data, "STSBenchmark", tmp_path)
    _set_text(folder, "test", "sentence1", 2, "smile \\ud83d\\ude00")
    assert read_source_dir(folder).eval_rows()[1]["sentence1"] == "smile \N{GRINNING FACE}"


def test_refused_lone_surrogate_in_a_corpus_title(tmp_path, shared_data):
    folder = copy_source(shared_data, "SciFact", tmp_path)
    _set_text(folder, "corpus", "title", 1, "Title \\udc00")
    with pytest.raises(SourceError, match="corpus row 1: title holds a lone surrogate"):
        read_source_dir(folder)


def test_refused_by_generate_validate(tmp_path, shared_data, capsys):
    """`hteb-generate validate` reads the sources as the run does: the run would die later, so validate refuses."""
    data = tmp_path / "data"
    folder = copy_source(shared_data, "STSBenchmark", data, rows=6)
    _set_text(folder, "test", "sentence1", 1, "\\ud800")
    with pytest.raises(SystemExit) as refused:
        generate(
            [
                "validate",
                "--seed",
                "1339",
                "--profile",
                "noise",
                "--datasets",
                "STSBenchmark",
                "--transformations",
                "numerisation",
                "--data-dir",
                str(data),
                "--store",
                str(tmp_path / "store"),
                "--cache-dir",
                str(tmp_path / "cache"),
            ]
        )
    err = capsys.readouterr().err
    assert refused.value.code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "test row 1: sentence1 holds a lone surrogate '\\ud800'" in err
