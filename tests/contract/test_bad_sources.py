"""Degenerate source rows (issue 10 item 2): the source reader refuses them in one line naming the file or
table and the row, whatever the task type, and never ends in another exception (fuzzed JSONL rows)."""

from __future__ import annotations

import json
import re
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract.errors import HtebError, SourceError
from hteb_contract.sources import read_source_dir, read_source_parquet, write_source_parquet
from source_copies import copy_source

# dataset -> the table its degenerate row goes into, as in shared/data
TABLES = {
    "STSBenchmark": "test",
    "TwitterSemEval2015": "test",
    "SummEval": "test",
    "Banking77": "test",
    "SciFact": "qrels",
}


def _replace_row(folder: Path, table: str, number: int, line: str) -> None:
    path = folder / f"{table}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[number - 1] = line
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _edit(**changes):
    return lambda row: json.dumps({**row, **changes})


def _drop(field):
    return lambda row: json.dumps({k: v for k, v in row.items() if k != field})


def _raw(template: str):
    """A line written by hand (for what json.dumps would not write): `{row}` is the row's JSON minus its last brace
    and minus the field the template writes (a key given twice is refused on its own: "sts-key-twice")."""
    key = re.search(r'\{row\}, "(\w+)"', template).group(1)
    return lambda row: template.replace("{row}", json.dumps({k: v for k, v in row.items() if k != key})[:-1])


# id -> (dataset, how row 2 of its table is rewritten, what the one line must say)
CASES = {
    "sts-score-text": ("STSBenchmark", _edit(score="high"), "test row 2: score must be a finite number, got 'high'"),
    "sts-score-null": ("STSBenchmark", _edit(score=None), "test row 2: score must be a finite number, got None"),
    "sts-score-bool": ("STSBenchmark", _edit(score=True), "test row 2: score must be a finite number, got True"),
    "sts-score-overflowing": (
        "STSBenchmark",
        _raw('{row}, "score": 1e999}'),
        "test.jsonl:2: not valid JSON (the number 1e999 is beyond a float)",
    ),
    "sts-score-nan-literal": (
        "STSBenchmark",
        _raw('{row}, "score": NaN}'),
        "test.jsonl:2: not valid JSON (NaN is not a JSON number)",
    ),
    "sts-score-infinity-literal": (
        "STSBenchmark",
        _raw('{row}, "score": -Infinity}'),
        "test.jsonl:2: not valid JSON (-Infinity is not a JSON number)",
    ),
    "sts-key-twice": (
        "STSBenchmark",
        lambda row: json.dumps(row)[:-1] + ', "score": 0.5}',
        "test.jsonl:2: not valid JSON (the key 'score' is given twice in one object)",
    ),
    "sts-score-column-missing": ("STSBenchmark", _drop("score"), "test row 2: missing field 'score'"),
    "sts-sentence-null": ("STSBenchmark", _edit(sentence1=None), "test row 2: sentence1 must be a string, got None"),
    "sts-sentence-number": ("STSBenchmark", _edit(sentence2=42), "test row 2: sentence2 must be a string, got 42"),
    "sts-sentence-list": (
        "STSBenchmark",
        _edit(sentence2=["a", "b"]),
        "test row 2: sentence2 must be a string, got ['a', 'b']",
    ),
    "sts-sentence-column-missing": ("STSBenchmark", _drop("sentence2"), "test row 2: missing field 'sentence2'"),
    "sts-row-not-an-object": ("STSBenchmark", lambda row: "[1, 2]", "test.jsonl:2: expected a JSON object"),
    "sts-row-not-json": ("STSBenchmark", lambda row: "{'score': 1}", "test.jsonl:2: not valid JSON"),
    "pair-label-yes": ("TwitterSemEval2015", _edit(label="yes"), "test row 2: label must be 0 or 1, got 'yes'"),
    "pair-label-2": ("TwitterSemEval2015", _edit(label=2), "test row 2: label must be 0 or 1, got 2"),
    "pair-label-true": ("TwitterSemEval2015", _edit(label=True), "test row 2: label must be 0 or 1, got True"),
    "pair-label-float": ("TwitterSemEval2015", _edit(label=1.0), "test row 2: label must be 0 or 1, got 1.0"),
    "pair-label-missing": ("TwitterSemEval2015", _drop("label"), "test row 2: missing field 'label'"),
    "summary-null": (
        "SummEval",
        _edit(machine_summaries=None),
        "test row 2: machine_summaries must be a list of strings, got None",
    ),
    "summary-not-text": (
        "SummEval",
        _edit(human_summaries=["fine", 3]),
        "test row 2: human_summaries must be a list of strings, got ['fine', 3]",
    ),
    "relevance-text": ("SummEval", _edit(relevance=["high"]), "test row 2: relevance must be a list of finite numbers"),
    "classification-text-null": ("Banking77", _edit(text=None), "test row 2: text must be a string, got None"),
    "classification-label-null": ("Banking77", _edit(label=None), "test row 2: label must be a string or an integer"),
    "qrels-score-text": (
        "SciFact",
        _edit(score="relevant"),
        "qrels row 2: score must be an integer relevance grade within int32, as mteb and "
        "pytrec_eval read qrels, got 'relevant'",
    ),
    # issue 24: graded relevance, huge numbers, lone surrogates
    "qrels-score-half": (
        "SciFact",
        _edit(score=0.5),
        "qrels row 2: score must be an integer relevance grade within "
        "int32, as mteb and pytrec_eval read qrels, got 0.5",
    ),
    "qrels-score-1e30": (
        "SciFact",
        _raw('{row}, "score": 1e30}'),
        "qrels row 2: score must be an integer relevance grade within int32",
    ),
    "qrels-score-2-to-the-31": ("SciFact", _edit(score=2**31), "qrels row 2: score must be an integer relevance grade"),
    "qrels-score-huge-integer": (
        "SciFact",
        _raw('{row}, "score": 1' + "0" * 400 + "}"),
        "qrels row 2: score must be an integer relevance grade",
    ),
    "sts-score-huge-integer": (
        "STSBenchmark",
        _raw('{row}, "score": 1' + "0" * 400 + "}"),
        "test row 2: score must be a finite number, got 1000000000",
    ),
    "summary-relevance-huge-integer": (
        "SummEval",
        _raw('{row}, "relevance": [1' + "0" * 400 + "]}"),
        "test row 2: relevance must be a list of finite numbers",
    ),
    "sts-sentence-lone-surrogate": (
        "STSBenchmark",
        _raw('{row}, "sentence1": "caf\\ud800e"}'),
        "test row 2: sentence1 holds a lone surrogate '\\ud800': not Unicode text",
    ),
    "sts-sentence-low-surrogate": (
        "STSBenchmark",
        _raw('{row}, "sentence2": "\\udfff"}'),
        "test row 2: sentence2 holds a lone surrogate '\\udfff'",
    ),
    "summary-lone-surrogate": (
        "SummEval",
        _raw('{row}, "machine_summaries": ["ok", "a\\ud83d"]}'),
        "test row 2: machine_summaries holds a lone surrogate '\\ud83d'",
    ),
    "classification-lone-surrogate": (
        "Banking77",
        _raw('{row}, "text": "\\ud800"}'),
        "test row 2: text holds a lone surrogate",
    ),
    "qrels-doc-id-lone-surrogate": (
        "SciFact",
        _raw('{row}, "doc_id": "d\\ud800"}'),
        "qrels row 2: doc_id holds a lone surrogate",
    ),
    "qrels-doc-id-null": (
        "SciFact",
        _edit(doc_id=None),
        "qrels row 2: doc_id must be a string or an integer, got None",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_refused_degenerate_source_row(tmp_path, shared_data, case):
    name, rewrite, expected = CASES[case]
    folder = copy_source(shared_data, name, tmp_path)
    table = TABLES[name]
    row = json.loads((folder / f"{table}.jsonl").read_text(encoding="utf-8").splitlines()[1])
    _replace_row(folder, table, 2, rewrite(row))
    with pytest.raises(SourceError) as refused:
        read_source_dir(folder)
    message = str(refused.value)
    assert "\n" not in message and refused.value.exit_code == 2
    assert message.startswith(str(folder)) and expected in message


# id -> (dataset, its dataset.json: a dict of changed keys (None deletes one), a whole value or the raw text; the line)
DATASET_JSON = {
    "split-with-a-path": ("STSBenchmark", {"eval_split": "../../x"}, "split '../../x' is not a table name"),
    "train-split-a-list": ("Banking77", {"train_split": ["train"]}, "train_split must be a string, got ['train']"),
    "name-a-number": ("STSBenchmark", {"name": 5}, "name must be a string, got 5"),
    "task-type-missing": ("STSBenchmark", {"task_type": None}, "missing key 'task_type'"),
    "task-type-unknown": ("STSBenchmark", {"task_type": "Translation"}, "unknown task type 'Translation'"),
    "languages-a-number": ("STSBenchmark", {"languages": 5}, "languages must be a list of ISO 639-3 codes, got 5"),
    "languages-a-string": ("STSBenchmark", {"languages": "eng"}, "languages must be a list of ISO 639-3 codes"),
    "not-an-object": ("STSBenchmark", [], "dataset.json: expected a JSON object"),
    "nested-too-deeply": ("STSBenchmark", "[" * 100000, "dataset.json: not valid JSON (nested too deeply)"),
}


@pytest.mark.parametrize("case", DATASET_JSON)
def test_refused_bad_dataset_json(tmp_path, shared_data, case):
    name, change, expected = DATASET_JSON[case]
    folder = copy_source(shared_data, name, tmp_path)
    meta = json.loads((folder / "dataset.json").read_text(encoding="utf-8"))
    if isinstance(change, dict):
        text = json.dumps({k: v for k, v in {**meta, **change}.items() if v is not None})
    else:
        text = change if isinstance(change, str) else json.dumps(change)
    (folder / "dataset.json").write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as refused:
        read_source_dir(folder)
    assert "\n" not in str(refused.value) and str(folder / "dataset.json") in str(refused.value)
    assert expected in str(refused.value)


@pytest.mark.parametrize(
    "case, value, expected",
    [
        ("duplicate-id", "{first}", "test row 2: duplicate id"),
        ("empty-id", "", "test row 2: item id '' is not a non-empty string"),
    ],
    ids=["duplicate-id", "empty-id"],
)
def test_refused_bad_row_id(tmp_path, shared_data, case, value, expected):
    folder = copy_source(shared_data, "SummEval", tmp_path)
    rows = (folder / "test.jsonl").read_text(encoding="utf-8").splitlines()
    first = json.loads(rows[0])["id"]
    _replace_row(folder, "test", 2, _edit(id=value.replace("{first}", first))(json.loads(rows[1])))
    with pytest.raises(SourceError, match=expected):
        read_source_dir(folder)


def test_refused_degenerate_row_of_a_parquet_copy(tmp_path, shared_data):
    """The same checks hold for the parquet copy inside a revision (pyarrow carries NaN where JSON cannot)."""
    folder = copy_source(shared_data, "STSBenchmark", tmp_path)
    dataset = read_source_dir(folder)
    dataset.tables["test"][2]["score"] = math.nan
    write_source_parquet(dataset, tmp_path / "copy")
    with pytest.raises(SourceError, match=r"copy: test row 3: score must be a finite number, got nan$"):
        read_source_parquet(tmp_path / "copy")


# --- fuzz: random JSONL rows -------------------------------------------------------------------------------

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)
FIELDS = [
    "sentence1",
    "sentence2",
    "score",
    "label",
    "text",
    "lang",
    "id",
    "human_summaries",
    "machine_summaries",
    "relevance",
    "query_id",
    "doc_id",
]
ROWS = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=5), VALUES, max_size=7)
LINES = st.lists(
    ROWS.map(json.dumps) | st.text(max_size=20).filter(lambda t: "\n" not in t and "\r" not in t),
    min_size=1,
    max_size=4,
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["STSBenchmark", "TwitterSemEval2015", "SummEval", "MasakhaNEWS"]),
    lines=LINES,
    keep=st.integers(min_value=0, max_value=2),
)
def test_fuzz_source_reader(shared_data, name, lines, keep):
    """Random rows among real ones: the dataset reads, and then every text is a string and every score
    finite, or it is one SourceError line."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = copy_source(shared_data, name, Path(tmp), rows=2)
        table = "test"
        real = (folder / f"{table}.jsonl").read_text(encoding="utf-8").splitlines()[:keep]
        (folder / f"{table}.jsonl").write_text("\n".join(real + lines) + "\n", encoding="utf-8")
        try:
            dataset = read_source_dir(folder)
        except HtebError as refused:
            assert "\n" not in str(refused) and str(refused)
            return
        assert all(isinstance(ref.text, str) for ref in dataset.iter_texts())
        for row in dataset.eval_rows():
            if "score" in row:
                assert isinstance(row["score"], (int, float)) and math.isfinite(row["score"])
