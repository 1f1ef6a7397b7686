"""`ModelScores`: one model's per-dataset scores in points, whatever they were read from (a result
card, a plain scores table, an mteb result folder), with the axis and HTEB scores it lacks derived by
the one aggregation rule (`hteb_score.scoring.aggregate`), so a paper's tables and our own cards are
compared the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hteb_contract.taxonomy import INSTALLED, Taxonomy
from hteb_score.evaluators.outcomes import Outcomes
from hteb_score.scoring.aggregate import axis_columns, hteb_total

HTEB = "hteb"  # the column of HTEB-total scores


@dataclass
class ModelScores:
    """One model's per-dataset scores in points, whatever they were read from."""

    model: str
    source: str
    revision: str | None
    taxonomy: Taxonomy  # the axes its scores were made by: a card's own, else this release's (a table, mteb files)
    original: dict[str, float] = field(default_factory=dict)
    transformations: dict[str, dict[str, float]] = field(default_factory=dict)
    axes: dict[str, dict[str, float]] = field(default_factory=dict)
    hteb: dict[str, float] = field(default_factory=dict)
    task_types: dict[str, str] = field(default_factory=dict)
    drift: dict[str, Any] | None = None
    card: dict[str, Any] | None = None
    protocol: str | None = None  # the evaluation protocol (hteb, mteb); None: not stated
    items: list[dict[str, Any]] | None = None  # the item explorer's rows (items.parquet beside a card)
    #: per (dataset, transformation, seed), its per-item outcomes (outcomes.parquet beside a card)
    outcomes: dict[tuple[str, str, int | None], Outcomes] | None = None

    def column(self, name: str) -> dict[str, float]:
        """Per-dataset scores of a column: `hteb`, an axis or a transformation."""
        if name == HTEB:
            return self.hteb
        return self.axes.get(name) or self.transformations.get(name, {})

    def fill_derived(self) -> None:
        """Axis scores from transformations where an axis is missing, and the HTEB score of each
        dataset that has all three axes but no HTEB score."""
        for axis, derived in axis_columns(self.transformations, self.taxonomy).items():
            self.axes.setdefault(axis, derived)
        for dataset in self.original:
            paper = self.taxonomy.paper_axes
            if dataset not in self.hteb and all(dataset in self.axes.get(a, {}) for a in paper):
                total = hteb_total({a: self.axes[a][dataset] for a in paper}, self.taxonomy)
                if total is not None:  # always: every paper axis is given
                    self.hteb[dataset] = total


def joined_taxonomy(models: Sequence[ModelScores]) -> Taxonomy:
    """The axes of every model compared, together (`Taxonomy.joined`); this release's where none is given.
    Two inputs that put a transformation under two axes are a one-line error: they are two benchmarks."""
    if not models:
        return INSTALLED
    joined = models[0].taxonomy
    for model in models[1:]:
        joined = joined.joined(model.taxonomy, where=f"{models[0].source} and {model.source}")
    return joined
