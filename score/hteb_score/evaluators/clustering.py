"""Clustering: k-means on the embeddings of a subset, V-measure against the gold labels.

`mteb` protocol, two variants chosen by the mteb task the dataset stands for:
- legacy (`AbsTaskClusteringLegacy`; e.g. MasakhaNEWSClusteringS2S, and any task not listed in
  FAST_TASKS): each subset is one cluster set; `MiniBatchKMeans(n_clusters=#labels,
  batch_size=500, n_init="auto", random_state=42)` on all its documents; V-measure; a set with
  one label scores 1.0.
- fast (`AbsTaskClustering`; TwentyNewsgroupsClustering.v2, MedrxivClusteringS2S.v2,
  PlscClusteringS2S): one `random.Random(42)` per task evaluation, consumed across subsets in
  order: it samples `int(fraction * N)` documents (fraction 0.04 unless the task overrides),
  then 10 bootstrap rounds each draw 16384 documents with replacement (`rng.choices`) and fit
  `MiniBatchKMeans(n_clusters=#labels, batch_size=512, init="k-means++", n_init=1,
  random_state=42)`; score = mean V-measure over the rounds.
`hteb` protocol: the legacy rule on every document of each subset (mteb 1.38.33's fast variant
depends on the global RNG state of the whole run and is not reproducible; sampling 4% would also
confound a transformation's effect with the sample). Both: task score = mean over subsets.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics import v_measure_score

from hteb_score.evaluators import Embed, Evaluator, TaskScore, check_protocol, make_score, register_evaluator, split_subsets
from hteb_score.sources import SourceDataset

SEED = 42
FAST_TASKS: dict[str, float | None] = {  # mteb task -> max_fraction_of_documents_to_embed (None = all)
    "TwentyNewsgroupsClustering.v2": 0.04,
    "MedrxivClusteringS2S.v2": 0.04,
    "PlscClusteringS2S": 0.04,
}
BOOTSTRAP_ROUNDS = 10
BOOTSTRAP_SIZE = 16_384


def legacy_v_measure(embeddings: np.ndarray, labels: list[Any]) -> float:
    """mteb's ClusteringEvaluator on one cluster set."""
    if len(set(labels)) <= 1:
        return 1.0
    model = MiniBatchKMeans(n_clusters=len(set(labels)), batch_size=500, n_init="auto", compute_labels=True,
                            random_state=SEED)
    model.fit(embeddings)
    return float(v_measure_score(labels, model.labels_))


def fast_v_measures(embeddings: np.ndarray, labels: list[Any], rng: random.Random) -> list[float]:
    """mteb's `_evaluate_clustering_bootstrapped` for single-level labels."""
    gold = np.array(labels)
    model = MiniBatchKMeans(n_clusters=np.unique(gold).size, batch_size=512, init="k-means++", n_init=1,
                            random_state=SEED)
    scores = []
    for _ in range(BOOTSTRAP_ROUNDS):
        idx = rng.choices(range(len(gold)), k=BOOTSTRAP_SIZE)
        scores.append(float(v_measure_score(gold[idx], model.fit_predict(embeddings[idx]))))
    return scores


@register_evaluator("Clustering")
class ClusteringEvaluator(Evaluator):
    def texts(self, dataset: SourceDataset, protocol: str) -> list[tuple[str, str | None]]:
        return [(row["text"], None) for row in dataset.eval_rows()]

    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        check_protocol(protocol)
        task = dataset.info.mteb_task or ""
        fast = protocol == "mteb" and task in FAST_TASKS
        rng = random.Random(SEED)  # a fresh mteb task object: one stream for all its subsets
        per_subset = {}
        for subset, rows in split_subsets(dataset.eval_rows()).items():
            if fast:
                fraction = FAST_TASKS[task]
                if fraction is not None:
                    k = min(len(rows), int(fraction * len(rows)))
                    rows = [rows[i] for i in rng.sample(range(len(rows)), k=k)]
                scores = fast_v_measures(embed([r["text"] for r in rows], None), [r["label"] for r in rows], rng)
                per_subset[subset] = {"v_measure": float(np.mean(scores)), "v_measure_std": float(np.std(scores))}
            else:
                labels = [r["label"] for r in rows]
                value = legacy_v_measure(embed([r["text"] for r in rows], None) if len(set(labels)) > 1 else None, labels)
                per_subset[subset] = {"v_measure": value}
        return make_score("v_measure", per_subset)
