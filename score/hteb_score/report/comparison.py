"""The result of a comparison, as ranx's `Report`: it renders itself to JSON (comparison.v1) and
Markdown; comparison_files.py adds the HTML page, PNG plots and model-index YAML and saves them together."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hteb_contract.taxonomy import in_total
from hteb_contract.validation import validate
from hteb_score.report.formatting import column_label, confidence_interval, count, number, p_value
from hteb_score.scoring.model_scores import ModelScores
from hteb_score.stats.reliability import SplitHalfResult

SCHEMA_VERSION = "hteb.comparison/1"
UNIT = "points (score x 100); delta = transformed - original"


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
    """One model's Original, axis and HTEB-total scores (means over datasets) and ranks (1 = best)."""

    model: str
    original: float
    axes: dict[str, float]
    hteb: float | None
    rank_original: int
    rank_hteb: int | None

    @property
    def axis_deltas(self) -> dict[str, float]:
        return {a: v - self.original for a, v in self.axes.items()}

    @property
    def delta(self) -> float | None:
        return None if self.hteb is None else self.hteb - self.original

    @property
    def rank_change(self) -> int | None:
        """Positive = moved up under HTEB."""
        return None if self.rank_hteb is None else self.rank_original - self.rank_hteb

    def to_json(self) -> dict[str, Any]:
        return {
            **asdict(self),
            "axis_deltas": self.axis_deltas,
            "delta": self.delta,
            "rank_change": self.rank_change,
        }


@dataclass(frozen=True)
class Stability:
    """Kendall tau per dataset and its mean and sample sd over the datasets where it is defined."""

    mean: float | None
    sd: float | None
    n: int
    per_dataset: dict[str, float | None]


@dataclass(frozen=True)
class Reliability:
    """Split-half reliability per axis, or the reason it was not computed."""

    reason: str | None
    per_axis: dict[str, SplitHalfResult]

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "per_axis": {
                axis: {"median_rho": r.median_rho, "n_splits": r.n_splits, "n_defined": r.n_defined}
                for axis, r in self.per_axis.items()
            },
        }


@dataclass(frozen=True)
class Comparison:
    """Everything `hteb-score compare` found; `effects[family][name]` are the statistics' effect
    dicts, `mean_deltas[model][column]` the heat map's cells."""

    models: list[ModelScores]
    forced: bool
    warnings: list[str]
    datasets: list[str]
    columns: ScoreColumns
    leaderboard: list[LeaderboardRow]
    ranking_stability: dict[str, Stability]
    effects: dict[str, dict[str, dict[str, Any]]]
    reliability: Reliability
    mean_deltas: dict[str, dict[str, float]]

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
            "leaderboard": [r.to_json() for r in self.leaderboard],
            "ranking_stability": {name: asdict(s) for name, s in self.ranking_stability.items()},
            "effects": self.effects,
            "reliability": self.reliability.to_json(),
        }
        validate("comparison", result, what="comparison")
        return result

    def to_markdown(self) -> str:
        """The comparison as a Markdown report a reader can take in without the JSON."""
        out = ["# HTEB model comparison", ""]
        out += [f"> **Warning:** {warning}" for warning in self.warnings]
        if self.warnings:
            out.append("")
        out += [
            f"{count(len(self.models), 'model')}, {count(len(self.datasets), 'dataset')}. "
            "Scores in points; deltas are HTEB minus Original.",
            "",
        ]
        out += self._leaderboard_md() + self._stability_md() + self._effects_md()
        out += self._reliability_md() + self._inputs_md()
        return "\n".join(out) + "\n"

    def _leaderboard_md(self) -> list[str]:
        """Axes in the HTEB total before it, axes beside it (Noise) after it, with a line saying so."""
        paper = [a for a in self.columns.axes if in_total(a)]
        beside = [a for a in self.columns.axes if not in_total(a)]
        header = ["#", "Model", "Original", *(f"{column_label(a)} (Δ)" for a in paper), "HTEB total", "Δ",
                  *(f"{column_label(a)} (Δ)" for a in beside), "Rank Original → HTEB"]
        out = ["## Leaderboard", ""]
        if beside:
            out += [f"{', '.join(map(column_label, beside))} is reported beside the HTEB total, not in it: "
                    "the total is the mean of the paper's axes, comparable with the paper.", ""]
        out += [_row(header), _row(["---"] * len(header))]
        for r in self.leaderboard:
            change = "-" if r.rank_change is None else f"{r.rank_original} → {r.rank_hteb} ({r.rank_change:+d})"
            cells = {a: f"{number(r.axes[a])} ({number(r.axis_deltas[a], sign=True)})" for a in self.columns.axes}
            rank = str(r.rank_hteb or r.rank_original)
            out.append(_row([rank, r.model, number(r.original), *(cells[a] for a in paper), number(r.hteb),
                             number(r.delta, sign=True), *(cells[a] for a in beside), change]))
        return out

    def _stability_md(self) -> list[str]:
        out = [
            "",
            "## Ranking stability (Kendall τ, Original vs HTEB, per dataset)",
            "",
            "Mean ± sample SD of the per-dataset τ between the models' Original and transformed scores "
            "(paper Table 4).",
            "",
            "| Transformation / axis | mean τ | SD | datasets |",
            "|---|---|---|---|",
        ]
        out += [
            f"| {column_label(name)} | {number(s.mean, 3)} | {number(s.sd, 3)} | {s.n} |"
            for name, s in self.ranking_stability.items()
        ]
        return out

    def _effects_md(self) -> list[str]:
        methods = {e["ci_method"] for effects in self.effects.values() for e in effects.values()}
        ci_note = "a seeded percentile bootstrap" if methods == {"bootstrap"} else "a distribution-free"
        out = [
            "",
            "## Transformation effects across models (Hodges-Lehmann, Wilcoxon, Holm)",
            "",
            f"Unit: per dataset, the delta averaged over models. HL shift with {ci_note} 95% CI (not adjusted",
            "for multiple comparisons; a percentage beside a CI is the coverage it reaches where too few datasets",
            "differ for 95%); Wilcoxon signed-rank p, Holm-corrected within each family"
            + ("" if all(map(in_total, self.columns.names())) else " (the paper's and Noise's apart)")
            + "; |Δ̃| = median absolute delta",
            "(pooled over the axis's transformations for axes).",
            "",
            "| Family | Transformation / axis | HL shift | 95% CI | p (Holm) | median abs delta | datasets |",
            "|---|---|---|---|---|---|---|",
        ]
        for family, effects in self.effects.items():
            for name, e in effects.items():
                pooled = e.get("median_abs_delta_pooled")
                abs_delta = pooled if pooled is not None else e["median_abs_delta"]
                ci = confidence_interval(e)
                shift, p_holm = number(e["hl_shift"], sign=True), p_value(e["p_holm"])
                out.append(_row([family, column_label(name), shift, ci, p_holm, number(abs_delta),
                                 str(e["n_datasets"])]))
        return out

    def _reliability_md(self) -> list[str]:
        out = ["", "## Split-half reliability of the per-axis profiles", ""]
        if self.reliability.reason:
            return [*out, f"Not computed: {self.reliability.reason}."]
        out += [
            "Median Spearman ρ between model scores on two task-stratified dataset halves (paper Table 3).",
            "",
            "| Axis | median ρ | splits (defined) |",
            "|---|---|---|",
        ]
        out += [
            f"| {column_label(axis)} | {number(r.median_rho, 2, sign=True)} | {r.n_splits} ({r.n_defined}) |"
            for axis, r in self.reliability.per_axis.items()
        ]
        return out

    def _inputs_md(self) -> list[str]:
        out = ["", "## Inputs", "", "| Model | Source | Dataset revision |", "|---|---|---|"]
        return out + [f"| {m.model} | {m.source} | {m.revision or '-'} |" for m in self.models]


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"
