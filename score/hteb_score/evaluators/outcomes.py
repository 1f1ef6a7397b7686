"""Per-item outcomes: what a variant's main score is computed from, item by item, so two models can be
compared on the same items of one dataset (report/compare/per_dataset.py) and a score checked against its items.

An evaluator whose main score is a function of per-item outcomes returns them with its `TaskScore`:
per item, its subset and id, the `gold` value and what the model `predicted` (a similarity, a label, a
cluster, or the item's own score, e.g. a query's nDCG@10). `MEASURES` holds, by name, the function that
turns one subset's items into its main score. Each takes the items' weights as a (B, n) matrix of
counts: a row of ones is the score itself; a row of multinomial counts is one bootstrap replicate
(the items drawn with replacement), so B replicates are computed at once, exactly as the evaluator
would compute the score of the drawn sample (ties averaged, as scipy and scikit-learn do). Their sums are
numpy's own (pairwise, in one fixed order), never a BLAS product, whose kernels differ by CPU: a committed
comparison made again on another machine gives every float it gave.

A rank measure (`RANK_MEASURES`) reads only the order of the predictions and their ties, so its outcomes
keep each cosine's dense rank among its subset's (0 the lowest, equal cosines one rank): the same score
exactly, in a third of the digits (parts are kept in a repository, and a random model's cosines do not
compress).

| measure | gold | predicted | the subset's score |
|---|---|---|---|
| spearman | gold similarity | the cosine's rank | Spearman's rho (STS, STR) |
| ap | label 0/1 | the cosine's rank | average precision, scikit-learn's step rule (pair classification) |
| accuracy | label | predicted label | share correct (classification: held-out or trained on another split) |
| v_measure | label | cluster | V-measure (clustering, a subset clustered at once) |
| mean | - | the item's own score | mean (retrieval nDCG@10 / reranking MAP per query, summarisation rho per text) |
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

import numpy as np

from hteb_contract.common.registry import Registry

#: A measure: (weights (B, n), gold (n,), predicted (n,)) -> the B subset scores.
Measure = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]
#: which measures read labels (compared as strings) rather than numbers
LABEL_MEASURES = ("accuracy", "v_measure")
#: which measures read only the order of the predictions (their outcomes keep dense ranks)
RANK_MEASURES = ("spearman", "ap")


@dataclass(frozen=True)
class Outcomes:
    """One variant's items: `measure` (a key of MEASURES) and, per item, subset, id, gold and prediction."""

    measure: str
    subset: tuple[str, ...]
    item: tuple[str, ...]
    gold: tuple[Any, ...]
    predicted: tuple[Any, ...]

    @classmethod
    def of(
        cls,
        measure: str,
        subset: str | Sequence[str],
        items: Sequence[Any],
        gold: Iterable[Any] | None,
        predicted: Iterable[Any],
    ) -> Outcomes:
        """Outcomes of one subset (or per-item subsets), values made plain: floats, or strings for labels;
        a rank measure's predictions their dense ranks (over all the items given, so within each subset too)."""
        n = len(items)
        subsets = (subset,) * n if isinstance(subset, str) else tuple(subset)
        plain = str if measure in LABEL_MEASURES else float
        kept: Callable[[Any], Any] = plain
        if measure in RANK_MEASURES:
            values = np.asarray(list(predicted), dtype=float)
            if not np.isfinite(values).all():
                raise ValueError(f"{measure} outcomes need finite predictions")
            predicted, kept = _groups(values)[2].tolist(), int
        return cls(
            measure,
            subsets,
            tuple(str(i) for i in items),
            (None,) * n if gold is None else tuple(plain(g) for g in gold),
            tuple(kept(p) for p in predicted),
        )

    def __add__(self, other: Outcomes) -> Outcomes:
        """Two subsets' outcomes together (one measure)."""
        joined = join([self, other])
        assert joined is not None
        return joined

    def subsets(self) -> dict[str, np.ndarray]:
        """Subset -> positions of its items, subsets in sorted order."""
        found: dict[str, list[int]] = {}
        for at, name in enumerate(self.subset):
            found.setdefault(name, []).append(at)
        return {name: np.asarray(found[name]) for name in sorted(found)}

    @cached_property
    def _by_subset(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Per subset, its positions, gold and predictions as arrays (made once: a comparison asks thousands of times)."""
        labels = self.measure in LABEL_MEASURES
        gold = np.asarray(self.gold, dtype=object if labels else float)
        predicted = np.asarray(self.predicted, dtype=object if labels else float)
        return {name: (at, gold[at], predicted[at]) for name, at in self.subsets().items()}

    def scores(self, weights: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """Per subset, its score under each row of `weights` ((B, n) over all items; None: the score itself)."""
        measure = MEASURES.get(self.measure)
        w = np.ones((1, len(self.item))) if weights is None else weights
        return {name: measure(w[:, at], gold, predicted) for name, (at, gold, predicted) in self._by_subset.items()}


def join(parts: Sequence[Outcomes]) -> Outcomes | None:
    """The outcomes of several subsets (of one measure) as one, each column joined once; None for none."""
    if not parts:
        return None
    measures = {p.measure for p in parts}
    if len(measures) > 1:
        raise ValueError(f"outcomes of {' and '.join(sorted(measures))} cannot be joined")
    return Outcomes(
        parts[0].measure,
        *(
            tuple(chain.from_iterable(getattr(p, name) for p in parts))
            for name in ("subset", "item", "gold", "predicted")
        ),
    )


MEASURES: Registry[Measure] = Registry("outcome measure")


def _groups(values: np.ndarray, descending: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order sorting the items by value, start of each run of equal values in that order, group of each item)."""
    order = np.argsort(-values if descending else values, kind="stable")
    ordered = values[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    group = np.empty(len(values), dtype=int)
    group[order] = np.cumsum(np.r_[True, ordered[1:] != ordered[:-1]]) - 1
    return order, starts, group


def weighted_ranks(w: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per replicate, each item's rank in the drawn sample (1-based, ties averaged: scipy's `rankdata`)."""
    order, starts, group = _groups(values)
    per_group = np.add.reduceat(w[:, order], starts, axis=1)
    below = np.cumsum(per_group, axis=1) - per_group
    return (below + (per_group + 1) / 2)[:, group]


def _weighted_pearson(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    total = w.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):  # a constant side, or no item drawn: NaN, as scipy gives
        dx = x - (w * x).sum(axis=1, keepdims=True) / total
        dy = y - (w * y).sum(axis=1, keepdims=True) / total
        return (w * dx * dy).sum(axis=1) / np.sqrt((w * dx * dx).sum(axis=1) * (w * dy * dy).sum(axis=1))


@MEASURES.register("spearman")
def spearman(w: np.ndarray, gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Spearman's rho of gold and prediction over the drawn items (scipy.stats.spearmanr on the sample)."""
    return _weighted_pearson(w, weighted_ranks(w, gold), weighted_ranks(w, predicted))


@MEASURES.register("ap")
def average_precision(w: np.ndarray, gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Average precision of the positives (gold 1) ranked by prediction, one threshold per distinct
    value (scikit-learn's `average_precision_score`: sum over thresholds of recall gained x precision)."""
    order, starts, _ = _groups(predicted, descending=True)
    positive = (gold[order] == 1).astype(float)
    tp = np.cumsum(np.add.reduceat(w[:, order] * positive, starts, axis=1), axis=1)
    seen = np.cumsum(np.add.reduceat(w[:, order], starts, axis=1), axis=1)
    gained = np.diff(np.c_[np.zeros(len(w)), tp], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):  # no positive drawn: undefined
        return (gained * np.where(seen > 0, tp / np.where(seen > 0, seen, 1), 0)).sum(axis=1) / tp[:, -1]


@MEASURES.register("accuracy")
def accuracy(w: np.ndarray, gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """The weighted share of items predicted right (undefined on a draw of none of them)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * (gold == predicted)).sum(axis=1) / w.sum(axis=1)


@MEASURES.register("mean")
def mean(w: np.ndarray, gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """The weighted mean of the items' own scores (undefined on a draw of none of them)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w * predicted).sum(axis=1) / w.sum(axis=1)


def _entropy(counts: np.ndarray) -> np.ndarray:
    total = counts.sum(axis=1, keepdims=True)
    p = np.where(counts > 0, counts / total, 1.0)
    return -(np.where(counts > 0, p * np.log(p), 0.0)).sum(axis=1)


@MEASURES.register("v_measure")
def v_measure(w: np.ndarray, gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """V-measure of the clusters against the labels over the drawn items (scikit-learn's
    `v_measure_score`: the harmonic mean of homogeneity and completeness, 1 where a side is one class)."""
    classes, c = np.unique(gold.astype(str), return_inverse=True)
    clusters, k = np.unique(predicted.astype(str), return_inverse=True)
    cell = c * len(clusters) + k
    order, starts, _ = _groups(cell)
    joint = np.zeros((len(w), len(classes) * len(clusters)))  # per replicate, the drawn items of each (class, cluster)
    joint[:, cell[order[starts]]] = np.add.reduceat(w[:, order], starts, axis=1)
    by_class = joint.reshape(len(w), len(classes), len(clusters)).sum(axis=2)
    by_cluster = joint.reshape(len(w), len(classes), len(clusters)).sum(axis=1)
    h_class, h_cluster, h_joint = _entropy(by_class), _entropy(by_cluster), _entropy(joint)
    with np.errstate(invalid="ignore", divide="ignore"):
        homogeneity = np.where(h_class > 0, 1 - (h_joint - h_cluster) / np.where(h_class > 0, h_class, 1), 1.0)
        completeness = np.where(h_cluster > 0, 1 - (h_joint - h_class) / np.where(h_cluster > 0, h_cluster, 1), 1.0)
        total = homogeneity + completeness
        return np.where(total > 0, 2 * homogeneity * completeness / np.where(total > 0, total, 1), 0.0)
