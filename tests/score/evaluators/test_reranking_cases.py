"""Reranking cases built from SciFact: real queries, qrels positives, seeded corpus negatives."""

from __future__ import annotations

import pytest

from hteb_contract.errors import HtebError
from reranking_cases import scifact_reranking
from hteb_contract.sources import read_source_dir


@pytest.fixture(scope="module")
def scifact(shared_data):
    return read_source_dir(shared_data / "SciFact")


def test_built_from_real_queries_positives_and_negatives(scifact):
    built = scifact_reranking(scifact, negatives=5, seed=1)
    assert built.info.task_type == "Reranking"
    original_queries = {q["id"]: q["text"] for q in scifact.tables["queries"]}
    positives = {(r["query_id"], r["doc_id"]) for r in scifact.tables["qrels"] if r["score"] > 0}
    corpus = {d["id"] for d in scifact.tables["corpus"]}
    assert len(built.tables["queries"]) == len({q for q, _ in positives})
    for query in built.tables["queries"]:
        assert original_queries[query["id"]] == query["text"]
    for row in built.tables["top_ranked"]:
        relevant = [d for d in row["doc_ids"] if (row["query_id"], d) in positives]
        negatives = [d for d in row["doc_ids"] if (row["query_id"], d) not in positives]
        assert relevant and len(negatives) == 5 and set(row["doc_ids"]) <= corpus
    zero = {(r["query_id"], r["doc_id"]) for r in built.tables["qrels"] if r["score"] == 0}
    assert len(zero) == 5 * len(built.tables["queries"]) and not zero & positives
    assert {d["id"] for d in built.tables["corpus"]} == {d for r in built.tables["top_ranked"] for d in r["doc_ids"]}


def test_negatives_are_seeded(scifact):
    def negatives(seed):
        return [r["doc_id"] for r in scifact_reranking(scifact, seed=seed).tables["qrels"] if r["score"] == 0]

    assert negatives(7) == negatives(7)
    assert negatives(7) != negatives(8)


def test_refuses_a_non_retrieval_dataset(shared_data):
    with pytest.raises(HtebError, match="Retrieval"):
        scifact_reranking(read_source_dir(shared_data / "STSBenchmark"))
