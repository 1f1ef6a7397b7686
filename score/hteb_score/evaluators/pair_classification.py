"""PairClassification.

`mteb` protocol (mteb 2.26 `AbsTaskPairClassification`): five pair scores per pair (model
similarity = torch pairwise cosine, sklearn cosine, negated Manhattan and Euclidean distances, dot
product); for each, sklearn `average_precision_score` over the 0/1 labels; main score `max_ap` =
the maximum of the five APs (not cosine only).
`hteb` protocol (the paper's code: "cosine average precision"): `cosine_ap` = sklearn average
precision of the sklearn cosine scores alone.
Both: task score = mean over `lang` subsets.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import average_precision_score
from sklearn.metrics.pairwise import paired_euclidean_distances, paired_manhattan_distances

from hteb_score.evaluators import Embed, Evaluator, TaskScore, check_protocol, make_score, register_evaluator, split_subsets
from hteb_score.evaluators.similarity import paired_cosine, torch_pairwise_cosine
from hteb_score.sources import SourceDataset


def _ap(labels: np.ndarray, scores: np.ndarray, higher_is_similar: bool) -> float:
    # mteb passes `.tolist()` float32 scores through np.array: float64 copies of the float32 values
    values = np.asarray(np.asarray(scores).tolist(), dtype=np.float64)
    return float(average_precision_score(labels, values * (1 if higher_is_similar else -1)))


@register_evaluator("PairClassification")
class PairClassificationEvaluator(Evaluator):
    def texts(self, dataset: SourceDataset, protocol: str) -> list[tuple[str, str | None]]:
        return [(row[f], None) for row in dataset.eval_rows() for f in ("sentence1", "sentence2")]

    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        check_protocol(protocol)
        per_subset = {}
        for subset, rows in split_subsets(dataset.eval_rows()).items():
            e1 = embed([r["sentence1"] for r in rows], None)
            e2 = embed([r["sentence2"] for r in rows], None)
            labels = np.asarray([int(r["label"]) for r in rows], dtype=np.int64)
            metrics = {"cosine_ap": _ap(labels, paired_cosine(e1, e2), True)}
            if protocol == "mteb":
                metrics["similarity_ap"] = _ap(labels, torch_pairwise_cosine(e1, e2), True)
                metrics["manhattan_ap"] = _ap(labels, paired_manhattan_distances(e1, e2), False)
                metrics["euclidean_ap"] = _ap(labels, paired_euclidean_distances(e1, e2), False)
                metrics["dot_ap"] = _ap(labels, np.asarray([np.dot(a, b) for a, b in zip(e1, e2)]), True)
                metrics["max_ap"] = max(metrics.values())
            per_subset[subset] = metrics
        return make_score("max_ap" if protocol == "mteb" else "cosine_ap", per_subset)
