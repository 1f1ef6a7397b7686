"""Pair classification: average precision of a similarity score at telling paraphrase pairs (1)
from the rest (0).

mteb (AbsTaskPairClassification): sklearn `average_precision_score` (tied scores form one
threshold) for five scores — `similarity` (torch pairwise cosine), `cosine` (sklearn paired
cosine), `dot`, and negated `manhattan` / `euclidean` distances; main score `max_ap`, the best of
the five. hteb (the paper, App. G): `ap`, the cosine average precision alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from sklearn.metrics import average_precision_score
from sklearn.metrics.pairwise import paired_euclidean_distances, paired_manhattan_distances

from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.base import register
from hteb_score.evaluators.pairs import SentencePairEvaluator, refuse_one_gold_value
from hteb_score.evaluators.similarity import paired_cosine, pairwise_cos_torch


def _dot(e1: np.ndarray, e2: np.ndarray) -> np.ndarray:
    return np.asarray([np.dot(e1[i], e2[i]) for i in range(len(e1))])


SIMILARITIES: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {  # higher = more similar for all five
    "similarity": pairwise_cos_torch,
    "cosine": paired_cosine,
    "manhattan": lambda e1, e2: -paired_manhattan_distances(e1, e2),
    "euclidean": lambda e1, e2: -paired_euclidean_distances(e1, e2),
    "dot": _dot,
}


def _average_precisions(labels: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> dict[str, float]:
    out = {f"{name}_ap": float(average_precision_score(labels, fn(e1, e2))) for name, fn in SIMILARITIES.items()}
    out["max_ap"] = max(out.values())
    out["ap"] = out["cosine_ap"]
    return out


@register
class PairClassificationEvaluator(SentencePairEvaluator):
    task_types = ("PairClassification",)
    settings = {"ap": "sklearn average_precision_score", "similarities": list(SIMILARITIES)}
    gold_field = "label"
    outcome_measures = {"ap": "ap", "cosine_ap": "ap"}  # mteb's max_ap is the best of five: no one outcome

    def check_subset(self, dataset: SourceDataset, subset: str, pairs: list[dict[str, Any]]) -> None:
        """One class only: average precision is 1 (all positive) or undefined (none), whatever the model."""
        refuse_one_gold_value(
            dataset,
            subset,
            [int(r["label"]) for r in pairs],
            "all {n} pairs have label {value}; average precision needs both classes",
        )

    def score_pairs(
        self, dataset: SourceDataset, subset: str, pairs: list[dict[str, Any]], e1: np.ndarray, e2: np.ndarray
    ) -> dict[str, float]:
        return _average_precisions(np.asarray([int(r["label"]) for r in pairs]), e1, e2)
