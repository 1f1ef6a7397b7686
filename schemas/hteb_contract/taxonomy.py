"""The transformations of HTEB and the axes they belong to (paper Sec. 2.1, Table 1), as one value.

Four axes: the paper's three (Lexical/Stylistic, Length, Language), whose mean is the HTEB total
and stays comparable with the paper, and Noise (issue 12: SAGE's rule-based perturbations and two
common noise types), reported beside the total and never in it.

A `Taxonomy` is the axes a revision was made by: a revision carrying the manifest's `specs` block
states its own (`Taxonomy.of_specs`), and a card scored from it carries it (`to_json`), so a later
edit of the installed table never changes what an old revision or card means (issue 43). `INSTALLED`
is this release's table: what the generator may make, and what a revision or card made before the
block is read by. The module's names (`AXES`, `axis_of`, ...) are `INSTALLED`'s views.

>>> axis_of("backtranslation"), AXIS_LABELS["length"], axis_of("numerisation")
('lexical', 'Length', 'noise')
>>> list(PAPER_AXES), in_total("noise"), in_total("keyboard_typos"), in_total("paraphrasing")
(['lexical', 'length', 'language'], False, False, True)
>>> block = {"axes": [{"name": "lexical", "label": "Lexical", "paper": True}],
...          "transformations": [{"name": "paraphrasing", "axis": "lexical"}]}
>>> Taxonomy.of_specs(block).members, Taxonomy.of_specs(block).source
({'lexical': ('paraphrasing',)}, 'revision')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from hteb_contract.common.registry import Registry
from hteb_contract.errors import ContractError
from hteb_contract.specs.transformations import Axis, transformation_table

#: Where a taxonomy was read from: the revision's own rows, or this release's table (a revision or card made
#: before the specs block).
RECORDED, INSTALLED_TABLE = "revision", "installed"


@dataclass(frozen=True)
class Taxonomy:
    """Axes in their order, each with its label, paper flag and transformations in order; `source` says
    whether they are the revision's own (`RECORDED`) or this release's (`INSTALLED_TABLE`). The views below
    are derived once per taxonomy (they are read in sort keys and per aggregated cell)."""

    axes: tuple[Axis, ...]
    source: str = INSTALLED_TABLE

    @cached_property
    def members(self) -> dict[str, tuple[str, ...]]:
        """`{axis: its transformations}` in order."""
        return {axis.name: axis.transformations for axis in self.axes}

    @cached_property
    def scored_members(self) -> dict[str, tuple[str, ...]]:
        """`members` of the axes whose mean task score is a robustness score: all but an axis of minimal pairs
        (own_revision: Sensitivity), whose rules change the meaning or keep it by design, so a mean of both says
        nothing (a drop under a change is the model listening). Its rules are shown one by one; its figure is
        the card's `sensitivity` block."""
        return {axis.name: axis.transformations for axis in self.axes if not axis.own_revision}

    @cached_property
    def labels(self) -> dict[str, str]:
        return {axis.name: axis.label for axis in self.axes}

    @cached_property
    def transformations(self) -> tuple[str, ...]:
        return tuple(t for axis in self.axes for t in axis.transformations)

    @cached_property
    def axis_by_transformation(self) -> dict[str, str]:
        return {t: axis.name for axis in self.axes for t in axis.transformations}

    @cached_property
    def paper_axes(self) -> dict[str, tuple[str, ...]]:
        """The paper's axes, whose mean is the HTEB total."""
        return {axis.name: axis.transformations for axis in self.axes if axis.paper}

    @cached_property
    def paper_transformations(self) -> tuple[str, ...]:
        return tuple(t for members in self.paper_axes.values() for t in members)

    @cached_property
    def _names(self) -> Registry[str]:
        """The transformation names, for a one-line "did you mean" on an unknown one."""
        return Registry("transformation", entries=self.axis_by_transformation)

    def transformations_of(self, axis: str) -> tuple[str, ...]:
        """The transformations of an axis, none where this taxonomy has no such axis."""
        return self.members.get(axis, ())

    def axis_of(self, transformation: str) -> str:
        """The axis a transformation belongs to; an unknown name is a one-line error naming the known ones."""
        return self._names.get(transformation)

    def in_total(self, name: str) -> bool:
        """Whether an axis or transformation counts toward the HTEB total: the paper's do, Noise's do
        not; any other name (the total itself) does."""
        axis = self.axis_by_transformation.get(name, name)
        return axis in self.paper_axes or axis not in self.members

    def order(self, name: str) -> int:
        """Sort key: the axes' order, unknown names last."""
        names = self.transformations
        return names.index(name) if name in names else len(names)

    def joined(self, other: Taxonomy, *, where: str) -> Taxonomy:
        """Both taxonomies' axes and rows together (two cards compared); a transformation under two axes, or
        an axis with two labels or paper flags, is a one-line ContractError: they are two benchmarks."""
        axes = {a.name: a for a in self.axes}
        for axis in other.axes:
            mine = axes.get(axis.name)
            if mine is not None and (mine.label, mine.paper) != (axis.label, axis.paper):
                raise ContractError(
                    f"{where}: axis {axis.name!r} is {mine.label!r} (paper: {mine.paper}) in one "
                    f"and {axis.label!r} (paper: {axis.paper}) in another"
                )
            for name in axis.transformations:
                elsewhere = self.axis_by_transformation.get(name, axis.name)
                if elsewhere != axis.name:
                    raise ContractError(
                        f"{where}: transformation {name!r} is on axis {elsewhere!r} in one and {axis.name!r} in another"
                    )
            rows = (
                (*mine.transformations, *(t for t in axis.transformations if t not in mine.transformations))
                if mine is not None
                else axis.transformations
            )
            axes[axis.name] = Axis(axis.name, axis.label, rows, axis.paper, axis.own_revision)
        order = [a.name for a in INSTALLED.axes]
        ranked = sorted(axes.values(), key=lambda a: order.index(a.name) if a.name in order else len(order))
        source = RECORDED if RECORDED in (self.source, other.source) else INSTALLED_TABLE
        return Taxonomy(tuple(ranked), source)

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.source,
            "axes": [
                {"name": a.name, "label": a.label, "paper": a.paper, "transformations": list(a.transformations)}
                | ({"own_revision": True} if a.own_revision else {})  # stated only where true: older cards unchanged
                for a in self.axes
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Taxonomy:
        return cls(
            tuple(
                Axis(a["name"], a["label"], tuple(a["transformations"]), a["paper"], a.get("own_revision", False))
                for a in data["axes"]
            ),
            data["from"],
        )

    @classmethod
    def of_specs(cls, block: Mapping[str, Any]) -> Taxonomy:
        """A revision's own taxonomy, from its manifest's `specs` block (its axes and transformation rows)."""
        rows: Sequence[Mapping[str, Any]] = block["transformations"]
        return cls(
            tuple(
                Axis(
                    a["name"],
                    a["label"],
                    tuple(r["name"] for r in rows if r["axis"] == a["name"]),
                    a["paper"],
                    a.get("own_revision", False),
                )
                for a in block["axes"]
            ),
            RECORDED,
        )


INSTALLED = Taxonomy(transformation_table().axes)
#: What a revision or card made before the specs block was made by: this release's axes but those whose rows make
#: revisions of their own (Sensitivity), which no revision of that time could hold.
BEFORE_SPECS = Taxonomy(tuple(a for a in transformation_table().axes if not a.own_revision))

AXES: dict[str, tuple[str, ...]] = INSTALLED.members
AXIS_LABELS: dict[str, str] = INSTALLED.labels
TRANSFORMATIONS: tuple[str, ...] = INSTALLED.transformations
AXIS_OF: dict[str, str] = INSTALLED.axis_by_transformation
PAPER_AXES: dict[str, tuple[str, ...]] = INSTALLED.paper_axes
PAPER_TRANSFORMATIONS: tuple[str, ...] = INSTALLED.paper_transformations
axis_of = INSTALLED.axis_of
in_total = INSTALLED.in_total
transformation_order = INSTALLED.order


def recorded_in(data: Mapping[str, Any]) -> Taxonomy:
    """The taxonomy a card or a part's identity records (`taxonomy`), or this release's where it records none
    (made from a revision before the specs block)."""
    block = data.get("taxonomy")
    return BEFORE_SPECS if block is None else Taxonomy.from_json(block)


def minimal_pairs(manifest: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
    """Each minimal-pair rule of a revision -> (its pair's meaning-changing rule, its meaning-keeping twin), as the
    revision's own `specs` rows state them (the Sensitivity axis); none for a revision made before the block."""
    rows = (manifest.get("specs") or {}).get("transformations", ())
    pairs = {}
    for row in rows:
        if row.get("meaning") == "changed" and row.get("twin"):
            pairs[row["name"]] = pairs[row["twin"]] = (row["name"], row["twin"])
    return pairs


def of_manifest(manifest: Mapping[str, Any]) -> Taxonomy:
    """The taxonomy a revision was made by: its `specs` block's, or this release's for a revision made before it."""
    specs = manifest.get("specs")
    return BEFORE_SPECS if specs is None else Taxonomy.of_specs(specs)
