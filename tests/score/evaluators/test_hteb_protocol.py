"""The `hteb` protocol (the paper's evaluation) against mteb's own code configured to that rule.

Each hteb rule has an mteb equivalent: STS Spearman of cosine = mteb `cosine_spearman`; pair AP of
cosine = mteb's `cosine_ap`; full-train classification = mteb's SklearnEvaluator given the whole
training split in its order (row order matters: lbfgs stops at 100 iterations); clustering on every document = mteb's legacy clustering; retrieval nDCG@10
and reranking MAP = mteb's trec metrics; summarisation = mteb's fixed (v2) evaluator, even for a
dataset that stands for the v1 task `SummEval`, whose mteb number keeps a bug.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from datasets import Dataset
from mteb._evaluators.sklearn_evaluator import SklearnEvaluator
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from cases import CASES, banking77
from evaluator_embeddings import context, evaluate, hashed_bow
from hteb_score.mteb_interop.adapter import mteb_results

from hteb_score.evaluators import EVALUATORS
from hteb_score.evaluators.clustering import hashed_order
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_generate.sources.source_loading import sample_dataset

TOLERANCE = 1e-6


def _hteb(dataset: SourceDataset, fn, seed: int = 42):
    return evaluate(dataset, fn, context("hteb", seed))


def _embeddings(kind: str, request):
    return hashed_bow if kind == "hashed" else request.getfixturevalue("minilm")


KINDS = ["hashed", pytest.param("minilm", marks=pytest.mark.slow)]  # the real model is slow


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(
    ("case", "task", "key", "metric"),
    [
        ("STSBenchmark", "STSBenchmark", "cosine_spearman", "spearman"),
        ("TwitterSemEval2015", "TwitterSemEval2015", "cosine_ap", "ap"),
        ("SciFact", "SciFact", "ndcg_at_10", "ndcg_at_10"),
        ("SciFactReranking", "SciDocsRR", "map_at_1000", "map"),
        ("SummEval", "SummEvalSummarization.v2", "cosine_spearman", "spearman"),
    ],
)
def test_hteb_rule_equals_mteb_metric(case, task, key, metric, kind, request, shared_data):
    fn = _embeddings(kind, request)
    dataset = CASES[case][0](shared_data)
    ours = _hteb(dataset, fn)
    assert ours.main_metric == metric
    theirs = mteb_results(task, dataset, fn)
    assert ours.subsets["default"] == pytest.approx(theirs["default"][key], abs=TOLERANCE)


@pytest.mark.parametrize("kind", KINDS)
def test_classification_trains_on_the_full_train_split(kind, request, shared_data):
    fn = _embeddings(kind, request)
    dataset = banking77(shared_data)
    ours = _hteb(dataset, fn)
    assert ours.main_metric == "accuracy"
    train, test = dataset.tables["train"], dataset.tables["test"]
    mteb_evaluator = SklearnEvaluator(
        Dataset.from_dict({"text": [r["text"] for r in train], "label": [r["label"] for r in train]}),
        Dataset.from_dict({"text": [r["text"] for r in test], "label": [r["label"] for r in test]}),
        label_column_name="label",
        evaluator_model=LogisticRegression(max_iter=100, random_state=42),
    )
    predicted = mteb_evaluator(fn([r["text"] for r in train], None), fn([r["text"] for r in test], None))
    assert ours.value == pytest.approx(accuracy_score([r["label"] for r in test], predicted), abs=TOLERANCE)
    few_shot = evaluate(dataset, fn, context("mteb"))
    assert ours.value != few_shot.value  # 20 rows per label vs mteb's 8: the protocols differ


@pytest.mark.parametrize("kind", KINDS)
def test_clustering_uses_every_document(kind, request, shared_data):
    fn = _embeddings(kind, request)
    dataset = sample_dataset(read_source_dir(shared_data / "TwentyNewsgroups"), 7532)
    rows = dataset.tables["test"][::25]  # ~300 subject lines across all 20 newsgroups
    dataset = SourceDataset(dataset.info, {"test": rows}, dataset.origin)
    ours = _hteb(dataset, fn)
    assert ours.main_metric == "v_measure" and ours.settings["row_order"] == "by sha256(seed, row id)"
    hashed = hashed_order(list(range(len(rows))), dataset.ids["test"], 42)
    assert hashed != sorted(hashed)
    reordered = SourceDataset(dataset.info, {"test": [rows[i] for i in hashed]}, dataset.origin)
    legacy = mteb_results("TwentyNewsgroupsClustering", reordered, fn)  # mteb's legacy class, all documents
    assert ours.value == pytest.approx(legacy["default"]["v_measure"], abs=TOLERANCE)
    assert _hteb(dataset, fn, seed=7).value != ours.value  # the run seed reaches MiniBatchKMeans


def test_clustering_reads_each_row_at_the_place_its_id_gives_it_whatever_rows_are_dropped(shared_data):
    """An item keeps its place in every variant, dropped rows or not, so a delta measures the texts: the rows
    left after dropping some are in the order they had among all."""
    dataset = read_source_dir(shared_data / "TwentyNewsgroups")
    ids = dataset.ids["test"][:400]
    everything = hashed_order(list(range(len(ids))), ids, 42)
    kept = [i for i in range(len(ids)) if i % 3]
    assert hashed_order(kept, ids, 42) == [i for i in everything if i % 3]
    assert hashed_order(kept, ids, 7) != hashed_order(kept, ids, 42)  # the run's seed decides the places


def test_summarization_hteb_ignores_the_v1_bug(shared_data):
    dataset = CASES["SummEval"][0](shared_data)
    assert dataset.info.mteb_task == "SummEval"
    assert evaluate(dataset, hashed_bow, context("hteb")).value != evaluate(dataset, hashed_bow, context("mteb")).value


def test_multilingual_subsets_are_averaged(shared_data):
    dataset = CASES["SemRel2024"][0](shared_data)
    ours = _hteb(dataset, hashed_bow)
    assert sorted(ours.subsets) == sorted(dataset.info.languages)
    assert ours.value == pytest.approx(sum(ours.subsets.values()) / len(ours.subsets))
    theirs = mteb_results("SemRel24STS", dataset, hashed_bow)
    for subset, value in ours.subsets.items():
        assert value == pytest.approx(theirs[subset]["cosine_spearman"], abs=TOLERANCE)


def test_transformed_variant_keeps_corpus_embeddings(shared_data):
    """Retrieval texts(): a transformed variant changes query texts only, so documents repeat."""
    dataset = CASES["SciFact"][0](shared_data)
    variant = dataset.with_texts(lambda ref: ref.text.upper())
    evaluator = EVALUATORS.get("Retrieval")
    documents = {t for t in evaluator.texts(dataset) if t[1] == "document"}
    assert documents == {t for t in evaluator.texts(variant) if t[1] == "document"}
    assert not {t for t in evaluator.texts(dataset) if t[1] == "query"} & {
        t for t in evaluator.texts(variant) if t[1] == "query"
    }
    assert replace(dataset.info) == variant.info
