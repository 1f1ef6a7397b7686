"""The headline of a comparison that has no HTEB total: models scored on an axis beside the total
only (a Noise revision) are ranked on that axis, so the result leads with who ranks first under
Noise, by how much over the next model (the mean gap, and the Hodges-Lehmann shift of their
per-dataset differences with its interval and Wilcoxon p: `scoring.statistics.paired_effect`,
the statistics every card and comparison already uses), who loses least to it, and where the
Original leader lands. comparison.md, report.html and compare's terminal all print `sentence()`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hteb_score.report.formatting import column_label, confidence_interval, count, number, p_value


@dataclass(frozen=True)
class Lead:
    """Models ranked on `axis` (1 = best; `order`: best first, ties by name); `scores`, `deltas`
    (against each model's Original of the axis's datasets) and `originals` (the Original column)
    are the leaderboard's figures; `margin`: the paired effect of the per-dataset axis scores, first minus runner-up
    (None with one model)."""

    axis: str
    order: list[str]
    ranks: dict[str, int]
    scores: dict[str, float]
    deltas: dict[str, float]
    originals: dict[str, float]
    rank_original: dict[str, int]
    margin: dict[str, Any] | None

    @property
    def first(self) -> str:
        return self.order[0]

    @property
    def runner_up(self) -> str | None:
        return self.order[1] if len(self.order) > 1 else None

    @property
    def least_loss(self) -> str:
        """The model whose axis score is closest to its Original (the smallest loss; ties by name)."""
        return min(self.order, key=lambda m: (-self.deltas[m], m))

    @property
    def original_first(self) -> str:
        return min(self.order, key=lambda m: (self.rank_original[m], m))

    def to_json(self) -> dict[str, Any]:
        return {
            "axis": self.axis,
            "first": self.first,
            "runner_up": self.runner_up,
            "least_loss": self.least_loss,
            "original_first": self.original_first,
            "ranks": dict(self.ranks),
            "margin": self.margin,
        }

    def sentence(self, name: Callable[[str], str] = str) -> str:
        """One paragraph of plain text (no markup): the headline; `name` writes a model's name (comparison.md
        escapes it as Markdown)."""
        label, first = column_label(self.axis), name(self.first)
        on_axis = (
            self.scores[self.first] - self.deltas[self.first]
        )  # the Original of the datasets the axis was scored on
        text = (
            f"{first} ranks first under {label}: {number(self.scores[self.first])} "
            f"({number(self.deltas[self.first], sign=True)} from its Original {number(on_axis)})"
        )
        runner = self.runner_up
        if runner is not None and self.margin is not None:
            m = self.margin
            text += (
                f", {number(self.scores[self.first] - self.scores[runner])} points ahead of {name(runner)} "
                f"(per dataset, {first} minus {name(runner)}: HL shift {number(m['hl_shift'], sign=True)}, "
                f"95% CI {confidence_interval(m)}, Wilcoxon p {p_value(m['p_value'])}, "
                f"{count(m['n_datasets'], 'dataset')}){_verdict(m)}"
            )
        text += "."
        least = self.least_loss
        if len(self.order) > 1:
            text += (
                f" Smallest loss to {label}: {name(least)} ({number(self.deltas[least], sign=True)}"
                + ("" if least == self.first else f"; {first}: {number(self.deltas[self.first], sign=True)}")
                + ")."
            )
        leader = self.original_first
        if leader != self.first:
            text += (
                f" {name(leader)}, first on Original ({number(self.originals[leader])}), ranks "
                f"{_ordinal(self.ranks[leader])} under {label}."
            )
        return text


def build_lead(
    axis: str,
    scores: Mapping[str, float],
    deltas: Mapping[str, float],
    originals: Mapping[str, float],
    rank_original: Mapping[str, int],
    ranks: Mapping[str, int],
    per_dataset: Mapping[str, Mapping[str, float]],
    effect: Any,
) -> Lead:
    """The Lead of `axis` from the leaderboard's figures; `per_dataset[model][dataset]` the axis
    scores the margin pairs, `effect(differences)` the paired effect (HL, CI, Wilcoxon)."""
    order = sorted(scores, key=lambda m: (ranks[m], m))
    margin = None
    if len(order) > 1:
        first, runner = per_dataset[order[0]], per_dataset[order[1]]
        differences = [first[d] - runner[d] for d in sorted(first) if d in runner]
        margin = effect(differences) if differences else None
    return Lead(axis, order, dict(ranks), dict(scores), dict(deltas), dict(originals), dict(rank_original), margin)


def _verdict(margin: Mapping[str, Any]) -> str:
    """What the interval says of the lead: ": the interval holds 0, so the lead is not established"
    when it does (or is undefined), else ""."""
    low, high = margin.get("ci_low"), margin.get("ci_high")
    if low is None or high is None or low <= 0 <= high:
        return ": the interval holds 0, so the lead is not established"
    return ""


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def lead_axis(axes_by_model: Sequence[Mapping[str, float]], candidates: Sequence[str]) -> str | None:
    """The first of `candidates` (axes beside the total, in taxonomy order) every model has a figure for."""
    return next((a for a in candidates if axes_by_model and all(a in axes for axes in axes_by_model)), None)
