"""STS and STR (SemRel2024 is an STS task in mteb; there is no separate STR code path).

Both protocols: prediction = cosine of the two sentence embeddings, computed as sklearn's
`1 - paired_cosine_distances` (mteb's formula, float32); score = scipy Spearman correlation with
the gold scores over all pairs of a subset; task score = mean over `lang` subsets. Gold scores are
not rescaled: mteb's min/max normalisation is affine and changes no correlation.
Metric names: `cosine_spearman` (mteb's main score) under `mteb`, `spearman` under `hteb`
(the paper's name for the same number; App. G).
"""

from __future__ import annotations

import numpy as np
from scipy.stats import pearsonr, spearmanr

from hteb_score.evaluators import Embed, Evaluator, TaskScore, check_protocol, make_score, register_evaluator, split_subsets
from hteb_score.evaluators.similarity import paired_cosine
from hteb_score.sources import SourceDataset


@register_evaluator("STS", "STR")
class STSEvaluator(Evaluator):
    def texts(self, dataset: SourceDataset, protocol: str) -> list[tuple[str, str | None]]:
        return [(row[f], None) for row in dataset.eval_rows() for f in ("sentence1", "sentence2")]

    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        check_protocol(protocol)
        main = "cosine_spearman" if protocol == "mteb" else "spearman"
        per_subset = {}
        for subset, rows in split_subsets(dataset.eval_rows()).items():
            cosine = paired_cosine(embed([r["sentence1"] for r in rows], None), embed([r["sentence2"] for r in rows], None))
            gold = np.asarray([float(r["score"]) for r in rows])
            spearman = float(spearmanr(gold, cosine).statistic)
            per_subset[subset] = {main: spearman, "cosine_pearson": float(pearsonr(gold, cosine).statistic)}
        return make_score(main, per_subset)
