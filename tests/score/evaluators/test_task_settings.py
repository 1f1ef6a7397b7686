"""The per-task settings table equals the class attributes of the installed mteb 2.26.24."""

from __future__ import annotations

import mteb
import pytest

from hteb_score.evaluators import task_settings


@pytest.mark.parametrize("name", sorted(task_settings.CLASSIFICATION))
def test_classification_settings(name):
    task, ours = mteb.get_task(name), task_settings.CLASSIFICATION[name]
    assert (ours.samples_per_label, ours.n_experiments) == (task.samples_per_label, task.n_experiments)
    assert not task.is_cross_validation


@pytest.mark.parametrize("name", sorted(task_settings.CLUSTERING))
def test_clustering_settings(name):
    task, ours = mteb.get_task(name), task_settings.CLUSTERING[name]
    base = {cls.__name__ for cls in type(task).__mro__}
    assert ("AbsTaskClusteringLegacy" in base) == (ours.kind == "legacy")
    if ours.kind == "fast":
        assert ours.max_fraction_of_documents_to_embed == task.max_fraction_of_documents_to_embed
        assert ours.max_document_to_embed == task.max_document_to_embed
        assert ours.max_documents_per_cluster == task.max_documents_per_cluster
        assert ours.n_clusters == task.n_clusters
        assert ours.k_mean_batch_size == task.k_mean_batch_size
        assert task.max_depth is None


@pytest.mark.parametrize("name", sorted(task_settings.RETRIEVAL))
def test_retrieval_settings(name):
    task, ours = mteb.get_task(name), task_settings.RETRIEVAL[name]
    assert ours.ignore_identical_ids == task.ignore_identical_ids
    assert task.metadata.main_score == "ndcg_at_10"


@pytest.mark.parametrize("name", sorted(task_settings.SUMMARIZATION))
def test_summarization_settings(name):
    task, ours = mteb.get_task(name), task_settings.SUMMARIZATION[name]
    assert (task.evaluator.__name__ == "DeprecatedSummarizationEvaluator") == ours.deprecated


def test_datasets_we_hold_use_listed_tasks(shared_data):
    """Every mteb task named by a dataset of ../shared/data whose type has settings is in the table."""
    import json

    tables = {"Classification": task_settings.CLASSIFICATION, "Clustering": task_settings.CLUSTERING,
              "Retrieval": task_settings.RETRIEVAL, "Summarization": task_settings.SUMMARIZATION}
    for path in shared_data.glob("*/dataset.json"):
        info = json.loads(path.read_text())
        if info["task_type"] in tables:
            assert info["mteb_task"] in tables[info["task_type"]], path


def test_the_mirrored_mteb_is_the_installed_one():
    assert mteb.__version__ == task_settings.MTEB_VERSION
