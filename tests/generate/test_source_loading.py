"""The CPU profile's sampling of the real local datasets."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hteb_generate.sources.sources_table import lookup_source
from hteb_generate.sources.source_loading import cap_lists, cap_texts, load_source, sample_dataset
from hteb_contract.errors import SourceError
from hteb_contract.sources import read_source_dir

MTEB_NAMED = Path(__file__).resolve().parents[1] / "data" / "mteb-subsets"


def test_summeval_lists_cut_with_their_parallel_columns(shared_data):
    full = read_source_dir(shared_data / "SummEval")
    cut = cap_lists(full, 2)
    row, original = cut.eval_rows()[0], full.eval_rows()[0]
    assert row["human_summaries"] == original["human_summaries"][:2]
    assert row["machine_summaries"] == original["machine_summaries"][:2]
    assert row["relevance"] == original["relevance"][:2] and row["systems"] == original["systems"][:2]
    assert row["text"] == original["text"] and cut.ids == full.ids
    assert len(full.eval_rows()[0]["machine_summaries"]) == 16  # the source itself is untouched


def test_cap_texts_keeps_whole_rows_and_their_ids(shared_data):
    full = read_source_dir(shared_data / "STSBenchmark")
    cut = cap_texts(full, 5)
    assert len(cut.eval_rows()) == 2 and cut.ids["test"] == full.ids["test"][:2]
    assert len(cap_texts(full, 1).eval_rows()) == 1  # at least one row, even if it holds more texts


def test_cpu_profile_sample_of_every_sample_dataset(shared_data):
    semrel = load_source(lookup_source("SemRel2024"), source="local", data_dir=shared_data, sample=1, max_texts=4)
    assert [r["lang"] for r in semrel.eval_rows()] == ["afr", "amh"]  # one row per subset, then the cap
    scifact = load_source(lookup_source("SciFact"), source="local", data_dir=shared_data, sample=2, max_texts=1)
    assert len(scifact.tables["queries"]) == 2  # queries are sampled, not capped
    relevant = {r["doc_id"] for r in scifact.tables["qrels"]}
    assert relevant <= {d["id"] for d in scifact.tables["corpus"]}


def test_sample_deals_rows_label_by_label_and_keeps_dataset_order(shared_data):
    """What the dataset card says: round-robin over the labels in order of first appearance."""
    full = read_source_dir(shared_data / "Banking77")
    rows = full.eval_rows()
    first_labels = list(dict.fromkeys(r["label"] for r in rows))[:4]
    expected = sorted(next(i for i, r in enumerate(rows) if r["label"] == label) for label in first_labels)
    assert sample_dataset(full, 4).ids["test"] == [full.ids["test"][i] for i in expected]
    unlabelled = read_source_dir(shared_data / "STSBenchmark")
    assert sample_dataset(unlabelled, 3).ids["test"] == unlabelled.ids["test"][:3]


def test_semrel2024_eng_reads_the_english_subset_of_the_local_copy(shared_data):
    english = load_source(
        lookup_source("SemRel2024-eng"), source="local", data_dir=shared_data, sample=3, max_texts=None
    )
    assert english.name == "SemRel2024-eng" and english.info.subsets == {"eng": ("eng",)}
    assert [r["lang"] for r in english.eval_rows()] == ["eng"] * 3
    assert {(r.subset, r.language) for r in english.iter_texts()} == {("eng", "eng")}
    full = load_source(lookup_source("SemRel2024"), source="local", data_dir=shared_data, sample=None, max_texts=None)
    assert full.name == "SemRel2024" and len(full.eval_rows()) == 7498


def test_a_local_copy_whose_subset_languages_differ_from_the_entry_is_refused(shared_data):
    spec = lookup_source("SemRel2024-eng")
    entry = replace(spec, info=replace(spec.info, subsets={"eng": ("spa",)}))
    with pytest.raises(SourceError, match="subset 'eng' has languages \\['eng'\\]; SemRel2024-eng expects \\['spa'\\]"):
        load_source(entry, source="local", data_dir=shared_data, sample=1, max_texts=None)


def test_sample_takes_rows_of_every_mteb_named_subset():
    pairs = sample_dataset(read_source_dir(MTEB_NAMED / "STSBCrossLingual"), 2)
    assert [r["lang"] for r in pairs.eval_rows()] == ["en-de", "en-de", "en-en", "en-en"]
    classification = sample_dataset(read_source_dir(MTEB_NAMED / "Banking77Ext"), 3)
    assert [(r["lang"], r["label"]) for r in classification.eval_rows()] == [
        ("en", "card_arrival"),
        ("en", "exchange_rate"),
        ("en", "lost_or_stolen_card"),
        ("en-ext", "card_arrival"),
        ("en-ext", "exchange_rate"),
        ("en-ext", "lost_or_stolen_card"),
    ]
    assert len(classification.tables["train"]) == 48  # the training rows are not sampled
