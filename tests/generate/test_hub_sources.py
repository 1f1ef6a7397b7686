"""Hub rows in mteb's layouts -> hteb_score's source layout, on in-memory `datasets.Dataset`s
built from the real local rows (the Hub itself cannot be reached here)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hteb_generate.hub_sources import convert, subset_language
from hteb_generate.registry import lookup_source
from hteb_contract.errors import SourceError
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


def test_missing_config_or_column_is_a_source_error(shared_data):
    with pytest.raises(SourceError, match="missing config, split or column"):
        convert(lookup_source("SciFact"), {"corpus": {"test": []}})
    assert subset_language("en-de") == "eng" and subset_language("afr") == "afr"
    with pytest.raises(SourceError):
        subset_language("xx")
