"""Registry lookups, protocol names and empty datasets fail with one clear HtebError."""

from __future__ import annotations

from dataclasses import replace

import pytest
from evaluator_embeddings import Listed, hashed_bow

from hteb_contract.errors import HtebError
from hteb_score.evaluators import PROTOCOLS, get_evaluator
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_generate.sampling import sample_dataset
from hteb_contract.tasks import TASK_TYPES


def test_every_task_type_has_an_evaluator():
    for name in TASK_TYPES:
        assert name in get_evaluator(name).task_types
    assert PROTOCOLS == ("hteb", "mteb")


def test_unknown_task_type_suggests_the_close_one():
    with pytest.raises(HtebError, match=r"did you mean 'Retrieval'.*known: Classification"):
        get_evaluator("Retreival")


def test_unknown_protocol(shared_data):
    dataset = sample_dataset(read_source_dir(shared_data / "STSBenchmark"), 10)
    evaluator = get_evaluator("STS")
    with pytest.raises(HtebError, match="unknown protocol 'MTEB'"):
        evaluator.evaluate(dataset, Listed(hashed_bow, evaluator.texts(dataset)), protocol="MTEB")


@pytest.mark.parametrize("name", ["STSBenchmark", "TwitterSemEval2015", "Banking77", "TwentyNewsgroups", "SummEval"])
def test_no_rows_left_is_an_error(name, shared_data):
    dataset = read_source_dir(shared_data / name)
    emptied = SourceDataset(replace(dataset.info), {**dataset.tables, dataset.info.eval_split: []}, dataset.origin)
    evaluator = get_evaluator(dataset.info.task_type)
    with pytest.raises(HtebError, match="no rows left"):
        evaluator.evaluate(emptied, Listed(hashed_bow, evaluator.texts(emptied)), protocol="hteb")


def test_retrieval_without_queries_is_an_error(shared_data):
    dataset = read_source_dir(shared_data / "SciFact")
    emptied = SourceDataset(dataset.info, {**dataset.tables, "queries": []}, dataset.origin)
    evaluator = get_evaluator("Retrieval")
    with pytest.raises(HtebError, match="no rows left in 'queries'"):
        evaluator.evaluate(emptied, Listed(hashed_bow, evaluator.texts(emptied)), protocol="mteb")


def test_sts_subset_of_one_pair_is_an_error(shared_data):
    dataset = sample_dataset(read_source_dir(shared_data / "STSBenchmark"), 1)
    evaluator = get_evaluator("STS")
    with pytest.raises(HtebError, match="subset 'default' has 1 pair; a correlation needs at least 2"):
        evaluator.evaluate(dataset, Listed(hashed_bow, evaluator.texts(dataset)), protocol="hteb")


@pytest.mark.parametrize("protocol", ["hteb", "mteb"])
def test_classifiers_are_fitted_once_for_every_variant_of_a_dataset(protocol, shared_data):
    """Variants share the untouched training split: the second variant reuses every fitted model
    (same objects), and a variant whose training rows differ gets new ones."""
    from hteb_score.evaluators import classification

    dataset = sample_dataset(read_source_dir(shared_data / "Banking77"), 40)
    dataset = SourceDataset(dataset.info, {**dataset.tables, "train": dataset.tables["train"][:600]}, dataset.origin)
    evaluator = get_evaluator("Classification")
    reversed_eval = SourceDataset(dataset.info, {**dataset.tables, "test": [
        {**r, "text": " ".join(r["text"].split()[::-1])} for r in dataset.tables["test"]]}, dataset.origin)
    classification._FITTED.clear()
    first = evaluator.evaluate(dataset, Listed(hashed_bow, evaluator.texts(dataset)), protocol=protocol)
    fitted = dict(classification._FITTED)
    evaluator.evaluate(reversed_eval, Listed(hashed_bow, evaluator.texts(reversed_eval)), protocol=protocol)
    assert classification._FITTED == fitted and len(fitted) == (1 if protocol == "hteb" else 10)
    other_train = SourceDataset(dataset.info, {**dataset.tables, "train": dataset.tables["train"][:500]}, dataset.origin)
    evaluator.evaluate(other_train, Listed(hashed_bow, evaluator.texts(other_train)), protocol=protocol)
    assert len(classification._FITTED) > len(fitted)
    again = evaluator.evaluate(dataset, Listed(hashed_bow, evaluator.texts(dataset)), protocol=protocol)
    assert again.value == first.value
