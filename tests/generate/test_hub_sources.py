"""Hub rows in mteb's layouts -> hteb_score's source layout, on in-memory `datasets.Dataset`s
built from the real local rows (the Hub itself cannot be reached here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hteb_generate import hub_sources
from hteb_generate.hub_converters import subset_language
from hteb_generate.hub_sources import convert
from hteb_generate.registry import lookup_source
from hteb_contract.errors import SourceError
from hteb_contract.registry import Registry
from hteb_contract.sources import read_source_dir

datasets = pytest.importorskip("datasets")
Dataset = datasets.Dataset


def _rows(shared_data: Path, name: str):
    return read_source_dir(shared_data / name)


def test_sts_rows_map_one_to_one(shared_data):
    local = _rows(shared_data, "STSBenchmark")
    rows = local.eval_rows()[:5]
    raw = {"default": {"test": Dataset.from_list(rows)}}
    converted = convert(lookup_source("STSBenchmark"), raw)
    assert [(r["sentence1"], r["sentence2"], r["score"]) for r in converted.eval_rows()] == [
        (r["sentence1"], r["sentence2"], r["score"]) for r in rows
    ]
    assert converted.origin.startswith("hf://mteb/stsbenchmark-sts@b0fddb5")


def test_pair_classification_lists_in_one_row_are_exploded(shared_data):
    rows = _rows(shared_data, "TwitterSemEval2015").eval_rows()[:6]
    hub = Dataset.from_list([{
        "sentence1": [r["sentence1"] for r in rows],
        "sentence2": [r["sentence2"] for r in rows],
        "labels": [r["label"] for r in rows],
    }])
    converted = convert(lookup_source("TwitterSemEval2015"), {"default": {"test": hub}})
    assert [(r["sentence1"], r["label"]) for r in converted.eval_rows()] == [(r["sentence1"], r["label"]) for r in rows]


def test_clustering_sentences_and_labels_lists(shared_data):
    rows = _rows(shared_data, "TwentyNewsgroups").eval_rows()[:8]
    hub = Dataset.from_list([{"sentences": [r["text"] for r in rows], "labels": [r["label"] for r in rows]}])
    converted = convert(lookup_source("TwentyNewsgroups"), {"default": {"test": hub}})
    assert [r["text"] for r in converted.eval_rows()] == [r["text"] for r in rows]


def test_language_subsets_become_a_lang_column(shared_data):
    local = _rows(shared_data, "SemRel2024")
    entry = lookup_source("SemRel2024")
    raw = {}
    for subset in entry.hf_subsets:
        subset_rows = [{k: r[k] for k in ("sentence1", "sentence2", "score")} for r in local.eval_rows() if r["lang"] == subset]
        raw[subset] = {"test": Dataset.from_list(subset_rows[:3])}
    converted = convert(entry, raw)
    langs = {r["lang"] for r in converted.eval_rows()}
    assert langs == set(entry.hf_subsets)
    assert {t.language for t in converted.iter_texts()} == langs


def test_retrieval_configs_and_mteb_column_names(shared_data):
    local = _rows(shared_data, "SciFact")
    corpus = Dataset.from_list([{"_id": d["id"], "title": d.get("title", ""), "text": d["text"]} for d in local.tables["corpus"][:50]])
    queries = Dataset.from_list([{"_id": q["id"], "text": q["text"]} for q in local.tables["queries"][:10]])
    qrels = Dataset.from_list([
        {"query-id": r["query_id"], "corpus-id": r["doc_id"], "score": r["score"]} for r in local.tables["qrels"][:10]
    ])
    raw = {"corpus": {"test": corpus}, "queries": {"test": queries}, "default": {"test": qrels}}
    converted = convert(lookup_source("SciFact"), raw)
    assert converted.tables["queries"][0] == {"id": str(local.tables["queries"][0]["id"]), "text": local.tables["queries"][0]["text"]}
    assert converted.tables["qrels"][0]["doc_id"] == str(local.tables["qrels"][0]["doc_id"])
    assert [t.table for t in converted.iter_texts()] == ["queries"] * 10


def test_classification_reads_eval_and_train(shared_data):
    local = _rows(shared_data, "Banking77")
    raw = {"default": {"test": Dataset.from_list(local.tables["test"][:4]), "train": Dataset.from_list(local.tables["train"][:4])}}
    converted = convert(lookup_source("Banking77"), raw)
    assert len(converted.tables["train"]) == 4 and converted.eval_rows()[0]["text"] == local.tables["test"][0]["text"]


SCIFACT = "mteb/scifact@d56462d0e63a25450459c4f213e49ffdb866f7f9"


def _scifact_raw(queries: list[dict], split: str = "test") -> dict:
    return {"corpus": {"test": Dataset.from_list([{"_id": "d1", "title": "", "text": "A document."}])},
            "queries": {split: Dataset.from_list(queries)},
            "default": {"test": Dataset.from_list([{"query-id": "q1", "corpus-id": "d1", "score": 1}])}}


def _refused(entry_name: str, raw: dict) -> str:
    with pytest.raises(SourceError) as refused:
        convert(lookup_source(entry_name), raw)
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_missing_config_is_named():
    assert _refused("SciFact", {"corpus": {"test": []}}) == f"{SCIFACT}: no config 'queries' (has: corpus)"


def test_a_missing_split_is_named_with_its_config():
    raw = _scifact_raw([{"_id": "q1", "text": "A query?"}], split="dev")
    assert _refused("SciFact", raw) == f"{SCIFACT}: no split 'test' in config 'queries' (has: dev)"


def test_a_missing_column_is_named_with_its_config():
    raw = _scifact_raw([{"_id": "q1", "question": "A query?"}])
    assert _refused("SciFact", raw) == f"{SCIFACT}: no column 'text' in config 'queries' (has: _id, question)"
    raw = _scifact_raw([{"key": "q1", "text": "A query?"}])
    assert _refused("SciFact", raw) == f"{SCIFACT}: no column '_id' or 'id' in config 'queries' (has: key, text)"
    sts = {"default": {"test": Dataset.from_list([{"sentence1": "a", "sentence2": "b"}])}}
    assert _refused("STSBenchmark", sts).endswith("no column 'score' in config 'default' (has: sentence1, sentence2)")


def test_an_empty_split_is_named():
    raw = {"default": {"test": []}}
    assert _refused("TwitterSemEval2015", raw).endswith("split 'test' of config 'default' has no rows")


def test_a_key_error_inside_a_converter_is_not_reported_as_missing_data(monkeypatch):
    def broken(hub):
        return {}["bug"]

    monkeypatch.setattr(hub_sources, "CONVERTERS", Registry("Hub task type", entries={"STS": broken}))
    with pytest.raises(KeyError, match="bug"):
        convert(lookup_source("STSBenchmark"), {"default": {"test": []}})


def test_subset_language():
    assert subset_language("en-de") == "eng" and subset_language("afr") == "afr"
    with pytest.raises(SourceError, match="no ISO 639-3 code for Hub subset 'xx'"):
        subset_language("xx")
