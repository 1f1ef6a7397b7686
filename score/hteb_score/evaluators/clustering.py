"""Clustering: MiniBatchKMeans on the embeddings, V-measure against the gold labels.

mteb, following the task class the dataset names (`mteb_task`, settings in mteb_tasks.py):
- legacy (AbsTaskClusteringLegacy, e.g. MasakhaNEWSClusteringS2S): each subset is one cluster
  set; `MiniBatchKMeans(n_clusters=#labels, batch_size=500, n_init="auto", random_state=42)` on
  all its documents; `v_measure`; a set with one label scores 1.0. This is also the rule for a
  task mteb_tasks.py does not list.
- fast (AbsTaskClustering, e.g. TwentyNewsgroupsClustering.v2): one `random.Random(42)` per
  task evaluation, consumed across subsets in order: `sample` int(0.04 x N) documents (or the
  task's cap; all if none), then 10 rounds of `choices` of 16384 documents WITH replacement,
  each clustered by `MiniBatchKMeans(n_clusters=#labels, batch_size=512, init="k-means++",
  n_init=1, random_state=42).fit_predict`; `v_measure` = mean over rounds (also `ami`).
hteb (the paper's code: MiniBatchKMeans V-measure): per subset, every document of the evaluation
split, `MiniBatchKMeans(n_clusters=#labels, batch_size=500, n_init="auto", random_state=seed)`,
`v_measure_score(labels, kmeans.labels_)`; one label -> 1.0.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics.cluster import adjusted_mutual_info_score, v_measure_score

from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, register, task_score
from hteb_score.evaluators.mteb_tasks import ClusteringSettings
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.evaluators.threads import single_threaded
from hteb_contract.sources import SourceDataset


@register
class ClusteringEvaluator(Evaluator):
    task_types = ("Clustering",)

    def texts(self, dataset: SourceDataset) -> list[Text]:
        return [(r["text"], None) for r in dataset.eval_rows()]

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        rows = dataset.eval_rows()
        require_rows(dataset, dataset.info.eval_split, rows)
        settings = context.protocol.clustering(dataset.info.mteb_task)
        seed = context.estimator_seed
        rng = random.Random(seed)  # mteb's task-level rng_state: continues across subsets
        details = {}
        for subset, index in group_rows(rows).items():
            texts = [rows[i]["text"] for i in index]
            labels = [rows[i]["label"] for i in index]
            with single_threaded():
                if settings.kind == "fast":
                    details[subset] = _fast(texts, labels, embed, settings, rng, seed)
                else:
                    details[subset] = _legacy(texts, labels, embed, settings.legacy_batch_size, seed)
        metric = context.protocol.main_metric(dataset.info.task_type)
        return task_score(metric, details, _settings(settings, seed))


def _settings(settings: ClusteringSettings, seed: int) -> dict[str, Any]:
    if settings.kind == "fast":
        used: dict[str, Any] = {
            "max_fraction_of_documents_to_embed": settings.max_fraction_of_documents_to_embed,
            "max_document_to_embed": settings.max_document_to_embed, "bootstrap_rounds": settings.n_clusters,
            "documents_per_round": settings.max_documents_per_cluster, "batch_size": settings.k_mean_batch_size}
    else:
        used = {"documents": "all", "batch_size": settings.legacy_batch_size}
    return {"algorithm": "MiniBatchKMeans", "kind": settings.kind, **used, "seed": seed}


def _legacy(texts: Sequence[str], labels: Sequence, embed: Embed, batch_size: int, seed: int) -> dict[str, float]:
    if len(set(labels)) <= 1:
        return {"v_measure": 1.0}
    model = MiniBatchKMeans(n_clusters=len(set(labels)), batch_size=batch_size, n_init="auto",
                            compute_labels=True, random_state=seed)
    model.fit(embed(texts, None))
    return {"v_measure": float(v_measure_score(labels, model.labels_.tolist()))}


def _fast(texts: Sequence[str], labels: Sequence, embed: Embed, settings: ClusteringSettings,
          rng: random.Random, seed: int) -> dict[str, float]:
    n = len(texts)
    chosen = list(range(n))
    if settings.max_fraction_of_documents_to_embed is not None or settings.max_document_to_embed is not None:
        if settings.max_fraction_of_documents_to_embed is not None:
            k = int(settings.max_fraction_of_documents_to_embed * n)
        else:
            k = settings.max_document_to_embed
        chosen = rng.sample(range(n), k=min(n, k))
    embeddings = np.asarray(embed([texts[i] for i in chosen], None))
    gold = np.array([labels[i] for i in chosen])
    model = MiniBatchKMeans(n_clusters=np.unique(gold).size, batch_size=settings.k_mean_batch_size,
                            init="k-means++", n_init=1, random_state=seed)
    v_measures, amis = [], []
    for _ in range(settings.n_clusters):
        sample = rng.choices(range(len(chosen)), k=settings.max_documents_per_cluster)
        predicted = model.fit_predict(embeddings[sample])
        v_measures.append(float(v_measure_score(gold[sample], predicted)))
        amis.append(float(adjusted_mutual_info_score(gold[sample], predicted)))
    return {"v_measure": float(np.mean(v_measures)), "v_measure_std": float(np.std(v_measures)),
            "ami": float(np.mean(amis)), "ami_std": float(np.std(amis))}
