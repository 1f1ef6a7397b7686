"""Model against model: is A really ahead of B? For every pair of models and every ranked column
(Original, each axis with Noise's, the HTEB total), the paired difference over the datasets all the
models share (Hodges-Lehmann shift with its 95% CI, Wilcoxon p: `scoring.statistics.paired_effect`),
Holm-corrected over the pairs of the column; from the pairs it separates, each model's rank interval
and the groups of models that cannot be told apart (`stats.rank_groups`).

A pair is separated when its Holm p is below ALPHA; the winner is the model its HL shift favours.
The family-wise error rate over a column's pairs is then at most ALPHA, so models that are truly
equal share a group, and every model's true rank lies in its interval, with probability at least 1 - ALPHA.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hteb_contract.common.escape import md_text

from hteb_score.report.formatting import column_label, confidence_interval, md_row, number, p_value
from hteb_score.scoring.model_scores import ModelScores
from hteb_score.scoring.statistics import paired_effect
from hteb_score.stats.holm import holm
from hteb_score.stats.rank_groups import compact_letters, letter_groups, rank_intervals

ALPHA = 0.05
ORIGINAL = "original"
METHOD = {
    "unit": "per dataset, score of the first model minus the second's, over the datasets every model has the column on",
    "test": "Wilcoxon signed-rank, two-sided, zero differences dropped; HL shift with its distribution-free 95% CI",
    "correction": f"Holm over the pairs of each column; a pair is separated when its Holm p < {ALPHA}",
    "ranks": "point rank by the mean over datasets (1 = best); interval [1 + models separated above, m - models "
             "separated below], widened to hold the point rank: simultaneous, family-wise 95%",
    "groups": "compact letter display (insert-absorb): models sharing a letter are not separated",
}


@dataclass(frozen=True)
class PairTest:
    """`first` (the better point rank) minus `second`, per dataset: the paired effect with Holm's p."""

    first: str
    second: str
    effect: dict[str, Any]

    @property
    def separated(self) -> bool:
        p = self.effect.get("p_holm")
        return p is not None and p < ALPHA

    @property
    def winner(self) -> str | None:
        """The model the HL shift (failing it, the mean difference) favours, where the pair is separated."""
        if not self.separated:
            return None
        direction = self.effect["hl_shift"] or self.effect["mean_delta"] or 0.0
        return self.first if direction >= 0 else self.second

    def to_json(self) -> dict[str, Any]:
        return {"first": self.first, "second": self.second, "separated": self.separated, "winner": self.winner,
                **self.effect}


@dataclass(frozen=True)
class ColumnRanking:
    """The models on one column: mean score, point rank, rank interval and group letters; the pairs."""

    column: str
    datasets: int
    scores: dict[str, float]
    ranks: dict[str, int]
    intervals: dict[str, tuple[int, int]]
    letters: dict[str, str]
    pairs: list[PairTest]

    @property
    def order(self) -> list[str]:
        return sorted(self.ranks, key=lambda m: (self.ranks[m], m))

    def cell(self, model: str) -> str:
        """`2 [1-3] ab`: point rank, interval (where it is wider than the point) and groups."""
        low, high = self.intervals[model]
        span = f" [{low}-{high}]" if low != high else ""
        return f"{self.ranks[model]}{span} {self.letters[model]}"

    def groups(self) -> dict[str, list[str]]:
        return letter_groups({m: self.letters[m] for m in self.order})

    def to_json(self) -> dict[str, Any]:
        return {
            "datasets": self.datasets,
            "order": self.order,
            "ranks": {m: {"score": self.scores[m], "rank": self.ranks[m], "rank_low": self.intervals[m][0],
                          "rank_high": self.intervals[m][1], "group": self.letters[m]} for m in self.order},
            "groups": self.groups(),
            "pairs": [p.to_json() for p in self.pairs],
        }


def rank_models(scores: Mapping[str, Mapping[str, float]], column: str = "score", *, ci_method: str = "walsh",
                seed: int = 0) -> ColumnRanking:
    """`scores[model][dataset]`: every pair tested over the datasets all models have, Holm over the
    pairs, then ranks, intervals and letters."""
    models = sorted(scores)
    shared = sorted(set.intersection(*(set(scores[m]) for m in models))) if models else []
    means = {m: float(np.mean([scores[m][d] for d in shared])) if shared else float("nan") for m in models}
    ranks = {m: 1 + sum(v > means[m] for v in means.values()) for m in models}
    order = sorted(models, key=lambda m: (ranks[m], m))
    effects = [(a, b, paired_effect([scores[a][d] - scores[b][d] for d in shared], ci_method=ci_method, seed=seed))
               for i, a in enumerate(order) for b in order[i + 1:]]
    for (_, _, effect), adjusted in zip(effects, holm([e["p_value"] for _, _, e in effects])):
        effect["p_holm"] = adjusted
    pairs = [PairTest(a, b, e) for a, b, e in effects]
    separated = {(p.winner, p.second if p.winner == p.first else p.first) for p in pairs if p.winner is not None}
    return ColumnRanking(column, len(shared), means, ranks, rank_intervals(order, ranks, separated),
                         compact_letters(order, separated), pairs)


def pairwise_rankings(models: Sequence[ModelScores], columns: Sequence[str], *, ci_method: str = "walsh",
                      seed: int = 0) -> dict[str, ColumnRanking]:
    """Original and each of `columns` (axes, the total) ranked model against model, on the scores given
    (the comparison's common views: every model on the same datasets and variants)."""
    out = {}
    for name in [ORIGINAL, *columns]:
        by_model = {m.model: (m.original if name == ORIGINAL else m.column(name)) for m in models}
        if all(by_model.values()) and set.intersection(*(set(v) for v in by_model.values())):
            out[name] = rank_models(by_model, name, ci_method=ci_method, seed=seed)
    return out


def pairwise_json(rankings: Mapping[str, ColumnRanking]) -> dict[str, Any]:
    return {"alpha": ALPHA, "method": METHOD, "columns": {n: r.to_json() for n, r in rankings.items()}}


def label(name: str) -> str:
    return "Original" if name == ORIGINAL else column_label(name)


def groups_sentence(ranking: ColumnRanking, name: Callable[[str], str] = str) -> str:
    """"Under Noise, over 15 datasets: one group (a: A, B, C, D): no pair is separated." or the groups listed;
    `name` writes a model's name for the output it goes to (Markdown escapes it)."""
    found = ranking.groups()
    listed = "; ".join(f"{letter}: {', '.join(map(name, models))}" for letter, models in found.items())
    separated = sum(p.separated for p in ranking.pairs)
    verdict = ("no pair is separated" if not separated
               else f"{separated} of {len(ranking.pairs)} pairs separated")
    return (f"{label(ranking.column)}, over {ranking.datasets} datasets: "
            f"{len(found)} group{'s' if len(found) != 1 else ''} ({listed}); {verdict}.")


def markdown(rankings: Mapping[str, ColumnRanking]) -> list[str]:
    """comparison.md's section: the ranks table (one column per ranked column) and each column's pairs."""
    if not rankings or len(next(iter(rankings.values())).ranks) < 2:
        return []
    names = list(rankings)
    models = next(iter(rankings.values())).order
    out = ["", "## Model against model (Wilcoxon, Hodges-Lehmann, Holm over the pairs)", "",
           "Per pair of models and column, the per-dataset difference (first minus second) over the datasets every "
           f"model has: HL shift with its 95% CI, Wilcoxon p, Holm-corrected over the pairs; separated: Holm p < {ALPHA}. "
           "A cell reads `rank [interval] groups`: the point rank by the mean, the ranks the model can take given "
           "the separated pairs (family-wise 95%), and its letters: models sharing a letter cannot be told apart.",
           "", *(f"- {groups_sentence(rankings[n], md_text)}" for n in names), "",
           md_row(["Model", *(label(n) for n in names)]), md_row(["---"] * (1 + len(names)))]
    out += [md_row([md_text(m), *(rankings[n].cell(m) if m in rankings[n].ranks else "-" for n in names)]) for m in models]
    for name in names:
        out += ["", f"### {label(name)}: pairs", "",
                md_row(["First", "Second", "HL shift", "95% CI", "p", "p (Holm)", "separated", "datasets"]),
                md_row(["---"] * 8)]
        out += [md_row([md_text(p.first), md_text(p.second), number(p.effect["hl_shift"], sign=True), confidence_interval(p.effect),
                      p_value(p.effect["p_value"]), p_value(p.effect["p_holm"]), "yes" if p.separated else "no",
                      str(p.effect["n_datasets"])]) for p in rankings[name].pairs]
    return out

