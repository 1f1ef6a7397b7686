"""Reading the real shared/data layout, and what each task type transforms."""

from __future__ import annotations

import json
import shutil

import pytest

from hteb_contract.errors import SourceError
from hteb_contract.sources import list_source_dirs, read_source_dir, read_source_parquet, write_source_parquet
from hteb_generate.sampling import sample_dataset

# Row counts from shared/data/SOURCES.md.
EXPECTED_ROWS = {
    ("STSBenchmark", "test"): 1379,
    ("SemRel2024", "test"): 7498,
    ("Banking77", "train"): 10003,
    ("Banking77", "test"): 3080,
    ("IsiZuluNews", "train"): 752,
    ("MasakhaNEWS", "test"): 6242,
    ("TwentyNewsgroups", "test"): 7532,
    ("TwitterSemEval2015", "test"): 838,
    ("TwitterURLCorpus", "test"): 9334,
    ("SciFact", "corpus"): 5183,
    ("SciFact", "queries"): 300,
    ("SciFact", "qrels"): 339,
    ("SummEval", "test"): 100,
}


def test_every_shared_dataset_reads(shared_data):
    names = list_source_dirs(shared_data)
    assert {"STSBenchmark", "SciFact", "SummEval", "STS12"} <= set(names)
    for name in names:
        dataset = read_source_dir(shared_data / name)
        assert dataset.name == name
        for (ds, table), rows in EXPECTED_ROWS.items():
            if ds == name:
                assert len(dataset.tables[table]) == rows


def test_texts_transformed_per_task_type(shared_data):
    scifact = read_source_dir(shared_data / "SciFact")
    refs = list(scifact.iter_texts())
    assert len(refs) == 300 and {r.table for r in refs} == {"queries"}
    assert refs[0].item_id == "1" and refs[0].field == "text" and refs[0].language == "eng"

    summeval = read_source_dir(shared_data / "SummEval")
    refs = list(summeval.iter_texts())
    assert len(refs) == 100 * (11 + 16)
    assert refs[0].field == "human_summaries[0]"
    assert refs[-1].field == "machine_summaries[15]"

    banking = read_source_dir(shared_data / "Banking77")
    refs = list(banking.iter_texts())
    assert len(refs) == 3080 and {r.table for r in refs} == {"test"}

    semrel = read_source_dir(shared_data / "SemRel2024")
    refs = list(semrel.iter_texts())
    assert len(refs) == 2 * 7498
    assert refs[0].item_id == "AFR-test-1" and refs[0].language == "afr"
    assert {r.field for r in refs} == {"sentence1", "sentence2"}


def test_with_texts_replaces_and_drops(shared_data):
    stsb = sample_dataset(read_source_dir(shared_data / "STSBenchmark"), 4)
    upper = stsb.with_texts(lambda ref: ref.text.upper())
    assert [r["sentence1"] for r in upper.eval_rows()] == [r["sentence1"].upper() for r in stsb.eval_rows()]
    assert [r["score"] for r in upper.eval_rows()] == [r["score"] for r in stsb.eval_rows()]
    assert stsb.eval_rows()[0]["sentence1"] != upper.eval_rows()[0]["sentence1"]  # original untouched
    dropped = stsb.with_texts(lambda ref: None if ref.item_id == "1" else ref.text)
    assert dropped.ids["test"] == ["0", "2", "3"]

    summ = sample_dataset(read_source_dir(shared_data / "SummEval"), 2)
    changed = summ.with_texts(lambda ref: ref.field)
    assert changed.eval_rows()[0]["machine_summaries"][3] == "machine_summaries[3]"
    assert changed.eval_rows()[0]["text"] == summ.eval_rows()[0]["text"]


def test_sample_keeps_every_language_and_every_positive(shared_data):
    semrel = sample_dataset(read_source_dir(shared_data / "SemRel2024"), 3)
    langs = [r["lang"] for r in semrel.eval_rows()]
    assert len(langs) == 3 * 12 and len(set(langs)) == 12

    scifact = sample_dataset(read_source_dir(shared_data / "SciFact"), 5)
    docs = {d["id"] for d in scifact.tables["corpus"]}
    assert len(scifact.tables["queries"]) == 5
    assert all(q["doc_id"] in docs for q in scifact.tables["qrels"])
    assert len(docs) >= 50


def test_parquet_round_trip(tmp_path, shared_data):
    for name in ("SummEval", "SciFact", "Banking77"):
        dataset = sample_dataset(read_source_dir(shared_data / name), 3)
        write_source_parquet(dataset, tmp_path / name)
        back = read_source_parquet(tmp_path / name)
        assert back.info == dataset.info
        assert back.tables == dataset.tables


@pytest.fixture
def broken(tmp_path, shared_data):
    folder = tmp_path / "STSBenchmark"
    shutil.copytree(shared_data / "STSBenchmark", folder)
    return folder


def test_malformed_json_line_is_named(broken):
    with open(broken / "test.jsonl", "a", encoding="utf-8") as handle:
        handle.write('{"sentence1": "a", \n')
    with pytest.raises(SourceError, match=r"test.jsonl:1380: not valid JSON"):
        read_source_dir(broken)


def test_missing_field_is_named(broken):
    with open(broken / "test.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"sentence1": "a", "sentence2": "b"}) + "\n")
    with pytest.raises(SourceError, match=r"test row 1380: missing field 'score'"):
        read_source_dir(broken)


def test_unknown_task_type_and_missing_metadata(broken):
    meta = json.loads((broken / "dataset.json").read_text())
    (broken / "dataset.json").write_text(json.dumps(dict(meta, task_type="Translation")))
    with pytest.raises(SourceError, match="unknown task type 'Translation'"):
        read_source_dir(broken)
    (broken / "dataset.json").unlink()
    with pytest.raises(SourceError, match="no dataset.json"):
        read_source_dir(broken)


def test_missing_table_file(broken):
    (broken / "test.jsonl").unlink()
    with pytest.raises(SourceError, match="missing test.jsonl"):
        read_source_dir(broken)


def test_sampled_item_ids_are_those_of_the_full_dataset(tmp_path, shared_data):
    full = read_source_dir(shared_data / "SemRel2024")
    sample = sample_dataset(full, 2)
    by_id = dict(zip(full.ids["test"], full.eval_rows()))
    assert all(by_id[i] == row for i, row in zip(sample.ids["test"], sample.eval_rows()))
    masakha = sample_dataset(read_source_dir(shared_data / "MasakhaNEWS"), 2)
    assert masakha.ids["test"][:3] == ["0", "81", "376"]  # row 81 is amh's second label; eng starts at row 376
    write_source_parquet(masakha, tmp_path / "m")
    back = read_source_parquet(tmp_path / "m")
    assert back.ids == masakha.ids and back.tables == masakha.tables
    assert "_hteb_item_id" not in back.eval_rows()[0]


@pytest.mark.parametrize(("name", "labels"), [("TwitterSemEval2015", 2), ("Banking77", 4), ("TwentyNewsgroups", 4)])
def test_sample_deals_rows_out_label_by_label(shared_data, name, labels):
    """These sources are sorted by label: the first 4 rows would hold a single class."""
    full = read_source_dir(shared_data / name)
    assert len({r["label"] for r in full.eval_rows()[:4]}) == 1
    sample = sample_dataset(full, 4)
    assert len({r["label"] for r in sample.eval_rows()}) == labels
    position = {i: n for n, i in enumerate(full.ids[full.info.eval_split])}
    assert [position[i] for i in sample.ids[sample.info.eval_split]] == sorted(position[i] for i in sample.ids[sample.info.eval_split])
