"""The two protocols as objects: what each answers per task type, and the settings each evaluator
reports for the result card."""

from __future__ import annotations

from dataclasses import replace

import pytest
from cases import CASES
from evaluator_embeddings import context, evaluate, hashed_bow

from hteb_contract.sources import read_source_dir
from hteb_contract.mteb_settings import (
    ClassificationSettings,
    ClusteringSettings,
    RetrievalSettings,
    SummarizationSettings,
)
from hteb_contract.tasks import TASK_TYPES
from hteb_score.evaluators import task_settings
from hteb_score.evaluators.protocol import HTEB, MTEB, PROTOCOLS


def test_the_registry_holds_both_protocols():
    assert PROTOCOLS.get("hteb") is HTEB and PROTOCOLS.get("mteb") is MTEB
    assert MTEB.mteb_version == task_settings.MTEB_VERSION and HTEB.mteb_version is None


def test_estimator_seed_rule():
    assert [MTEB.estimator_seed(s) for s in (42, 7)] == [task_settings.SEED, task_settings.SEED]
    assert [HTEB.estimator_seed(s) for s in (42, 7)] == [42, 7]


def test_main_metrics_are_the_task_types_own():
    for name, spec in TASK_TYPES.items():
        assert (MTEB.main_metric(name), HTEB.main_metric(name)) == (spec.mteb_main_score, spec.metric)
    assert (MTEB.main_metric("PairClassification"), HTEB.main_metric("PairClassification")) == ("max_ap", "ap")


@pytest.mark.parametrize(
    ("rule", "table"),
    [
        ("few_shot", task_settings.INSTALLED.of(ClassificationSettings)),
        ("clustering", task_settings.INSTALLED.of(ClusteringSettings)),
        ("retrieval", task_settings.INSTALLED.of(RetrievalSettings)),
        ("summarization", task_settings.INSTALLED.of(SummarizationSettings)),
    ],
)
def test_mteb_reads_the_task_table_and_its_defaults(rule, table):
    per_task = getattr(MTEB, rule)
    for name, settings in table.items():
        assert per_task(name) is settings
    assert per_task("NoSuchTask") == per_task(None) == type(next(iter(table.values())))()


def test_hteb_rules_do_not_follow_mteb_task_classes():
    for task in (*task_settings.INSTALLED.of(ClassificationSettings), None):
        assert HTEB.few_shot(task) is None
    for task in (*task_settings.INSTALLED.of(ClusteringSettings), None):
        assert HTEB.clustering(task).kind == "legacy" and HTEB.clustering(task).one_set_per_subset
    for task in (*task_settings.INSTALLED.of(SummarizationSettings), None):
        assert not HTEB.summarization(task).deprecated
    for task in (*task_settings.INSTALLED.of(RetrievalSettings), None):
        assert HTEB.retrieval(task) == MTEB.retrieval(task)  # self-hit removal in both


@pytest.mark.parametrize(
    ("case", "protocol", "expected"),
    [
        ("Banking77", "hteb", {"classifier": "LogisticRegression", "max_iter": 100, "train": "full", "seed": 7}),
        (
            "Banking77",
            "mteb",
            {
                "classifier": "LogisticRegression",
                "max_iter": 100,
                "train": "few-shot",
                "samples_per_label": 8,
                "n_experiments": 10,
                "seed": 42,
            },
        ),
        (
            "TwentyNewsgroups",
            "hteb",
            {
                "algorithm": "MiniBatchKMeans",
                "kind": "legacy",
                "documents": "all",
                "cluster_sets": "one per subset",
                "batch_size": 500,
                "row_order": "by sha256(seed, row id)",
                "seed": 7,
            },
        ),
        (
            "MasakhaNEWS",
            "hteb",
            {
                "algorithm": "MiniBatchKMeans",
                "kind": "legacy",
                "documents": "all",
                "cluster_sets": "one per subset",
                "batch_size": 500,
                "row_order": "by sha256(seed, row id)",
                "seed": 7,
            },
        ),
        (
            "MasakhaNEWSClusterSets",
            "hteb",
            {
                "algorithm": "MiniBatchKMeans",
                "kind": "legacy",
                "documents": "all",
                "cluster_sets": "one per subset",
                "batch_size": 500,
                "row_order": "by sha256(seed, row id)",
                "seed": 7,
            },
        ),
        (
            "MasakhaNEWS",
            "mteb",
            {
                "algorithm": "MiniBatchKMeans",
                "kind": "legacy",
                "documents": "all",
                "cluster_sets": "5 contiguous per subset (np.array_split)",
                "batch_size": 500,
                "seed": 42,
            },
        ),
        (
            "MasakhaNEWSClusterSets",
            "mteb",
            {
                "algorithm": "MiniBatchKMeans",
                "kind": "legacy",
                "documents": "all",
                "cluster_sets": "by the rows' cluster_set",
                "batch_size": 500,
                "seed": 42,
            },
        ),
        (
            "TwentyNewsgroups",
            "mteb",
            {
                "algorithm": "MiniBatchKMeans",
                "kind": "fast",
                "max_fraction_of_documents_to_embed": 0.04,
                "max_document_to_embed": None,
                "bootstrap_rounds": 10,
                "documents_per_round": 16384,
                "batch_size": 512,
                "seed": 42,
            },
        ),
        (
            "SciFactSelfHits",
            "hteb",
            {
                "similarity": "cosine",
                "search": "exact",
                "top_k": 1000,
                "k_values": [1, 3, 5, 10, 20, 100, 1000],
                "ignore_identical_ids": True,
            },
        ),
        ("SummEval", "hteb", {"similarity": "cosine", "correlation": "spearman", "deprecated_evaluator": False}),
        ("SummEval", "mteb", {"similarity": "cosine", "correlation": "spearman", "deprecated_evaluator": True}),
    ],
)
def test_evaluators_report_the_settings_they_used(case, protocol, expected, shared_data):
    result = evaluate(CASES[case][0](shared_data), hashed_bow, context(protocol, seed=7))
    assert result.settings == expected


def test_every_evaluator_reports_settings(shared_data):
    for case in ("STSBenchmark", "TwitterSemEval2015", "SciFactReranking"):
        assert evaluate(CASES[case][0](shared_data), hashed_bow, context("mteb")).settings


def test_an_mteb_task_with_its_own_main_score_is_scored_by_it(shared_data):
    mteb = pytest.importorskip("mteb")
    for name, metric in task_settings.INSTALLED.main_scores.items():
        assert mteb.get_task(name).metadata.main_score == metric
    # IsiZuluNews rows named as mteb's SentimentAnalysisHindi: the mteb protocol reports f1, hteb accuracy
    news = read_source_dir(shared_data / "IsiZuluNews")
    hindi_like = replace(news, info=replace(news.info, mteb_task="SentimentAnalysisHindi"))
    scored = evaluate(hindi_like, hashed_bow, context("mteb"))
    assert scored.main_metric == "f1" and scored.value == pytest.approx(scored.details["default"]["f1"])
    assert evaluate(hindi_like, hashed_bow, context("hteb")).main_metric == "accuracy"
