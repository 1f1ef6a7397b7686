"""Registry lookups, protocol names and empty datasets fail with one clear HtebError; a run's
classifier cache fits each classifier once."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest
from evaluator_embeddings import context, evaluate, hashed_bow

from hteb_contract.errors import HtebError
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_contract.tasks import TASK_TYPES
from hteb_generate.sources.source_loading import sample_dataset
from hteb_score.evaluators import EVALUATORS, ClassifierCache, EvaluationContext
from hteb_score.evaluators.protocol import PROTOCOLS


def test_every_task_type_has_an_evaluator():
    assert sorted(EVALUATORS.names()) == sorted(TASK_TYPES)
    for name in TASK_TYPES:
        assert name in EVALUATORS.get(name).task_types


@pytest.mark.slow  # a fresh interpreter
def test_evaluator_modules_are_imported_on_the_first_lookup_only():
    code = (
        "import sys, hteb_score.evaluators as e, hteb_score.evaluators.protocol; "
        "loaded = lambda: any(m.endswith('.classification') for m in sys.modules); "
        "print(loaded(), e.EVALUATORS.get('STS') is not None, loaded())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True", "True"]


def test_unknown_task_type_suggests_the_close_one():
    """Every known type is listed (in registration order, which depends on what imported first)."""
    with pytest.raises(HtebError, match=r"did you mean 'Retrieval'\?\); known: ") as raised:
        EVALUATORS.get("Retreival")
    assert sorted(str(raised.value).split("known: ")[1].split(", ")) == sorted(TASK_TYPES)


def test_unknown_protocol_suggests_the_close_one():
    assert PROTOCOLS.names() == ["hteb", "mteb"]
    with pytest.raises(HtebError, match=r"unknown protocol 'mtbe' \(did you mean 'mteb'\?\); known: hteb, mteb"):
        PROTOCOLS.get("mtbe")


@pytest.mark.parametrize("name", ["STSBenchmark", "TwitterSemEval2015", "Banking77", "TwentyNewsgroups", "SummEval"])
def test_no_rows_left_is_an_error(name, shared_data):
    dataset = read_source_dir(shared_data / name)
    emptied = SourceDataset(replace(dataset.info), {**dataset.tables, dataset.info.eval_split: []}, dataset.origin)
    with pytest.raises(HtebError, match="no rows left"):
        evaluate(emptied, hashed_bow, context("hteb"))


def test_retrieval_without_queries_is_an_error(shared_data):
    dataset = read_source_dir(shared_data / "SciFact")
    emptied = SourceDataset(dataset.info, {**dataset.tables, "queries": []}, dataset.origin)
    with pytest.raises(HtebError, match="no rows left in 'queries'"):
        evaluate(emptied, hashed_bow, context("mteb"))


def test_sts_subset_of_one_pair_is_an_error(shared_data):
    dataset = sample_dataset(read_source_dir(shared_data / "STSBenchmark"), 1)
    with pytest.raises(HtebError, match="subset 'default' has 1 pair; a correlation needs at least 2"):
        evaluate(dataset, hashed_bow, context("hteb"))


@pytest.mark.parametrize("protocol", ["hteb", "mteb"])
def test_classifiers_are_fitted_once_for_every_variant_of_a_dataset(protocol, shared_data):
    """Variants share the untouched training split: the second variant reuses every classifier the
    run's cache holds (same objects), and a variant whose training rows differ gets new ones."""
    dataset = sample_dataset(read_source_dir(shared_data / "Banking77"), 40)
    dataset = SourceDataset(dataset.info, {**dataset.tables, "train": dataset.tables["train"][:600]}, dataset.origin)
    reversed_eval = SourceDataset(
        dataset.info,
        {**dataset.tables, "test": [{**r, "text": " ".join(r["text"].split()[::-1])} for r in dataset.tables["test"]]},
        dataset.origin,
    )
    cache = ClassifierCache()
    run = EvaluationContext(PROTOCOLS.get(protocol), classifiers=cache)
    first = evaluate(dataset, hashed_bow, run)
    fitted = cache.items()
    evaluate(reversed_eval, hashed_bow, run)
    assert cache.items() == fitted and len(fitted) == (1 if protocol == "hteb" else 10)
    other_train = SourceDataset(
        dataset.info, {**dataset.tables, "train": dataset.tables["train"][:500]}, dataset.origin
    )
    evaluate(other_train, hashed_bow, run)
    assert len(cache) > len(fitted)
    assert evaluate(dataset, hashed_bow, run).value == first.value
    assert evaluate(dataset, hashed_bow, context(protocol)).value == first.value  # a new run: a new cache, same score
