"""STS and STR: Spearman correlation between gold scores and the cosine of the two embeddings.

mteb (AbsTaskSTS + AnySTSEvaluator): cosine = sklearn `1 - paired_cosine_distances`; Spearman
and Pearson from scipy over all pairs of a subset; main score `cosine_spearman`. mteb's gold
min/max normalisation is affine with positive slope, so it changes no correlation and is skipped.
hteb (the paper, App. G): the same number, named `spearman`. STR has no code path of its own in
either (SemRel24STS is an STS task). Subsets (`lang`) are scored separately and averaged.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
from scipy.stats import ConstantInputWarning, pearsonr, spearmanr
from sklearn.metrics.pairwise import paired_euclidean_distances, paired_manhattan_distances

from hteb_contract.errors import HtebError
from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.base import register
from hteb_score.evaluators.pairs import SentencePairEvaluator, refuse_one_gold_value
from hteb_score.evaluators.similarity import paired_cosine


@register
class STSEvaluator(SentencePairEvaluator):
    task_types = ("STS", "STR")
    settings = {"similarity": "cosine", "correlation": "spearman"}
    gold_field = "score"
    outcome_measures = {"spearman": "spearman", "cosine_spearman": "spearman"}
    undefined_because = "the model gives every pair the same similarity, and a correlation with a constant is undefined"

    def check_subset(self, dataset: SourceDataset, subset: str, pairs: list[dict[str, Any]]) -> None:
        """Fewer than 2 pairs, or gold scores all equal: no correlation exists whatever the model."""
        if len(pairs) < 2:
            raise HtebError(f"{dataset.name}: subset {subset!r} has {len(pairs)} pair; a correlation needs at least 2")
        refuse_one_gold_value(
            dataset,
            subset,
            [float(r["score"]) for r in pairs],
            "all {n} gold scores are {value:g}; a correlation with a constant is undefined",
        )

    def score_pairs(
        self, dataset: SourceDataset, subset: str, pairs: list[dict[str, Any]], e1: np.ndarray, e2: np.ndarray
    ) -> dict[str, float]:
        details = _correlations(np.asarray([float(r["score"]) for r in pairs]), e1, e2)
        details["spearman"] = details["cosine_spearman"]  # a cosine model's similarity
        details["pearson"] = details["cosine_pearson"]
        return details


def _correlations(gold: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> dict[str, float]:
    predictions = {
        "cosine": paired_cosine(e1, e2),
        "manhattan": -paired_manhattan_distances(e1, e2),
        "euclidean": -paired_euclidean_distances(e1, e2),
    }
    out = {}
    with warnings.catch_warnings():  # constant predictions give NaN, reported as undefined by task_score
        warnings.simplefilter("ignore", ConstantInputWarning)
        for name, scores in predictions.items():
            out[f"{name}_pearson"] = float(pearsonr(gold, scores).statistic)
            out[f"{name}_spearman"] = float(spearmanr(gold, scores).statistic)
    return out
