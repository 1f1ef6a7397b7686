"""The transformations of HTEB and the axes they belong to (paper Sec. 2.1, Table 1), defined once.

The generator reads the names to know what it may make, the scorer to aggregate and test by
axis, the card and comparison code to label columns. How a transformation is done (its prompts
and steps) is the generator's business (hteb_generate.transformations); which axis it counts
for is the contract's.

>>> axis_of("backtranslation"), AXIS_LABELS["length"]
('lexical', 'Length')
"""

from __future__ import annotations

from dataclasses import dataclass

from hteb_contract.registry import Registry


@dataclass(frozen=True)
class Axis:
    """A robustness axis: its transformations, in the paper's order, and its printed label."""

    name: str
    label: str
    transformations: tuple[str, ...]


AXIS_TABLE: tuple[Axis, ...] = (
    Axis("lexical", "Lexical/Stylistic", ("paraphrasing", "backtranslation", "style_change")),
    Axis("length", "Length", ("expansion", "summarisation", "summarised_expansion")),
    Axis("language", "Language", ("translation", "cross_translation")),
)

AXES: dict[str, tuple[str, ...]] = {axis.name: axis.transformations for axis in AXIS_TABLE}
AXIS_LABELS: dict[str, str] = {axis.name: axis.label for axis in AXIS_TABLE}
TRANSFORMATIONS: tuple[str, ...] = tuple(t for axis in AXIS_TABLE for t in axis.transformations)
AXIS_OF: dict[str, str] = {t: axis.name for axis in AXIS_TABLE for t in axis.transformations}

#: The transformation names, for a one-line "did you mean" on a user's typo.
TRANSFORMATION_NAMES: Registry[str] = Registry("transformation", entries=AXIS_OF)


def axis_of(transformation: str) -> str:
    """The axis a transformation belongs to; an unknown name is a one-line error naming the known ones."""
    return TRANSFORMATION_NAMES.get(transformation)


def transformation_order(name: str) -> int:
    """Sort key: the paper's order, unknown names last."""
    return TRANSFORMATIONS.index(name) if name in AXIS_OF else len(TRANSFORMATIONS)
