"""The `mteb` protocol equals the real mteb 2.26.24 on identical embeddings, for all 8 task types.

Each case is small real data from ../shared/data scored twice: by our evaluator, and by mteb's own
task class (data injected, model returning the same vectors). Hashed bag-of-words embeddings make
the inputs tie-heavy (equal cosines, equal distances, equal bootstrap draws); all-MiniLM-L6-v2
gives dense real embeddings.
"""

from __future__ import annotations

from dataclasses import replace

import mteb
import numpy as np
import pytest
from cases import CASES
from evaluator_embeddings import context, evaluate, hashed_bow
from hteb_score.mteb_interop.adapter import mteb_scores

from hteb_contract.sources import SourceDataset

TOLERANCE = 1e-6
MINILM_SKIP = {"IsiZuluNews", "SemRel2024"}  # slow to embed on CPU: the hashed run covers them


def _check(case: str, fn, shared_data) -> None:
    load, task = CASES[case]
    dataset = load(shared_data)
    ours = evaluate(dataset, fn, context("mteb"))
    theirs = mteb_scores(task, dataset, fn)
    assert ours.main_metric == mteb.get_task(task).metadata.main_score
    assert sorted(ours.subsets) == sorted(theirs)
    for subset, value in theirs.items():
        assert ours.subsets[subset] == pytest.approx(value, abs=TOLERANCE), subset
    assert ours.value == pytest.approx(float(np.mean(list(theirs.values()))), abs=TOLERANCE)


@pytest.mark.parametrize("case", sorted(CASES))
def test_tie_heavy_hashed_embeddings_equal_mteb(case, shared_data):
    _check(case, hashed_bow, shared_data)


@pytest.mark.parametrize("case", sorted(set(CASES) - MINILM_SKIP))
def test_minilm_embeddings_equal_mteb(case, minilm, shared_data):
    _check(case, minilm, shared_data)


def test_self_hit_removal_changes_the_score(minilm, shared_data):
    """ignore_identical_ids really removes the relevant self-hits (so the case above can fail)."""
    load, _ = CASES["SciFactSelfHits"]
    dataset = load(shared_data)
    kept = replace(dataset.info, mteb_task="SciFact")
    removed = evaluate(dataset, minilm, context("mteb")).value
    not_removed = evaluate(SourceDataset(kept, dataset.tables, dataset.origin), minilm, context("mteb")).value
    assert removed < not_removed - 0.05


@pytest.mark.parametrize("case", ["TwentyNewsgroups", "Banking77"])
def test_mteb_protocol_ignores_the_run_seed(case, shared_data):
    """mteb's number is its seed-42 number; a run seed changes only the hteb protocol."""
    dataset = CASES[case][0](shared_data)
    seeded = evaluate(dataset, hashed_bow, context("mteb", seed=7))
    assert seeded.value == evaluate(dataset, hashed_bow, context("mteb")).value
