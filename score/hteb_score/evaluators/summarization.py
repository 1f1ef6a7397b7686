"""Summarization: does embedding similarity to the human summaries rank machine summaries as
humans do?

For each document, each machine summary is scored by its highest cosine (torch float32, as
mteb's `cos_sim`) to that document's human summaries; the Spearman correlation of these scores
with the human relevance ratings is taken per document and averaged over documents. A document
whose ratings, cosine scores or dot-product scores are all equal is skipped (mteb's rule). The
document text itself is never embedded.
mteb: main score `cosine_spearman`; for the task `SummEval` mteb 2.26 keeps the
DeprecatedSummarizationEvaluator, which averages each document's (statistic, p-value) pair
together (mteb issue #1156); that is reproduced here for that task only.
hteb (the paper, App. G: Spearman): `spearman`, the per-document Spearman mean (fixed evaluator).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import pearsonr, spearmanr

from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, register, task_score
from hteb_score.evaluators.outcomes import Outcomes, join
from hteb_score.evaluators.similarity import cos_matrix, dot_matrix
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.flags import Flag

if TYPE_CHECKING:
    from hteb_score.evaluators.protocol import Protocol


@register
class SummarizationEvaluator(Evaluator):
    task_types = ("Summarization",)
    undefined_because = (
        "every document was skipped: its ratings or the model's similarities are all equal (mteb's rule)"
    )

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        require_rows(dataset, dataset.info.eval_split, dataset.eval_rows())
        return []

    def texts(self, dataset: SourceDataset) -> list[Text]:
        rows = dataset.eval_rows()
        return [(t, None) for r in rows for t in r["human_summaries"]] + [
            (t, None) for r in rows for t in r["machine_summaries"]
        ]

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        metric = context.protocol.main_metric(dataset.info.task_type, dataset.info.mteb_task)
        rows = dataset.eval_rows()
        deprecated = context.protocol.summarization(dataset.info.mteb_task).deprecated
        ids = dataset.ids[dataset.info.eval_split]
        details = {}
        outcomes = []
        for subset, index in group_rows(rows).items():
            per_doc = [_predictions(rows[i], embed) for i in index]
            kept = [p for p in per_doc if p is not None]
            details[subset] = _correlations(kept, deprecated)
            if kept and not deprecated:  # the main score is the mean of each kept document's Spearman
                outcomes.append(
                    Outcomes.of(
                        "mean",
                        subset,
                        [ids[i] for i, p in zip(index, per_doc) if p is not None],
                        None,
                        [spearmanr(doc[0], doc[1]).statistic for doc in kept],
                    )
                )
        return task_score(
            metric,
            details,
            {"similarity": "cosine", "correlation": "spearman", "deprecated_evaluator": deprecated},
            because=self.undefined_because,
            outcomes=join(outcomes) if metric in ("spearman", "cosine_spearman") else None,
        )


def _predictions(row: dict, embed: Embed) -> tuple[list[float], list[float], list[float]] | None:
    """(gold, cosine predictions, dot predictions) of one document, or None when mteb skips it."""
    human = np.asarray(embed(row["human_summaries"], None))
    machine = np.asarray(embed(row["machine_summaries"], None))
    gold = [float(x) for x in row["relevance"]]
    # one machine summary at a time, as mteb: a (1, d) product rounds unlike a row of an (n, d) one,
    # and near-equal maxima decide Spearman's ties
    cosine = [float(cos_matrix(m[None, :], human).max()) for m in machine]
    dot = [float(dot_matrix(m[None, :], human).max()) for m in machine]
    if len(set(gold)) == 1 or len(set(dot)) == 1 or len(set(cosine)) == 1:
        return None
    return gold, cosine, dot


def _correlations(kept: list[tuple[list[float], list[float], list[float]]], deprecated: bool) -> dict[str, float]:
    if not kept:  # nothing to average: undefined, which task_score flags
        return {"cosine_spearman": math.nan, "spearman": math.nan}

    def mean(fn, column: int) -> float:
        if deprecated:  # np.mean over (statistic, pvalue) pairs, as mteb's deprecated evaluator
            return float(np.mean([tuple(fn(doc[0], doc[column])) for doc in kept]))
        return float(np.mean([fn(doc[0], doc[column]).statistic for doc in kept]))

    out = {
        "cosine_spearman": mean(spearmanr, 1),
        "cosine_pearson": mean(pearsonr, 1),
        "dot_spearman": mean(spearmanr, 2),
        "dot_pearson": mean(pearsonr, 2),
    }
    out["spearman"], out["pearson"] = out["cosine_spearman"], out["cosine_pearson"]
    return out
