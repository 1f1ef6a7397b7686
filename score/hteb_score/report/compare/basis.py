"""Which scores a comparison ranks models on (`hteb-score compare --basis`), and each model's own figures.

`common` (the default): every model on the datasets x transformations that all of them have, so
the ranks compare like with like; a model's figures there can differ from its card's, and every
output shows both where they do. `own`: every model on all it has, its card's figures; the ranks
then compare different sets, and the outputs say so. Either way each figure is paired with the
Original of exactly its datasets (`hteb_score.scoring.aggregate.paired_level`), as the card pairs it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from hteb_contract.common.registry import Registry
from hteb_score.scoring.aggregate import PairedLevel, axis_columns, paired_level
from hteb_score.scoring.model_scores import HTEB, ModelScores, joined_taxonomy

#: Figures that differ by less than this are the same figure (float noise of a different summation order).
SAME = 1e-9


@dataclass(frozen=True)
class Basis:
    """A named rule for the scores each model is ranked on."""

    name: str
    description: str
    views: Callable[[Sequence[ModelScores], Sequence[str]], list[ModelScores]]

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "description": self.description}


def _cells_all_have(
    models: Sequence[ModelScores], datasets: Sequence[str], column: Callable[[ModelScores], Mapping[str, float]]
) -> list[str]:
    return [d for d in datasets if all(d in column(m) for m in models)]


def _transformation_column(name: str) -> Callable[[ModelScores], Mapping[str, float]]:
    return lambda model: model.transformations.get(name, {})


def _axis_column(name: str) -> Callable[[ModelScores], Mapping[str, float]]:
    return lambda model: model.axes.get(name, {})


def common_views(models: Sequence[ModelScores], datasets: Sequence[str]) -> list[ModelScores]:
    """Each model restricted to the common datasets and, on them, to the transformations every model
    has; axes and totals are recomputed from those (or, for inputs that give only axis or total
    scores, kept on the cells every model has)."""
    taxonomy = joined_taxonomy(models)
    by_transformation = {
        t: _cells_all_have(models, datasets, _transformation_column(t)) for t in taxonomy.transformations
    }
    derive = all(m.transformations for m in models)
    by_axis = {a: _cells_all_have(models, datasets, _axis_column(a)) for a in taxonomy.members}
    on_total = _cells_all_have(models, datasets, lambda m: m.hteb)
    views = []
    for m in models:
        transformations = {t: {d: m.transformations[t][d] for d in on} for t, on in by_transformation.items() if on}
        axes = (
            axis_columns(transformations, m.taxonomy)
            if derive
            else {a: {d: m.axes[a][d] for d in on} for a, on in by_axis.items() if on}
        )
        view = replace(
            m, original={d: m.original[d] for d in datasets}, transformations=transformations, axes=axes, hteb={}
        )
        view.fill_derived()
        if not view.hteb and not any(a in axes for a in m.taxonomy.paper_axes):
            view.hteb.update({d: m.hteb[d] for d in on_total})
        views.append(view)
    return views


def own_views(models: Sequence[ModelScores], datasets: Sequence[str]) -> list[ModelScores]:
    """Each model on all it has (what its card says)."""
    return list(models)


BASES: Registry[Basis] = Registry(
    "comparison basis",
    entries={
        "common": Basis("common", "every model on the datasets x transformations all of them have", common_views),
        "own": Basis(
            "own", "every model on all it has (its card's figures); the ranks compare different sets", own_views
        ),
    },
)


@dataclass(frozen=True)
class Figures:
    """A model's leaderboard figures on one set of scores: Original, axes and HTEB total, each axis
    paired with the Original of its datasets, and what they rest on (`variants`: dataset x
    transformation cells)."""

    original: float
    axes: dict[str, float]
    axis_originals: dict[str, float]
    axis_datasets: dict[str, int]
    hteb: float | None
    datasets: int
    hteb_datasets: int
    variants: int

    @property
    def axis_deltas(self) -> dict[str, float]:
        return {a: v - self.axis_originals[a] for a, v in self.axes.items()}

    @property
    def delta(self) -> float | None:
        return None if self.hteb is None else self.hteb - self.original

    def numbers(self) -> dict[str, float | None]:
        """Every figure shown, by name (for comparing two `Figures`)."""
        return {
            "original": self.original,
            "hteb": self.hteb,
            "delta": self.delta,
            **{f"axis {a}": v for a, v in self.axes.items()},
            **{f"axis delta {a}": v for a, v in self.axis_deltas.items()},
        }

    def same_as(self, other: Figures) -> bool:
        mine, theirs = self.numbers(), other.numbers()
        if mine.keys() != theirs.keys():
            return False
        return all(
            (a is None and b is None) or (a is not None and b is not None and abs(a - b) < SAME)
            for a, b in ((mine[k], theirs[k]) for k in mine)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "original": self.original,
            "axes": self.axes,
            "axis_originals": self.axis_originals,
            "axis_deltas": self.axis_deltas,
            "axis_datasets": self.axis_datasets,
            "hteb": self.hteb,
            "delta": self.delta,
            "datasets": self.datasets,
            "hteb_datasets": self.hteb_datasets,
            "variants": self.variants,
        }


def figures(model: ModelScores) -> Figures:
    """`paired_level` of a model's scores; for an input with totals only (no axes), its HTEB total is
    the mean of those, paired with the Original of the same datasets."""
    level: PairedLevel = paired_level(model.original, model.axes, model.taxonomy)
    hteb, original, on_total = level.hteb, level.original, level.hteb_datasets
    if hteb is None and model.hteb:
        on = [d for d in model.hteb if d in model.original]
        hteb = float(np.mean([model.hteb[d] for d in on]))
        original, on_total = float(np.mean([model.original[d] for d in on])), len(on)
    if original is None:
        raise ValueError(f"{model.model}: no Original score, so no figures")
    variants = sum(len(column) for column in model.transformations.values())
    return Figures(
        original,
        {a: p.score for a, p in level.axes.items()},
        {a: p.original for a, p in level.axes.items()},
        {a: p.datasets for a, p in level.axes.items()},
        hteb,
        level.datasets,
        on_total,
        variants,
    )


def mean_delta(model: ModelScores, name: str) -> tuple[float | None, int]:
    """The mean over the model's datasets of (column `name` - Original), and how many datasets."""
    column = model.column(name) if name != HTEB else model.hteb
    on = [d for d in column if d in model.original]
    return (float(np.mean([column[d] - model.original[d] for d in on])) if on else None), len(on)
