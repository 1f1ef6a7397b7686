"""Model against model: is A really ahead of B? For every pair of models and every ranked column
(Original, each axis with Noise's, the HTEB total), the paired difference over the datasets all the
models share (Hodges-Lehmann shift with its 95% CI, Wilcoxon p: `scoring.statistics.paired_effect`),
corrected over the pairs of the column by Shaffer's step-down (`stats.shaffer`: Holm sharpened by
what pairs of models imply about each other; plain Holm's p is kept beside it); from the pairs it
separates, each model's rank interval and the groups of models that cannot be told apart
(`stats.rank_groups`).

A pair is separated when its Shaffer p is below ALPHA; the winner is the model its HL shift favours.
The family-wise error rate over a column's pairs is then at most ALPHA, so models that are truly
equal share a group, and every model's true rank lies in its interval, with probability at least 1 - ALPHA.

This answers "is A ahead of B on datasets like these": the datasets are the sample. What the test can
see is stated beside it: the spread of the per-dataset differences (`stats.power.pooled_difference_sd`)
and the smallest gap found 80% of the time at that spread (`stats.power.detectable_gap`).

Chance rows (report/compare/chance.py) take no rank, interval or group and no part in the spread: a model's
distance from random vectors would swell the family the real pairs are corrected over and the SD their
power is stated at. Their pairs (each model against each chance row, and the chance rows against each
other) are a family of their own, corrected by Holm (a family of pairs against baselines has none of the
logical constraints Shaffer sharpens by; its `p_shaffer` is that Holm p).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from hteb_contract.common.escape import md_text

from hteb_score.report.formatting import column_label, confidence_interval, md_row, number, p_value
from hteb_score.scoring.model_scores import ModelScores
from hteb_score.scoring.statistics import paired_effect
from hteb_score.stats.holm import holm
from hteb_score.stats.power import POWER, detectable_gap, pooled_difference_sd, power
from hteb_score.stats.rank_groups import compact_letters, letter_groups, rank_intervals
from hteb_score.stats.shaffer import shaffer

ALPHA = 0.05
ORIGINAL = "original"
#: the gaps (points) `power_markdown` states how often the tests find
POWER_GAPS = (2.0, 4.0, 6.0, 8.0, 10.0, 12.0)
METHOD = {
    "unit": "per dataset, score of the first model minus the second's, over the datasets every model has the column on",
    "test": "Wilcoxon signed-rank, two-sided, zero differences dropped; HL shift with its distribution-free 95% CI",
    "correction": "Shaffer's S1 step-down over all pairs of each column (Shaffer 1986; Holm with the logical "
    "constraints of pairwise comparisons: at step i, p is multiplied by the most nulls that can still be "
    f"true); a pair is separated when its Shaffer p (p_shaffer) < {ALPHA}; p_holm: plain Holm, for "
    "reference. A chance row's pairs (each model against it, chance rows against each other) are a "
    "family of their own, Holm over it (their p_shaffer is that Holm p); chance rows take no rank, "
    "group or part in the spread",
    "ranks": "point rank by the mean over datasets (1 = best); interval [1 + models separated above, m - models "
    "separated below], widened to hold the point rank: simultaneous, family-wise 95%",
    "groups": "compact letter display (insert-absorb): models sharing a letter are not separated",
    "power": "difference_sd: the per-dataset differences' SD, pooled over the pairs (root mean variance); "
    "detectable_gap: the smallest lead of one model over equal others at which each of its pairs is "
    f"separated, with the right winner, with probability {POWER}, at that SD and this many datasets and "
    "models (seeded simulation of the same tests: stats.power)",
}


@dataclass(frozen=True)
class PairTest:
    """`first` (the better point rank) minus `second`, per dataset: the paired effect with Shaffer's
    (and Holm's) p."""

    first: str
    second: str
    effect: dict[str, Any]

    @property
    def separated(self) -> bool:
        p = self.effect.get("p_shaffer")
        return p is not None and p < ALPHA

    @property
    def winner(self) -> str | None:
        """The model the HL shift (failing it, the mean difference) favours, where the pair is separated."""
        if not self.separated:
            return None
        direction = self.effect["hl_shift"] or self.effect["mean_delta"] or 0.0
        return self.first if direction >= 0 else self.second

    def to_json(self) -> dict[str, Any]:
        return {
            "first": self.first,
            "second": self.second,
            "separated": self.separated,
            "winner": self.winner,
            **self.effect,
        }


@dataclass(frozen=True)
class ColumnRanking:
    """The models on one column: mean score, point rank, rank interval and group letters; the pairs;
    the spread of the pairs' per-dataset differences and the gap the tests find at it (None: too few
    datasets or models)."""

    column: str
    datasets: int
    scores: dict[str, float]
    ranks: dict[str, int]
    intervals: dict[str, tuple[int, int]]
    letters: dict[str, str]
    pairs: list[PairTest]
    difference_sd: float | None = None
    detectable_gap: float | None = None
    chance_pairs: list[PairTest] = field(default_factory=list)  # with a chance row: their own family (Holm)

    @property
    def all_pairs(self) -> list[PairTest]:
        """The models' pairs, then those with a chance row."""
        return [*self.pairs, *self.chance_pairs]

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
            "ranks": {
                m: {
                    "score": self.scores[m],
                    "rank": self.ranks[m],
                    "rank_low": self.intervals[m][0],
                    "rank_high": self.intervals[m][1],
                    "group": self.letters[m],
                }
                for m in self.order
            },
            "groups": self.groups(),
            "pairs": [p.to_json() for p in self.all_pairs],
            "difference_sd": self.difference_sd,
            "detectable_gap": self.detectable_gap,
        }


def rank_models(
    scores: Mapping[str, Mapping[str, float]],
    column: str = "score",
    *,
    ci_method: str = "walsh",
    seed: int = 0,
    chance: Collection[str] = (),
) -> ColumnRanking:
    """`scores[model][dataset]`: every pair of the models not in `chance` tested over the datasets all
    have, Shaffer over those pairs, then ranks, intervals and letters, the spread and the detectable gap;
    the pairs with a chance row tested over the same datasets, Holm over them."""
    everyone = sorted(scores)
    models = [m for m in everyone if m not in chance]
    rows = [m for m in everyone if m in chance]
    shared = sorted(set.intersection(*(set(scores[m]) for m in everyone))) if everyone else []
    means = {m: float(np.mean([scores[m][d] for d in shared])) if shared else float("nan") for m in everyone}
    ranks = {m: 1 + sum(means[o] > means[m] for o in models) for m in models}
    order = sorted(models, key=lambda m: (ranks[m], m))

    def tested(
        pairs: Sequence[tuple[str, str]], correct: Callable[[list[float | None]], list[float | None]]
    ) -> list[PairTest]:
        effects = [
            (a, b, paired_effect([scores[a][d] - scores[b][d] for d in shared], ci_method=ci_method, seed=seed))
            for a, b in pairs
        ]
        p_values = [e["p_value"] for _, _, e in effects]
        for (_, _, effect), by_holm, corrected in zip(effects, holm(p_values), correct(p_values)):
            effect["p_holm"], effect["p_shaffer"] = by_holm, corrected
        return [PairTest(a, b, e) for a, b, e in effects]

    pairs = tested([(a, b) for i, a in enumerate(order) for b in order[i + 1 :]], lambda p: shaffer(p, len(models)))
    by_mean = sorted(rows, key=lambda m: (-means[m], m))
    chance_pairs = tested(
        [(a, c) for a in order for c in rows] + [(a, b) for i, a in enumerate(by_mean) for b in by_mean[i + 1 :]], holm
    )
    separated = {(p.winner, p.second if p.winner == p.first else p.first) for p in pairs if p.winner is not None}
    spread = pooled_difference_sd({m: {d: scores[m][d] for d in shared} for m in models})
    gap = detectable_gap(spread, len(shared), models=len(models)) if spread else None
    return ColumnRanking(
        column,
        len(shared),
        means,
        ranks,
        rank_intervals(order, ranks, separated),
        compact_letters(order, separated),
        pairs,
        spread,
        gap,
        chance_pairs,
    )


def pairwise_rankings(
    models: Sequence[ModelScores],
    columns: Sequence[str],
    *,
    ci_method: str = "walsh",
    seed: int = 0,
    chance: Collection[str] = (),
) -> dict[str, ColumnRanking]:
    """Original and each of `columns` (axes, the total) ranked model against model, on the scores given
    (the comparison's common views: every model on the same datasets and variants); the `chance` rows'
    pairs a family of their own."""
    out = {}
    for name in [ORIGINAL, *columns]:
        by_model = {m.model: (m.original if name == ORIGINAL else m.column(name)) for m in models}
        if all(by_model.values()) and set.intersection(*(set(v) for v in by_model.values())):
            out[name] = rank_models(by_model, name, ci_method=ci_method, seed=seed, chance=chance)
    return out


def pairwise_json(rankings: Mapping[str, ColumnRanking]) -> dict[str, Any]:
    return {"alpha": ALPHA, "method": METHOD, "columns": {n: r.to_json() for n, r in rankings.items()}}


def label(name: str) -> str:
    return "Original" if name == ORIGINAL else column_label(name)


def power_sentence(ranking: ColumnRanking) -> str:
    """What the tests can see at this column's spread: "a gap is found 80% of the time from 10.48 points
    (SD of the per-dataset differences 10.56)"; "" where the spread is undefined."""
    if ranking.difference_sd is None:
        return ""
    spread = f"SD of the per-dataset differences {number(ranking.difference_sd)}"
    if ranking.detectable_gap is None:
        return f" No gap, however large, is found {POWER:.0%} of the time over so few datasets ({spread})."
    return f" A gap is found {POWER:.0%} of the time from {number(ranking.detectable_gap)} points ({spread})."


def groups_sentence(ranking: ColumnRanking, name: Callable[[str], str] = str) -> str:
    """ "Noise, over 15 datasets: 1 group (a: A, B, C, D); no pair is separated. A gap is found ..." or the
    groups listed, then the power sentence; `name` writes a model's name for the output it goes to
    (Markdown escapes it)."""
    found = ranking.groups()
    listed = "; ".join(f"{letter}: {', '.join(map(name, models))}" for letter, models in found.items())
    separated = sum(p.separated for p in ranking.pairs)
    verdict = "no pair is separated" if not separated else f"{separated} of {len(ranking.pairs)} pairs separated"
    against = ""
    if ranking.chance_pairs:
        apart = sum(p.separated for p in ranking.chance_pairs)
        against = (
            f" Against chance (a family of its own, Holm): {apart} of {len(ranking.chance_pairs)} pairs separated."
        )
    return (
        f"{label(ranking.column)}, over {ranking.datasets} datasets: "
        f"{len(found)} group{'s' if len(found) != 1 else ''} ({listed}); {verdict}.{power_sentence(ranking)}"
        f"{against}"
    )


def markdown(rankings: Mapping[str, ColumnRanking]) -> list[str]:
    """comparison.md's section: the ranks table (one column per ranked column) and each column's pairs."""
    if not rankings or not next(iter(rankings.values())).all_pairs:
        return []
    names = list(rankings)
    models = next(iter(rankings.values())).order
    out = [
        "",
        "## Model against model (Wilcoxon, Hodges-Lehmann, Shaffer over the pairs)",
        "",
        "Per pair of models and column, the per-dataset difference (first minus second) over the datasets every "
        "model has: HL shift with its 95% CI, Wilcoxon p, corrected over the pairs by Shaffer's step-down; "
        f"separated: Shaffer p < {ALPHA}. A cell reads `rank [interval] groups`: the point rank by the mean, the "
        "ranks the model can take given the separated pairs (family-wise 95%), and its letters: models sharing a "
        f"letter cannot be told apart. The gap found {POWER:.0%} of the time: one model that far ahead of equal "
        "others, at this spread and these numbers of datasets and models (seeded simulation of the same tests).",
        "",
        *(f"- {groups_sentence(rankings[n], md_text)}" for n in names),
        "",
        md_row(["Model", *(label(n) for n in names)]),
        md_row(["---"] * (1 + len(names))),
    ]
    out += [
        md_row([md_text(m), *(rankings[n].cell(m) if m in rankings[n].ranks else "-" for n in names)]) for m in models
    ]
    for name in names:
        out += [
            "",
            f"### {label(name)}: pairs",
            "",
            md_row(["First", "Second", "HL shift", "95% CI", "p", "p (Shaffer)", "separated", "datasets"]),
            md_row(["---"] * 8),
        ]
        out += [
            md_row(
                [
                    md_text(p.first),
                    md_text(p.second),
                    number(p.effect["hl_shift"], sign=True),
                    confidence_interval(p.effect),
                    p_value(p.effect["p_value"]),
                    p_value(p.effect["p_shaffer"]),
                    "yes" if p.separated else "no",
                    str(p.effect["n_datasets"]),
                ]
            )
            for p in rankings[name].all_pairs
        ]
    return out


def power_markdown(rankings: Mapping[str, ColumnRanking]) -> str:
    """What the tests can find at the spread the models show (docs/comparing.md's generated table): per
    ranked column its spread and the gap found POWER of the time, by one pair tested alone and among all
    pairs (Holm, Shaffer); then, at the first column's spread, how often each of POWER_GAPS is found."""
    spreads = {name: r.difference_sd for name, r in rankings.items() if r.difference_sd is not None}
    if not spreads:
        raise ValueError("no ranked column has two models on two datasets: no spread to simulate at")
    lines = [
        md_row(
            [
                "column",
                "models",
                "datasets",
                "SD of the per-dataset differences",
                f"gap found {POWER:.0%} of the time: one pair alone",
                "among all pairs, Holm",
                "among all pairs, Shaffer",
            ]
        ),
        md_row(["---"] * 7),
    ]
    for name, sd in spreads.items():
        r = rankings[name]
        gaps = [
            detectable_gap(sd, r.datasets, models=len(r.ranks), which=which) for which in ("alone", "holm", "shaffer")
        ]
        lines.append(
            md_row([label(name), str(len(r.ranks)), str(r.datasets), number(sd), *(number(g, 1) for g in gaps)])
        )
    name, sd = next(iter(spreads.items()))
    first = rankings[name]
    lines += [
        "",
        md_row(
            [
                f"gap (points; {label(name)}, SD {number(sd)})",
                "one pair alone",
                "among all pairs, Holm",
                "among all pairs, Shaffer",
                "equal models kept together (Shaffer)",
            ]
        ),
        md_row(["---"] * 5),
    ]
    for gap in POWER_GAPS:
        found = power(gap, sd, first.datasets, models=len(first.ranks))
        lines.append(
            md_row(
                [
                    number(gap, 0),
                    f"{found.alone:.0%}",
                    f"{found.holm:.0%}",
                    f"{found.shaffer:.0%}",
                    f"{1 - found.false:.0%}",
                ]
            )
        )
    return "\n".join(lines)
