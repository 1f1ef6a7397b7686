"""Pair classification: average precision of a similarity score at telling paraphrase pairs (1)
from the rest (0).

mteb (AbsTaskPairClassification): sklearn `average_precision_score` (tied scores form one
threshold) for five scores — `similarity` (torch pairwise cosine), `cosine` (sklearn paired
cosine), `dot`, and negated `manhattan` / `euclidean` distances; main score `max_ap`, the best of
the five. hteb (the paper, App. G): `ap`, the cosine average precision alone.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from sklearn.metrics import average_precision_score
from sklearn.metrics.pairwise import paired_euclidean_distances, paired_manhattan_distances

from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, register, task_score
from hteb_score.evaluators.similarity import paired_cosine, pairwise_cos_torch
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_contract.sources import SourceDataset


@register
class PairClassificationEvaluator(Evaluator):
    task_types = ("PairClassification",)

    def texts(self, dataset: SourceDataset) -> list[Text]:
        rows = dataset.eval_rows()
        return [(r["sentence1"], None) for r in rows] + [(r["sentence2"], None) for r in rows]

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        metric = context.protocol.main_metric(dataset.info.task_type)
        rows = dataset.eval_rows()
        require_rows(dataset, dataset.info.eval_split, rows)
        details = {}
        for subset, index in group_rows(rows).items():
            e1 = np.asarray(embed([rows[i]["sentence1"] for i in index], None))
            e2 = np.asarray(embed([rows[i]["sentence2"] for i in index], None))
            labels = np.asarray([int(rows[i]["label"]) for i in index])
            details[subset] = _average_precisions(labels, e1, e2)
        return task_score(metric, details, {"ap": "sklearn average_precision_score",
                                            "similarities": list(SIMILARITIES)})


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
