"""Corpus robustness (issue 12, item 3; SAGE Task 5): nDCG@10 retention per perturbed corpus and
their harmonic mean, in a card section of its own.

The worked example checks the arithmetic against numbers computed by hand. The run tests use a
real noise revision of SciFact (cut down) made by the generator's own pipeline with --corpus-noise,
scored by the real retrieval evaluator through a real EmbeddingTable over hashed bag-of-words
"embeddings" (deterministic; noise moves a word to another bucket); the slow test runs the real
`hteb-score --corpus-robustness` with all-MiniLM-L6-v2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from hteb_contract.taxonomy import INSTALLED
from hteb_contract.stores import open_store
from hteb_contract.validation import validate
from hteb_generate.transform.noise import PERTURBATIONS, perturb
from hteb_score.scoring.aggregate import aggregate
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.report.card.card import CardResults, CardSubject, build_card, render_markdown
from hteb_score.scoring.corpus_robustness import (
    corpus_variants,
    ndcg_at_10,
    retention,
    score_corpus_robustness,
    summarise,
)
from hteb_score.encoding.encoder import EmbeddingTable
from hteb_score.evaluators import EVALUATORS, EvaluationContext, TaskScore
from hteb_score.evaluators.protocol import PROTOCOLS

sys.path.insert(0, str(Path(__file__).resolve().parent / "evaluators"))
from evaluator_embeddings import hashed_bow  # noqa: E402

SEED = 1339
LABEL = f"noise-corpus-{SEED}"  # the rules' label of this store (a revision made for these tests)
HTEB = PROTOCOLS.get("hteb")


# -- the arithmetic: a worked example ----------------------------------------------------------------


def test_worked_example_of_retention_and_harmonic_mean():
    """original nDCG@10 0.50; a: 0.50 -> retention 1.0; b: 0.25 -> 0.5; c: seeds 0.40 and 0.30 ->
    retentions 0.8 and 0.6, mean 0.7. Harmonic mean = 3 / (1/1.0 + 1/0.5 + 1/0.7)
    = 3 / (1 + 2 + 1.428571...) = 3 / 4.428571... = 0.677419..."""
    block = summarise(0.5, {"a": {1: 0.5}, "b": {1: 0.25}, "c": {1: 0.4, 2: 0.3}})
    assert block["retention"] == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.7})
    assert block["harmonic_mean"] == pytest.approx(0.6774194, abs=1e-7)
    assert block["harmonic_mean"] < np.mean([1.0, 0.5, 0.7])  # it weighs the worst perturbation more
    assert block["original"] == 0.5 and block["perturbed"]["c"] == {"1": 0.4, "2": 0.3}


def test_a_perturbation_that_loses_everything_makes_the_harmonic_mean_zero():
    assert summarise(0.8, {"a": {1: 0.8}, "b": {1: 0.0}})["harmonic_mean"] == 0.0


def test_retention_is_undefined_without_a_positive_original():
    assert retention(0.0, 0.3) is None and retention(None, 0.3) is None and retention(0.4, None) is None
    assert retention(0.4, 0.5) == pytest.approx(1.25)  # a perturbed corpus may retrieve better
    block = summarise(0.0, {"a": {1: 0.2}, "b": {1: 0.1}})
    assert block["retention"] == {"a": None, "b": None} and block["harmonic_mean"] is None


def test_ndcg_at_10_is_the_mean_over_subsets_whatever_the_main_metric():
    details = {"en": {"ndcg_at_10": 0.6, "map_at_1000": 0.9}, "de": {"ndcg_at_10": 0.2, "map_at_1000": 0.1}}
    result = TaskScore("map_at_1000", {"en": 0.9, "de": 0.1}, 0.5, details, {})
    assert ndcg_at_10(result) == pytest.approx(0.4)


# -- a real noise revision of SciFact with its perturbed corpus ----------------------------------------


@pytest.fixture(scope="module")
def store(tmp_path_factory, shared_data) -> str:
    """SciFact (4 queries, their judged documents and 40 others) and STSBenchmark under the five
    rules, made by the generator's pipeline with --corpus-noise."""
    from hteb_generate.setup.config import build_config
    from hteb_generate.run.pipeline import run

    root = tmp_path_factory.mktemp("corpus-noise")
    cfg = build_config(
        seed=str(SEED),
        profile="noise",
        overrides={
            "datasets": "SciFact,STSBenchmark",
            "sample": 4,
            "corpus_noise": True,
            "cache_dir": str(root / "cache"),
            "store": str(root / "store"),
            "data_dir": str(shared_data),
            "manifest_md": str(root / "M.md"),
            "label": LABEL,
        },
    )
    run(cfg, log=lambda m: None)
    return str(root / "store")


class HashedBow:
    """An encoder for the real EmbeddingTable: hashed bag-of-words counts, counting what it encodes."""

    identity = None
    model_id = "hashed-bow"

    def __init__(self) -> None:
        self.texts: list[tuple[str, str | None]] = []

    def prompt_key(self, task, prompt_type):
        return prompt_type  # query and document texts are embedded apart, as by a prompted model

    def encode(self, texts, prompt_type, *, task=None):
        self.texts += [(t, prompt_type) for t in texts]
        return hashed_bow(texts, prompt_type, dim=64)


def test_perturbed_corpora_are_scored_with_the_original_queries(store):
    revision = open_store(store).fetch(LABEL)
    source = revision.source("SciFact")
    variants = corpus_variants(revision, ["SciFact", "STSBenchmark"], transformations=None, seeds=None)
    assert [(v.dataset.name, v.transformation, v.seed) for v in variants] == [
        ("SciFact", t, SEED) for t in PERTURBATIONS.names()
    ]
    for variant in variants:
        assert variant.dataset.tables["queries"] is source.tables["queries"]  # never transformed
        assert variant.dataset.tables["corpus"] != source.tables["corpus"]

    encoder = HashedBow()
    table = EmbeddingTable(encoder)
    evaluator = EVALUATORS.get("Retrieval")
    table.fill([(source.info, *request) for request in evaluator.texts(source)], progress=False)
    original = evaluator.evaluate(source, table.view(source.info), EvaluationContext(HTEB))
    section = score_corpus_robustness(variants, {"SciFact": original}, table, protocol=HTEB, progress=False)
    assert len(encoder.texts) == len(set(encoder.texts))  # each unique (text, prompt) embedded once

    # The oracle: each corpus perturbed here by the rules themselves (not read from the revision).
    block = section["datasets"]["SciFact"]
    assert block["original"] == pytest.approx(ndcg_at_10(original))
    for transformation in PERTURBATIONS.names():
        mine = source.with_corpus_texts(
            lambda ref: perturb(transformation, ref.text, key=(SEED, "SciFact", transformation, ref.text))
        )
        oracle = EmbeddingTable(HashedBow())
        oracle.fill([(mine.info, *request) for request in evaluator.texts(mine)], progress=False)
        expected = ndcg_at_10(evaluator.evaluate(mine, oracle.view(mine.info), EvaluationContext(HTEB)))
        assert block["perturbed"][transformation] == {str(SEED): pytest.approx(expected)}
        assert block["retention"][transformation] == pytest.approx(expected / block["original"])
    retentions = list(block["retention"].values())
    assert block["harmonic_mean"] == pytest.approx(len(retentions) / sum(1 / r for r in retentions))
    assert block["retention"]["numerisation"] < 1  # hashed words: e->3 moves most words elsewhere

    scores = [ScoreRecord("SciFact", "Retrieval", "all", "original", None, original.main_metric, original.value)]
    encode = {"batch_size": 1, "dtype": "f32", "normalize": False, "device": "cpu", "prompts": {}}
    card = build_card(
        CardSubject(
            {"model_id": "bow", "revision": None},
            encode,
            {"repo_id": store, "label": "x", "revision": "r"},
            HTEB,
            "original",
        ),
        CardResults(scores, {}, corpus_robustness=section),
    )
    validate("result_card", card, what="card")
    assert card["aggregates"] == aggregate(scores, INSTALLED)  # never part of the aggregates
    markdown = render_markdown(card)
    assert "## Corpus robustness" in markdown and f"**{block['harmonic_mean']:.3f}**" in markdown


def test_the_selection_narrows_the_perturbed_corpora(store):
    revision = open_store(store).fetch(LABEL)
    variants = corpus_variants(revision, ["SciFact"], transformations=["numerisation"], seeds=[SEED])
    assert [v.transformation for v in variants] == ["numerisation"]


@pytest.mark.slow
def test_hteb_score_reports_corpus_robustness_end_to_end(store, tmp_path, capsys):
    from hteb_score.cli import main
    from models import minilm_path

    common = [minilm_path(), "--store", store, "--revision", LABEL, "--datasets", "SciFact", "--quiet"]
    assert main([*common, "--corpus-robustness", "--out", str(tmp_path / "out")]) == 0
    assert "corpus robustness SciFact" in capsys.readouterr().out
    card = json.loads((tmp_path / "out" / "result_card.json").read_text())
    block = card["corpus_robustness"]["datasets"]["SciFact"]
    original = next(s["value"] for s in card["scores"] if s["transformation"] == "original")
    assert block["original"] == pytest.approx(original)  # SciFact's main score is nDCG@10
    assert set(block["retention"]) == set(PERTURBATIONS.names())
    for transformation, retained in block["retention"].items():
        assert retained == pytest.approx(block["perturbed"][transformation][str(SEED)] / original)
    records = [ScoreRecord.from_json(s) for s in card["scores"]]
    assert card["aggregates"] == aggregate(records, INSTALLED)  # the section is outside every aggregate
    assert "## Corpus robustness" in (tmp_path / "out" / "result_card.md").read_text()
