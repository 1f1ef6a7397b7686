"""The result of a comparison, as ranx's `Report`: it renders itself to JSON (comparison.v1) and
Markdown; comparison_files.py adds the HTML page, PNG plots and model-index YAML and saves them together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from hteb_contract.citations import joined_bibliography
from hteb_contract.common.escape import md_block, md_text
from hteb_contract.taxonomy import Taxonomy
from hteb_contract.validation import validate
from hteb_score.report.compare.basis import SAME, Basis, Figures
from hteb_score.report.compare.chance import row_name
from hteb_score.report.compare.coverage_rows import CoverageRow
from hteb_score.report.compare.coverage_rows import markdown as coverage_markdown
from hteb_score.report.formatting import column_label, confidence_interval, count, md_row, number, p_value
from hteb_score.report.compare.lead import Lead
from hteb_score.report.compare.pairwise import ORIGINAL, ColumnRanking, pairwise_json
from hteb_score.report.compare.per_dataset import PairDatasets, attach
from hteb_score.report.compare.per_dataset import markdown as per_dataset_markdown
from hteb_score.report.compare.pairwise import label as ranked_label
from hteb_score.report.compare.pairwise import markdown as pairwise_markdown
from hteb_score.scoring.model_scores import HTEB, ModelScores
from hteb_score.scoring.statistics import effect_least_p
from hteb_score.stats.hodges_lehmann import EXACT_MAX_N, WALSH_NORMAL
from hteb_score.stats.rank_null import DRAWS, Chance
from hteb_score.stats.reliability import SplitHalfResult

SCHEMA_VERSION = "hteb.comparison/1"
UNIT = "points (score x 100); delta = transformed - original"
CHANCE_NOTE = (
    "chance: a null model beside the models (hteb:random, hteb:constant), the score of a model that knows "
    "nothing; it takes no rank, and the lead, the effects across models, ranking stability and reliability "
    "leave it out; model against model keeps it."
)
#: The words before the comparison's BibTeX (comparison.md, report.html).
#: what a stability or reliability row's p and 95% level say, on every page that shows them
CHANCE_WORDS = {
    "stability": (
        "p: the share of {draws:,} seeded random reorderings of the {models} models (each dataset's apart) whose "
        "mean τ reaches this one; random order 95%: the mean τ they stay at or below 95 times in 100, the least "
        "these models and datasets tell from a random reordering (a dataset's τ moves in steps of {step:.3g})."
    ),
    "reliability": (
        "p: the share of {draws:,} seeded draws, each dataset's scores shuffled among the {models} models (halves "
        "that share no ordering), whose median ρ over the same splits reaches this one; unrelated halves 95%: the "
        "median ρ they stay at or below 95 times in 100, the least these models and datasets tell from chance."
    ),
}


#: what sets a reliability's sign, under its table on every page that shows it
SIGN_WORDS = (
    "Level SD and half-gap SD (the median over the splits, in the scores' points): the SD over the models of the "
    "mean of their two half means, and of half their difference. The halves agree where the levels spread more "
    "than the gaps (for Pearson's r exactly: cov(a, b) = var((a + b) / 2) - var((a - b) / 2), which Spearman's ρ "
    "follows on ranks), so models whose levels lie closer than the datasets move them get a ρ below 0 however "
    "reliably each dataset ranks them: what one half gives a model, the other takes away."
)


def chance_words(statistic: str, models: int) -> str:
    """The sentence under a stability or reliability table, for `models` ranked models."""
    pairs = max(models * (models - 1) // 2, 1)
    return CHANCE_WORDS[statistic].format(draws=DRAWS, models=models, step=2 / pairs)


def least_p_cell(effect: dict[str, Any]) -> str:
    return p_value(effect_least_p(effect))


def chance_cells(chance: Chance | None, digits: int) -> list[str]:
    """A row's p and 95% level of chance ("-" for none: the statistic is undefined)."""
    return [p_value(None if chance is None else chance.p), number(None if chance is None else chance.level, digits)]


CITE_NOTE = (
    "HTEB, and the revision each input card was scored on (its content hash pins the data) with its sources, "
    "as `hteb-score cite LABEL` prints them; each entry once."
)


@dataclass(frozen=True)
class ScoreColumns:
    """The score columns every model has on at least one common dataset, by family."""

    transformations: list[str]
    axes: list[str]
    total: list[str]

    def families(self) -> dict[str, list[str]]:
        return {"transformations": self.transformations, "axes": self.axes, "total": self.total}

    def names(self) -> list[str]:
        return [*self.transformations, *self.axes, *self.total]

    def heatmap(self) -> list[str]:
        """The heat map's columns: the transformations; with none the axes, failing those the total."""
        return self.transformations or self.axes or self.total


@dataclass(frozen=True)
class LeaderboardRow:
    """One model's Original, axis and HTEB-total scores (means over datasets) and ranks (1 = best);
    `figures`: all of them with what they rest on; `card`: the model's own figures (all it has, as
    its card says) where the comparison's basis is another set, else None; `chance`: a chance row's
    label (report/compare/chance.py: a null model beside real ones, unranked), else None."""

    model: str
    original: float
    axes: dict[str, float]
    hteb: float | None
    rank_original: int | None
    rank_hteb: int | None
    figures: Figures | None = None
    card: Figures | None = None
    chance: str | None = None

    @property
    def axis_deltas(self) -> dict[str, float]:
        if self.figures is not None:
            return self.figures.axis_deltas
        return {a: v - self.original for a, v in self.axes.items()}

    @property
    def delta(self) -> float | None:
        return None if self.hteb is None else self.hteb - self.original

    @property
    def rank_change(self) -> int | None:
        """Positive = moved up under HTEB."""
        return None if self.rank_hteb is None or self.rank_original is None else self.rank_original - self.rank_hteb

    @property
    def differs_from_card(self) -> bool:
        """Whether a figure shown differs from the model's own (its card's)."""
        return self.card is not None and self.figures is not None and not self.figures.same_as(self.card)

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "original": self.original,
            "axes": self.axes,
            "axis_deltas": self.axis_deltas,
            "hteb": self.hteb,
            "delta": self.delta,
            "rank_original": self.rank_original,
            "rank_hteb": self.rank_hteb,
            "rank_change": self.rank_change,
            "coverage": None if self.figures is None else self.figures.to_json(),
            "card": None if self.card is None else self.card.to_json(),
            "differs_from_card": self.differs_from_card,
            **({} if self.chance is None else {"chance": self.chance}),
        }


@dataclass(frozen=True)
class HeatCell:
    """A heat-map cell: the mean delta on the comparison's basis over `datasets`, and the model's own
    (its card's) over `own_datasets`; None where the model has no such score (shown as missing)."""

    delta: float | None
    datasets: int
    own: float | None
    own_datasets: int

    @property
    def differs(self) -> bool:
        return (self.delta is None) != (self.own is None) or (
            self.delta is not None and self.own is not None and abs(self.delta - self.own) >= SAME
        )

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "differs": self.differs}


@dataclass(frozen=True)
class Stability:
    """Kendall tau per dataset and its mean and sample sd over the datasets where it is defined; `chance`:
    where the mean stands among random reorderings of the models (None where it is undefined)."""

    mean: float | None
    sd: float | None
    n: int
    per_dataset: dict[str, float | None]
    chance: Chance | None = None


@dataclass(frozen=True)
class Reliability:
    """Split-half reliability per axis, or the reason it was not computed; `chance`: per axis, where its
    median stands among halves whose model orderings are unrelated."""

    reason: str | None
    per_axis: dict[str, SplitHalfResult]
    chance: dict[str, Chance | None] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "per_axis": {
                axis: {
                    "median_rho": r.median_rho,
                    "n_splits": r.n_splits,
                    "n_defined": r.n_defined,
                    "level_sd": r.level_sd,
                    "gap_sd": r.gap_sd,
                    "chance": None if (chance := self.chance.get(axis)) is None else asdict(chance),
                }
                for axis, r in self.per_axis.items()
            },
        }


@dataclass(frozen=True)
class Comparison:
    """Everything `hteb-score compare` found; `effects[family][name]` are the statistics' effect
    dicts, `heatmap[model][column]` the heat map's cells; `basis`: which scores the leaderboard and the
    heat map rest on."""

    models: list[ModelScores]
    forced: bool
    warnings: list[str]
    datasets: list[str]
    columns: ScoreColumns
    leaderboard: list[LeaderboardRow]
    ranking_stability: dict[str, Stability]
    effects: dict[str, dict[str, dict[str, Any]]]
    reliability: Reliability
    basis: Basis
    heatmap_columns: list[str]
    heatmap: dict[str, dict[str, HeatCell]]
    taxonomy: Taxonomy  # the axes the compared cards were aggregated by, together (`joined_taxonomy`)
    lead: Lead | None = None  # no HTEB total: who ranks first on the axis beside it (Noise), by how much
    #: model against model per column (Original, axes, total): pairs, rank intervals, groups
    pairwise: dict[str, ColumnRanking] = field(default_factory=dict)
    #: the pairs of `pairwise` on each dataset, over its items (report/compare/per_dataset.py)
    per_dataset: dict[str, list[PairDatasets]] = field(default_factory=dict)
    #: what the figures rest on (report/compare/coverage_rows.py); `coverage_stated`: some card records it
    coverage: list[CoverageRow] = field(default_factory=list)
    coverage_stated: bool = False

    @property
    def has_total(self) -> bool:
        """Whether any model has an HTEB total, here or on its card (else its columns, all "-", are left out)."""
        return defines_total(self.leaderboard)

    def rank(self, row: LeaderboardRow) -> int | None:
        """The row's place: under HTEB, else under the lead's axis, else on Original; a chance row has none."""
        if row.chance is not None:
            return None
        return row.rank_hteb or (self.lead.ranks[row.model] if self.lead else row.rank_original)

    def rank_key(self) -> str:
        """The column the leaderboard ranks by: the HTEB total, else the lead's axis, else Original."""
        if self.has_total:
            return HTEB
        return self.lead.axis if self.lead is not None else ORIGINAL

    def rank_interval(self, row: LeaderboardRow) -> str:
        """`[1-3] ab`: the row's rank interval and groups on the ranked column; "-" where not tested or a
        chance row."""
        ranking = self.pairwise.get(self.rank_key())
        if ranking is None or row.model not in ranking.ranks or row.chance is not None:
            return "-"
        low, high = ranking.intervals[row.model]
        return f"[{low}-{high}] {ranking.letters[row.model]}"

    def rank_column(self) -> str | None:
        """What the rank-change column compares Original with; None where it would be empty."""
        if self.has_total:
            return "HTEB"
        return None if self.lead is None else column_label(self.lead.axis)

    def rank_change(self, row: LeaderboardRow) -> tuple[int, int] | None:
        """(rank on Original, rank under HTEB or the lead's axis), None where there is none."""
        if row.rank_original is None:  # a chance row
            return None
        if self.lead is not None:
            return row.rank_original, self.lead.ranks[row.model]
        return None if row.rank_hteb is None else (row.rank_original, row.rank_hteb)

    @property
    def chance(self) -> dict[str, str]:
        """The chance rows: model -> label."""
        return {r.model: r.chance for r in self.leaderboard if r.chance is not None}

    @property
    def ranked_models(self) -> int:
        """The models beside the chance rows: what ranking stability and reliability compare."""
        return len(self.models) - len(self.chance)

    #: Said once, in place of a section whose statistic needs two ranked models (one per row otherwise).
    ONE_MODEL = "not computed: ranking stability needs two models or more, and this comparison ranks one"

    def counted(self) -> str:
        """ "4 models", or "4 models and 2 chance rows" where chance rows stand beside them."""
        chance = len(self.chance)
        return count(len(self.models) - chance, "model") + (f" and {count(chance, 'chance row')}" if chance else "")

    @property
    def mixed_revisions(self) -> bool:
        return len({m.revision for m in self.models if m.revision is not None}) > 1

    def to_json(self) -> dict[str, Any]:
        """The comparison.json object, validated against comparison.v1."""
        result = {
            "schema_version": SCHEMA_VERSION,
            "inputs": [{"model": m.model, "source": m.source, "dataset_revision": m.revision} for m in self.models],
            "mixed_revisions": self.mixed_revisions,
            "forced": self.forced,
            "warnings": self.warnings,
            "datasets": self.datasets,
            "columns": self.columns.families(),
            "unit": UNIT,
            "basis": self.basis.to_json(),
            "leaderboard": [r.to_json() for r in self.leaderboard],
            "heatmap": {
                "columns": self.heatmap_columns,
                "cells": {m: {n: c.to_json() for n, c in row.items()} for m, row in self.heatmap.items()},
            },
            "ranking_stability": {name: asdict(s) for name, s in self.ranking_stability.items()},
            "effects": self.effects,
            "reliability": self.reliability.to_json(),
            "lead": None if self.lead is None else self.lead.to_json(),
            "pairwise": attach(pairwise_json(self.pairwise), self.per_dataset),
        }
        if self.coverage_stated:  # cards scored before coverage was recorded compare as before
            result["coverage"] = {"stated": True, "rows": [row.to_json() for row in self.coverage]}
        validate("comparison", result, what="comparison")
        return result

    def to_markdown(self) -> str:
        """The comparison as a Markdown report a reader can take in without the JSON."""
        out = ["# HTEB model comparison", ""]
        out += [f"> **Warning:** {md_text(warning)}" for warning in self.warnings]
        if self.warnings:
            out.append("")
        out += [
            f"{self.counted()}, {count(len(self.datasets), 'dataset')}. "
            "Scores in points; deltas (Δ) are transformed minus Original.",
            "",
        ]
        if self.lead is not None:
            out += [f"**{self.lead.sentence(md_text)}**", ""]
        out += [
            f"Basis (`--basis {self.basis.name}`): the leaderboard and the heat map rest on {self.basis.description}.",
            "",
        ]
        out += self._leaderboard_md() + self._heatmap_md() + pairwise_markdown(self.pairwise)
        out += per_dataset_markdown(self.per_dataset, ranked_label, md_text) + self._stability_md() + self._effects_md()
        out += self._reliability_md() + coverage_markdown(self.coverage, self.coverage_stated) + self._inputs_md()
        out += ["", "## How to cite", "", CITE_NOTE, "", md_block(self.citation(), "bibtex")]
        return "\n".join(out) + "\n"

    def citation(self) -> str:
        """What to cite for the compared figures: HTEB, and each input card's revision and sources, each entry once."""
        return joined_bibliography([m.card for m in self.models if m.card is not None])

    def leaderboard_axes(self) -> list[str]:
        """The axes any leaderboard row has a figure for, in taxonomy order."""
        return [a for a in self.taxonomy.members if any(a in r.axes for r in self.leaderboard)]

    def _leaderboard_md(self) -> list[str]:
        """Axes in the HTEB total before it, axes beside it (Noise) after it, with a line saying so;
        a figure that differs from the model's card has the card's beside it."""
        axes = self.leaderboard_axes()
        paper = [a for a in axes if self.taxonomy.in_total(a)]
        beside = [a for a in axes if not self.taxonomy.in_total(a)]
        total, ranked = self.has_total, self.rank_column()
        header = [
            "#",
            "Model",
            "Rank interval, group",
            "Original",
            *(f"{column_label(a)} (Δ)" for a in paper),
            *(["HTEB total", "Δ"] if total else []),
            *(f"{column_label(a)} (Δ)" for a in beside),
            *([f"Rank Original → {ranked}"] if ranked else []),
            "Rests on",
        ]
        out = ["## Leaderboard", ""]
        if beside and total:
            out += [
                f"{', '.join(map(column_label, beside))} is reported beside the HTEB total, not in it: "
                "the total is the mean of the paper's axes, comparable with the paper.",
                "",
            ]
        elif not total:
            out += [
                "No HTEB total is defined (no axis of the paper was scored), so its columns are left out"
                + (f"; the models rank by {ranked}." if ranked else "; the models rank by Original."),
                "",
            ]
        out += [
            "Each axis Δ is against the Original of the datasets the axis was scored on"
            + ("; the HTEB Δ against the Original of the datasets the total rests on" if total else "")
            + '. "card": the model\'s own figure (all it has, as its card says) where it differs. '
            f"Rank interval, group: on {ranked_label(self.rank_key())}, "
            "model against model (below).",
            "",
        ]
        out += [md_row(header), md_row(["---"] * len(header))]
        for r in self.leaderboard:
            cells = {a: leaderboard_cell(r, a) for a in axes}
            name = md_text(row_name(r.model, r.chance)) + (" †" if r.differs_from_card else "")
            out.append(
                md_row(
                    [
                        str(self.rank(r) or "-"),
                        name,
                        self.rank_interval(r),
                        figure_cell(r, "original"),
                        *(cells[a] for a in paper),
                        *([figure_cell(r, "hteb"), figure_cell(r, "delta", sign=True)] if total else []),
                        *(cells[a] for a in beside),
                        *([rank_cell(self.rank_change(r))] if ranked else []),
                        coverage_cell(r),
                    ]
                )
            )
        if any(r.differs_from_card for r in self.leaderboard):
            out += ["", "† a figure differs from the model's card (the card's is given beside it)."]
        if self.chance:
            out += ["", CHANCE_NOTE]
        return out

    def _heatmap_md(self) -> list[str]:
        """The heat map's cells as a table: every transformation any model has, missing cells as `-`."""
        if not self.heatmap_columns:
            return []
        out = [
            "",
            "## Mean delta per transformation (the heat map)",
            "",
            "Per model, the mean over datasets of (transformed - Original), on the basis above; "
            '"card" beside a cell: the model\'s own figure where it differs; - : no score.',
            "",
            md_row(["Model", *(md_text(column_label(n)) for n in self.heatmap_columns)]),
            md_row(["---"] * (1 + len(self.heatmap_columns))),
        ]
        chance = self.chance
        for model, row in self.heatmap.items():
            out.append(
                md_row(
                    [md_text(row_name(model, chance.get(model))), *(heat_cell(row[n]) for n in self.heatmap_columns)]
                )
            )
        return out

    def _stability_md(self) -> list[str]:
        if self.ranked_models < 2:
            return [
                "",
                "## Ranking stability (Kendall τ, Original vs HTEB, per dataset)",
                "",
                self.ONE_MODEL.capitalize() + ".",
            ]
        out = [
            "",
            "## Ranking stability (Kendall τ, Original vs HTEB, per dataset)",
            "",
            "Mean ± sample SD of the per-dataset τ between the models' Original and transformed scores "
            f"(paper Table 4). {chance_words('stability', self.ranked_models)}",
            "",
            "| Transformation / axis | mean τ | SD | p (random order) | random order 95% | datasets |",
            "|---|---|---|---|---|---|",
        ]
        out += [
            md_row(
                [md_text(column_label(name)), number(s.mean, 3), number(s.sd, 3), *chance_cells(s.chance, 3), str(s.n)]
            )
            for name, s in self.ranking_stability.items()
        ]
        return out

    def _effects_md(self) -> list[str]:
        methods = {e["ci_method"] for effects in self.effects.values() for e in effects.values()}
        ci_note = "a seeded percentile bootstrap" if methods == {"bootstrap"} else "a distribution-free"
        if WALSH_NORMAL in methods:
            ci_note += f" (k from the normal approximation where more than {EXACT_MAX_N} datasets differ)"
        out = [
            "",
            "## Transformation effects across models (Hodges-Lehmann, Wilcoxon, Holm)",
            "",
            f"Unit: per dataset, the delta averaged over models. HL shift with {ci_note} 95% CI (not adjusted",
            "for multiple comparisons; a percentage beside a CI is the coverage it reaches where too few datasets",
            "differ for 95%); Wilcoxon signed-rank p, Holm-corrected within each family"
            + ("" if all(map(self.taxonomy.in_total, self.columns.names())) else " (the paper's and Noise's apart)")
            + "; least p = the smallest two-sided p the exact test can give the datasets that moved (before Holm:",
            "the most the data could say); |Δ̃| = median absolute delta (pooled over the axis's transformations for axes).",
            "",
            "| Family | Transformation / axis | HL shift | 95% CI | p (Holm) | least p | median abs delta | datasets |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for family, effects in self.effects.items():
            for name, e in effects.items():
                pooled = e.get("median_abs_delta_pooled")
                abs_delta = pooled if pooled is not None else e["median_abs_delta"]
                ci = confidence_interval(e)
                shift, p_holm = number(e["hl_shift"], sign=True), p_value(e["p_holm"])
                out.append(
                    md_row(
                        [
                            md_text(family),
                            md_text(column_label(name)),
                            shift,
                            ci,
                            p_holm,
                            least_p_cell(e),
                            number(abs_delta),
                            str(e["n_datasets"]),
                        ]
                    )
                )
        return out

    def _reliability_md(self) -> list[str]:
        out = ["", "## Split-half reliability of the per-axis profiles", ""]
        if self.reliability.reason:
            return [*out, f"Not computed: {self.reliability.reason}."]
        out += [
            "Median Spearman ρ between model scores on two task-stratified dataset halves (paper Table 3). "
            + chance_words("reliability", self.ranked_models)
            + " "
            + SIGN_WORDS,
            "",
            "| Axis | median ρ | p (unrelated halves) | unrelated halves 95% | level SD | half-gap SD | splits (defined) |",
            "|---|---|---|---|---|---|---|",
        ]
        out += [
            md_row(
                [
                    md_text(column_label(axis)),
                    number(r.median_rho, 2, sign=True),
                    *chance_cells(self.reliability.chance.get(axis), 2),
                    number(r.level_sd, 2),
                    number(r.gap_sd, 2),
                    f"{r.n_splits} ({r.n_defined})",
                ]
            )
            for axis, r in self.reliability.per_axis.items()
        ]
        return out

    def _inputs_md(self) -> list[str]:
        out = ["", "## Inputs", "", "| Model | Source | Dataset revision |", "|---|---|---|"]
        return out + [md_row([md_text(m.model), md_text(m.source), md_text(m.revision or "-")]) for m in self.models]

    def heatmap_grid(self) -> tuple[list[str], list[list[float | None]]]:
        """The heat map's rows (models in leaderboard order) and cells, as drawn: the `heatmap` deltas."""
        order = [r.model for r in self.leaderboard]
        return order, [[self.heatmap[m][n].delta for n in self.heatmap_columns] for m in order]


def defines_total(rows: Sequence[LeaderboardRow]) -> bool:
    """Whether any row has an HTEB total, on the comparison's basis or on its card."""
    return any(r.hteb is not None or (r.card is not None and r.card.hteb is not None) for r in rows)


def figure_cell(row: LeaderboardRow, name: str, sign: bool = False) -> str:
    """A leaderboard figure, with the card's beside it where that differs."""
    shown = number(getattr(row, name), sign=sign)
    if row.card is None or row.figures is None:
        return shown
    card = getattr(row.card, name)
    mine = getattr(row.figures, name)
    if (card is None) == (mine is None) and (card is None or abs(card - mine) < SAME):
        return shown
    return f"{shown} (card {number(card, sign=sign)})"


def leaderboard_cell(row: LeaderboardRow, axis: str) -> str:
    """`score (Δ)` of an axis, with the card's beside it where either differs; `-` where the model has none."""
    if axis not in row.axes:
        return "-"
    shown = f"{number(row.axes[axis])} ({number(row.axis_deltas[axis], sign=True)})"
    card = row.card
    if card is None or (
        axis in card.axes
        and abs(card.axes[axis] - row.axes[axis]) < SAME
        and abs(card.axis_deltas[axis] - row.axis_deltas[axis]) < SAME
    ):
        return shown
    if axis not in card.axes:
        return f"{shown} (card -)"
    return f"{shown} (card {number(card.axes[axis])} ({number(card.axis_deltas[axis], sign=True)}))"


def rank_cell(ranks: tuple[int, int] | None) -> str:
    """`3 → 1 (+2)`: the rank on Original, the rank under HTEB (or the lead's axis) and the move up."""
    if ranks is None:
        return "-"
    before, after = ranks
    return f"{before} → {after} ({before - after:+d})"


def coverage_cell(row: LeaderboardRow) -> str:
    """`8 datasets, 33 variants` the figures rest on, and the card's where it rests on more or other."""
    if row.figures is None:
        return "-"
    shown = f"{row.figures.datasets} datasets, {row.figures.variants} variants"
    card = row.card
    if card is None or (card.datasets, card.variants) == (row.figures.datasets, row.figures.variants):
        return shown
    return f"{shown} (card {card.datasets} datasets, {card.variants} variants)"


def heat_cell(cell: HeatCell) -> str:
    shown = number(cell.delta, sign=True)
    return f"{shown} (card {number(cell.own, sign=True)})" if cell.differs else shown
