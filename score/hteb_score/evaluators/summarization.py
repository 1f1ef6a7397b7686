"""Summarization (SummEval): machine summaries scored against the human summaries of the same text.

Both protocols: for each text and each machine summary, prediction = max over the text's human
summaries of torch `cos_sim` (float32, one machine summary at a time, as mteb); a text is skipped
when its gold relevance, its cosine predictions or its dot-product predictions are all equal; the
source text itself is never embedded.
`mteb` protocol: per text scipy `spearmanr(gold, prediction)`; main score `cosine_spearman` =
mean over texts, except for the mteb task `SummEval` (MTEB(eng, v1)), which keeps mteb's
DeprecatedSummarizationEvaluator: the mean over texts of the (statistic, p-value) pairs together
(mteb issue #1156), reproduced on purpose because that is mteb's published number.
`hteb` protocol: the corrected per-text Spearman mean (`spearman`), for every dataset.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from hteb_score.evaluators import Embed, Evaluator, TaskScore, check_protocol, make_score, register_evaluator
from hteb_score.evaluators.similarity import torch_cosine_matrix, torch_dot_matrix
from hteb_score.sources import SourceDataset

DEPRECATED_TASKS = frozenset({"SummEval"})


@register_evaluator("Summarization")
class SummarizationEvaluator(Evaluator):
    def texts(self, dataset: SourceDataset, protocol: str) -> list[tuple[str, str | None]]:
        return [(s, None) for row in dataset.eval_rows() for f in ("human_summaries", "machine_summaries") for s in row[f]]

    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        check_protocol(protocol)
        deprecated = protocol == "mteb" and (dataset.info.mteb_task or "") in DEPRECATED_TASKS
        per_text = []
        for row in dataset.eval_rows():
            human = embed(list(row["human_summaries"]), None)
            machine = embed(list(row["machine_summaries"]), None)
            gold = [float(v) for v in row["relevance"]]
            cosine = [float(torch_cosine_matrix(m, human).max()) for m in machine]
            dot = [float(torch_dot_matrix(m, human).max()) for m in machine]
            if len(set(gold)) == 1 or len(set(cosine)) == 1 or len(set(dot)) == 1:
                continue
            result = spearmanr(gold, cosine)
            per_text.append((result.statistic, result.pvalue) if deprecated else result.statistic)
        main = "cosine_spearman" if protocol == "mteb" else "spearman"
        value = float(np.mean(per_text)) if per_text else float("nan")
        return make_score(main, {"default": {main: value, "texts_scored": len(per_text)}})
