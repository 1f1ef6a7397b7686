"""Subsets in mteb's names (`en-de`, `en-en`, `en`, `en-ext`) are scored per subset and averaged as mteb
averages them: the source folders of tests/data/mteb-subsets against the real mteb 2.26.24, evaluating
them as the mteb tasks whose subset names they carry (same embeddings on both sides)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from evaluator_embeddings import context, evaluate, hashed_bow
from hteb_score.mteb_interop.adapter import mteb_scores

from hteb_contract.sources import SourceDataset, read_source_dir

MTEB_NAMED = Path(__file__).resolve().parents[2] / "data" / "mteb-subsets"


@pytest.mark.parametrize(
    "folder, task, subsets",
    [
        ("STSBCrossLingual", "STS17", ["en-de", "en-en"]),
        ("Banking77Ext", "AmazonCounterfactualClassification", ["en", "en-ext"]),
    ],
)
def test_scores_per_mteb_subset_and_their_plain_mean_equal_mteb(folder, task, subsets):
    source = read_source_dir(MTEB_NAMED / folder)
    dataset = SourceDataset(replace(source.info, mteb_task=task), source.tables, source.origin)
    ours = evaluate(dataset, hashed_bow, context("mteb"))
    theirs = mteb_scores(task, dataset, hashed_bow)
    assert sorted(ours.subsets) == sorted(theirs) == subsets
    for subset, value in theirs.items():
        assert ours.subsets[subset] == pytest.approx(value, abs=1e-6), subset
    assert ours.value == pytest.approx(float(np.mean(list(theirs.values()))), abs=1e-6)
    assert len(set(ours.subsets.values())) == 2  # two subsets, two different scores: the mean is not one of them
