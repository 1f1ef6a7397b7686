"""Clustering: MiniBatchKMeans on the embeddings, V-measure against the gold labels.

mteb, following the task class the dataset names (`mteb_task`, settings in the contract's dataset table):
- legacy (AbsTaskClusteringLegacy: MasakhaNEWSClusteringS2S, BiorxivClusteringS2S): each row of
  mteb's Hub data is a cluster set, clustered on its own: a set with <= 1 label scores 1.0 without
  being embedded, any other gets `MiniBatchKMeans(n_clusters=#labels in the set, batch_size=500,
  n_init="auto", random_state=42)` and `v_measure`; a subset scores the mean over its sets (and
  reports their `v_measure_std`), the task the mean over subsets.
  The sets: rows carrying `cluster_set` (the Hub row they came from; the Hub converter writes it)
  are grouped by it, sets in Hub row order, rows in row order. Rows without it are cut per subset,
  in row order, into the task's `contiguous_sets` with `np.array_split`: 5 for
  MasakhaNEWSClusteringS2S, as mteb 1.x cut the headlines into the sets its Hub rows now hold
  (shared/data/MasakhaNEWS has them in that order); BiorxivClusteringS2S's sets are known only
  from its Hub rows, so it needs `cluster_set`; a subset of an unlisted task is one set. A
  transformed variant keeps its rows in their order, so its sets are the original's (under
  `--on-error drop`, rows without `cluster_set` are cut from those that remain).
  MasakhaNEWS with all-MiniLM-L6-v2 scores 39.17 with scikit-learn 1.9.1 and 38.31 with 1.5.1,
  1.6.1, 1.7.2 and 1.8.0 (tests/score/test_published_checks.py). mteb's results repository has 38.31 (an mteb 1.12.75
  run), equal to ours under scikit-learn 1.8 in every one of the 80 sets: same data, same sets.
  scikit-learn 1.9 draws MiniBatchKMeans's minibatches with `random_state.choice(p=weights)`
  instead of `randint` (scikit-learn PR #30751), so the same random_state gives other clusters;
  mteb 2.26.24 run with scikit-learn 1.9 gives our 39.17 too.
- fast (AbsTaskClustering, e.g. TwentyNewsgroupsClustering.v2): one `random.Random(42)` per
  task evaluation, consumed across subsets in order: `sample` int(0.04 x N) documents (or the
  task's cap; all if none), then 10 rounds of `choices` of 16384 documents WITH replacement,
  each clustered by `MiniBatchKMeans(n_clusters=#labels, batch_size=512, init="k-means++",
  n_init=1, random_state=42).fit_predict`; `v_measure` = mean over rounds (also `ami`).
hteb (the paper's code: MiniBatchKMeans V-measure; the paper names no cluster sets, so a subset is
clustered at once): per subset, every document of the evaluation split in one set (`cluster_set` is
not read), `MiniBatchKMeans(n_clusters=#labels, batch_size=500, n_init="auto", random_state=seed)`,
`v_measure_score(labels, kmeans.labels_)`; a subset of one label has nothing to cluster: undefined (null, flagged).
k-means reads the subset's rows in the order sha256(seed, row id) gives them (`row_order`, `hashed_order`), not in
the data's: it splits tied embeddings by their place, and the data groups rows by label.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics.cluster import adjusted_mutual_info_score, v_measure_score

from hteb_contract.errors import HtebError, SourceError
from hteb_contract.sources import SourceDataset
from hteb_contract.mteb_settings import ClusteringSettings
from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, register, task_score
from hteb_score.evaluators.outcomes import Outcomes, join
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.evaluators.threads import single_threaded
from hteb_score.flags import Flag

if TYPE_CHECKING:
    from hteb_score.evaluators.protocol import Protocol

# A set of one label, by whether a subset is one set: mteb's legacy sets score 1.0 (its rule); the
# hteb protocol clusters a whole subset, and one label there leaves V-measure undefined (NaN -> null).
ONE_LABEL = {False: 1.0, True: math.nan}
ROW_ORDER = "by sha256(seed, row id)"  # the card's words for the hteb protocol's `row_order`
CLUSTER_SET = "cluster_set"  # row field: the Hub row (cluster set) of a legacy clustering dataset it came from


@register
class ClusteringEvaluator(Evaluator):
    task_types = ("Clustering",)
    undefined_because = "every document has the same label: nothing to cluster, V-measure is undefined"

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        """No rows: refused. A subset of one label: under hteb its score is undefined (flagged
        when scored); under mteb it scores 1.0 as mteb does, flagged here."""
        rows = dataset.eval_rows()
        require_rows(dataset, dataset.info.eval_split, rows)
        settings = protocol.clustering(dataset.info.mteb_task)
        if settings.one_set_per_subset:
            return []
        flags = []
        for subset, index in group_rows(rows).items():
            if settings.kind == "fast" and _fast_sample_size(settings, len(index)) == 0:
                raise HtebError(
                    f"{dataset.name}: subset {subset!r}: mteb's fast clustering samples none of its "
                    f"{len(index)} documents (a fraction of "
                    f"{settings.max_fraction_of_documents_to_embed}); k-means needs at least one "
                    "(score it under --protocol hteb)"
                )
            labels = {rows[i]["label"] for i in index}
            if len(labels) == 1:
                flags.append(
                    Flag(
                        "one_cluster_label",
                        f"subset {subset!r}: all {len(index)} documents have label "
                        f"{labels.pop()!r}; scored 1.0 as mteb does, nothing was clustered",
                    )
                )
        return flags

    def texts(self, dataset: SourceDataset) -> list[Text]:
        return [(r["text"], None) for r in dataset.eval_rows()]

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        rows = dataset.eval_rows()
        settings = context.protocol.clustering(dataset.info.mteb_task)
        seed = context.estimator_seed
        details = {}
        outcomes = []
        if settings.kind == "fast":
            used = _fast_settings(settings)
            rng = random.Random(seed)  # mteb's task-level rng_state: continues across subsets
            for subset, index in group_rows(rows).items():
                with single_threaded():
                    details[subset] = _fast(
                        [rows[i]["text"] for i in index], [rows[i]["label"] for i in index], embed, settings, rng, seed
                    )
        else:
            sets = cluster_sets(dataset, settings)
            used = {"documents": "all", "cluster_sets": sets.rule, "batch_size": settings.legacy_batch_size}
            ids = dataset.ids[dataset.info.eval_split]
            if settings.row_order == "hashed":
                used["row_order"] = ROW_ORDER
            for subset, subset_sets in sets.by_subset.items():
                if settings.row_order == "hashed":
                    subset_sets = [hashed_order(index, ids, seed) for index in subset_sets]
                with single_threaded():
                    details[subset], clusters = _legacy(
                        rows,
                        subset_sets,
                        embed,
                        settings.legacy_batch_size,
                        seed,
                        one_label=ONE_LABEL[settings.one_set_per_subset],
                    )
                if settings.one_set_per_subset and clusters:  # the subset's V-measure is one clustering's
                    index = sorted(clusters)
                    outcomes.append(
                        Outcomes.of(
                            "v_measure",
                            subset,
                            [ids[i] for i in index],
                            [rows[i]["label"] for i in index],
                            [clusters[i] for i in index],
                        )
                    )
        metric = context.protocol.main_metric(dataset.info.task_type, dataset.info.mteb_task)
        return task_score(
            metric,
            details,
            {"algorithm": "MiniBatchKMeans", "kind": settings.kind, **used, "seed": seed},
            because=self.undefined_because,
            outcomes=join(outcomes) if metric == "v_measure" else None,
        )


@dataclass(frozen=True)
class ClusterSets:
    """A dataset's legacy cluster sets: per subset, each set's row indices in row order."""

    rule: str  # how they were formed, as the result card says it
    by_subset: dict[str, list[list[int]]]


_Split = Callable[[Sequence[dict[str, Any]], list[int], ClusteringSettings], list[list[int]]]


@dataclass(frozen=True)
class _SetRule:
    describe: Callable[[ClusteringSettings], str]
    split: _Split  # (eval rows, one subset's row indices, settings) -> its sets


def _by_field(rows: Sequence[dict[str, Any]], index: list[int], settings: ClusteringSettings) -> list[list[int]]:
    sets: dict[int, list[int]] = {}
    for i in index:
        sets.setdefault(rows[i][CLUSTER_SET], []).append(i)
    return [sets[number] for number in sorted(sets)]  # in Hub row order, whichever rows a variant dropped


def _contiguous(rows: Sequence[dict[str, Any]], index: list[int], settings: ClusteringSettings) -> list[list[int]]:
    sets = settings.contiguous_sets
    if sets is None:  # `_rule_name` refuses the dataset before this rule
        raise ValueError("the contiguous rule needs contiguous_sets")
    return [part.tolist() for part in np.array_split(np.asarray(index, dtype=int), sets)]


_RULES = {
    "subset": _SetRule(lambda settings: "one per subset", lambda rows, index, settings: [index]),
    "cluster_set": _SetRule(lambda settings: f"by the rows' {CLUSTER_SET}", _by_field),
    "contiguous": _SetRule(
        lambda settings: f"{settings.contiguous_sets} contiguous per subset (np.array_split)", _contiguous
    ),
}


def cluster_sets(dataset: SourceDataset, settings: ClusteringSettings) -> ClusterSets:
    """`dataset`'s legacy cluster sets under `settings` (the rules are in the module doc)."""
    rows = dataset.eval_rows()
    rule = _RULES[_rule_name(dataset, settings)]
    return ClusterSets(
        rule.describe(settings),
        {subset: rule.split(rows, index, settings) for subset, index in group_rows(rows).items()},
    )


def _rule_name(dataset: SourceDataset, settings: ClusteringSettings) -> str:
    if settings.one_set_per_subset:
        return "subset"
    rows, split = dataset.eval_rows(), dataset.info.eval_split
    marked = [i for i, row in enumerate(rows) if CLUSTER_SET in row]
    if marked and len(marked) < len(rows):
        missing = next(i for i, row in enumerate(rows) if CLUSTER_SET not in row)
        raise SourceError(
            f"{dataset.name}: {split} row {missing + 1} has no {CLUSTER_SET!r} "
            f"where {len(marked)} of {len(rows)} rows have one"
        )
    for index in marked:
        value = rows[index][CLUSTER_SET]
        if not isinstance(value, int) or isinstance(value, bool):
            raise SourceError(
                f"{dataset.name}: {split} row {index + 1}: {CLUSTER_SET} must be an integer, got {value!r}"
            )
    if marked:
        return "cluster_set"
    if settings.contiguous_sets is None:
        raise SourceError(
            f"{dataset.name}: mteb task {dataset.info.mteb_task} clusters the sets of its Hub rows, "
            f"which only a {CLUSTER_SET!r} field on every row gives (the Hub converter writes it)"
        )
    return "contiguous"


def _fast_settings(settings: ClusteringSettings) -> dict[str, Any]:
    return {
        "max_fraction_of_documents_to_embed": settings.max_fraction_of_documents_to_embed,
        "max_document_to_embed": settings.max_document_to_embed,
        "bootstrap_rounds": settings.n_clusters,
        "documents_per_round": settings.max_documents_per_cluster,
        "batch_size": settings.k_mean_batch_size,
    }


def hashed_order(index: list[int], ids: Sequence[str], seed: int) -> list[int]:
    """`index` ordered by sha256(seed, row id): a place per row that no label, and no other row of the set, decides,
    the same for the original and every variant of the row (rows dropped or not). k-means splits tied embeddings
    by their place in the data, so in the data's order (rows grouped by label) one vector for every text read as
    clusters that follow the labels (MasakhaNEWS: V-measure 0.111, against 0.018 for random vectors)."""
    return sorted(index, key=lambda i: hashlib.sha256(f"{seed}\0{ids[i]}".encode()).digest())


def _legacy(
    rows: Sequence[dict], sets: list[list[int]], embed: Embed, batch_size: int, seed: int, *, one_label: float
) -> tuple[dict[str, float], dict[int, int]]:
    """mteb's legacy score of one subset: the v_measure of each set clustered alone, their mean and
    std; a set of one label scores `one_label` without being clustered. And each clustered row's cluster."""
    v_measures = []
    clusters: dict[int, int] = {}
    for index in sets:
        labels = [rows[i]["label"] for i in index]
        if len(set(labels)) <= 1:
            v_measures.append(one_label)
            continue
        model = MiniBatchKMeans(
            n_clusters=len(set(labels)), batch_size=batch_size, n_init="auto", compute_labels=True, random_state=seed
        )
        model.fit(embed([rows[i]["text"] for i in index], None))
        v_measures.append(float(v_measure_score(labels, model.labels_.tolist())))
        clusters.update(zip(index, model.labels_.tolist()))
    return {"v_measure": float(np.mean(v_measures)), "v_measure_std": float(np.std(v_measures))}, clusters


def _fast_sample_size(settings: ClusteringSettings, n: int) -> int | None:
    """How many of a subset's `n` documents mteb's fast clustering samples; None: all, unsampled."""
    if settings.max_fraction_of_documents_to_embed is not None:
        return min(n, int(settings.max_fraction_of_documents_to_embed * n))
    if settings.max_document_to_embed is not None:
        return min(n, settings.max_document_to_embed)
    return None


def _fast(
    texts: Sequence[str], labels: Sequence, embed: Embed, settings: ClusteringSettings, rng: random.Random, seed: int
) -> dict[str, float]:
    n = len(texts)
    k = _fast_sample_size(settings, n)
    chosen = list(range(n)) if k is None else rng.sample(range(n), k=k)
    embeddings = np.asarray(embed([texts[i] for i in chosen], None))
    gold = np.array([labels[i] for i in chosen])
    model = MiniBatchKMeans(
        n_clusters=np.unique(gold).size,
        batch_size=settings.k_mean_batch_size,
        init="k-means++",
        n_init=1,
        random_state=seed,
    )
    v_measures, amis = [], []
    for _ in range(settings.n_clusters):
        sample = rng.choices(range(len(chosen)), k=settings.max_documents_per_cluster)
        predicted = model.fit_predict(embeddings[sample])
        v_measures.append(float(v_measure_score(gold[sample], predicted)))
        amis.append(float(adjusted_mutual_info_score(gold[sample], predicted)))
    return {
        "v_measure": float(np.mean(v_measures)),
        "v_measure_std": float(np.std(v_measures)),
        "ami": float(np.mean(amis)),
        "ami_std": float(np.std(amis)),
    }
