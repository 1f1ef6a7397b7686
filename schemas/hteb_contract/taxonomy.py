"""The transformations of HTEB and the axes they belong to (paper Sec. 2.1, Table 1), defined once.

Four axes: the paper's three (Lexical/Stylistic, Length, Language), whose mean is the HTEB total
and stays comparable with the paper, and Noise (issue 12: SAGE's rule-based perturbations and two
common noise types), reported beside the total and never in it. `AXES`/`TRANSFORMATIONS` are all
of them (what may be scored and compared); `PAPER_AXES`/`PAPER_TRANSFORMATIONS` the paper's
(what the HTEB total averages, what the LLM generator makes).

The facts are rows of the transformation table (hteb_contract.specs.transformations: axes, their
labels and paper flag, the rows in the paper's order); this module names the views of it that
both programs read. The generator reads the names to know what it may make, the scorer to
aggregate and test by axis, the card and comparison code to label columns.

>>> axis_of("backtranslation"), AXIS_LABELS["length"], axis_of("numerisation")
('lexical', 'Length', 'noise')
>>> list(PAPER_AXES), in_total("noise"), in_total("keyboard_typos"), in_total("paraphrasing")
(['lexical', 'length', 'language'], False, False, True)
"""

from __future__ import annotations

from hteb_contract.common.registry import Registry
from hteb_contract.specs.transformations import Axis, transformation_table

AXIS_TABLE: tuple[Axis, ...] = transformation_table().axes

AXES: dict[str, tuple[str, ...]] = {axis.name: axis.transformations for axis in AXIS_TABLE}
AXIS_LABELS: dict[str, str] = {axis.name: axis.label for axis in AXIS_TABLE}
TRANSFORMATIONS: tuple[str, ...] = tuple(t for axis in AXIS_TABLE for t in axis.transformations)
AXIS_OF: dict[str, str] = {t: axis.name for axis in AXIS_TABLE for t in axis.transformations}
PAPER_AXES: dict[str, tuple[str, ...]] = {axis.name: axis.transformations for axis in AXIS_TABLE if axis.paper}
PAPER_TRANSFORMATIONS: tuple[str, ...] = tuple(t for members in PAPER_AXES.values() for t in members)

#: The transformation names, for a one-line "did you mean" on a user's typo.
TRANSFORMATION_NAMES: Registry[str] = Registry("transformation", entries=AXIS_OF)


def axis_of(transformation: str) -> str:
    """The axis a transformation belongs to; an unknown name is a one-line error naming the known ones."""
    return TRANSFORMATION_NAMES.get(transformation)


def in_total(name: str) -> bool:
    """Whether an axis or transformation counts toward the HTEB total: the paper's do, Noise's do
    not; any other name (the total itself) does."""
    axis = AXIS_OF.get(name, name)
    return axis in PAPER_AXES or axis not in AXES


def transformation_order(name: str) -> int:
    """Sort key: the paper's order, then Noise's, unknown names last."""
    return TRANSFORMATIONS.index(name) if name in AXIS_OF else len(TRANSFORMATIONS)
