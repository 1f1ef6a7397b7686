"""STS and STR: Spearman correlation between gold scores and the cosine of the two embeddings.

mteb (AbsTaskSTS + AnySTSEvaluator): cosine = sklearn `1 - paired_cosine_distances`; Spearman
and Pearson from scipy over all pairs of a subset; main score `cosine_spearman`. mteb's gold
min/max normalisation is affine with positive slope, so it changes no correlation and is skipped.
hteb (the paper, App. G): the same number, named `spearman`. STR has no code path of its own in
either (SemRel24STS is an STS task). Subsets (`lang`) are scored separately and averaged.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics.pairwise import paired_euclidean_distances, paired_manhattan_distances

from hteb_contract.errors import HtebError
from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, register, task_score
from hteb_score.evaluators.similarity import paired_cosine
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_contract.sources import SourceDataset


@register
class STSEvaluator(Evaluator):
    task_types = ("STS", "STR")

    def texts(self, dataset: SourceDataset) -> list[Text]:
        rows = dataset.eval_rows()
        return [(r["sentence1"], None) for r in rows] + [(r["sentence2"], None) for r in rows]

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        metric = context.protocol.main_metric(dataset.info.task_type)
        rows = dataset.eval_rows()
        require_rows(dataset, dataset.info.eval_split, rows)
        details = {}
        for subset, index in group_rows(rows).items():
            if len(index) < 2:
                raise HtebError(f"{dataset.name}: subset {subset!r} has {len(index)} pair; a correlation needs at least 2")
            e1 = embed([rows[i]["sentence1"] for i in index], None)
            e2 = embed([rows[i]["sentence2"] for i in index], None)
            gold = np.asarray([float(rows[i]["score"]) for i in index])
            details[subset] = _correlations(gold, e1, e2)
            details[subset]["spearman"] = details[subset]["cosine_spearman"]  # a cosine model's similarity
            details[subset]["pearson"] = details[subset]["cosine_pearson"]
        return task_score(metric, details, {"similarity": "cosine", "correlation": "spearman"})


def _correlations(gold: np.ndarray, e1: np.ndarray, e2: np.ndarray) -> dict[str, float]:
    predictions = {
        "cosine": paired_cosine(e1, e2),
        "manhattan": -paired_manhattan_distances(e1, e2),
        "euclidean": -paired_euclidean_distances(e1, e2),
    }
    out = {}
    for name, scores in predictions.items():
        out[f"{name}_pearson"] = float(pearsonr(gold, scores).statistic)
        out[f"{name}_spearman"] = float(spearmanr(gold, scores).statistic)
    return out
