"""The three robustness axes and the transformations on each (paper Sec. 2.1, Table 14).

Kept here, beside the statistics that pool within an axis, so that the card statistics and the
comparison group transformations the same way.
"""

from __future__ import annotations

from hteb_score.errors import ContractError

AXES: dict[str, tuple[str, ...]] = {
    "lexical": ("paraphrasing", "backtranslation", "style_change"),
    "length": ("expansion", "summarisation", "summarised_expansion"),
    "language": ("translation", "cross_translation"),
}

AXIS_LABELS: dict[str, str] = {"lexical": "Lexical/Stylistic", "length": "Length", "language": "Language"}

TRANSFORMATIONS: tuple[str, ...] = tuple(t for members in AXES.values() for t in members)

AXIS_OF: dict[str, str] = {t: axis for axis, members in AXES.items() for t in members}


def axis_of(transformation: str) -> str:
    """The axis a transformation belongs to; an unknown name is a contract error naming the known ones."""
    try:
        return AXIS_OF[transformation]
    except KeyError:
        raise ContractError(f"unknown transformation {transformation!r}; known: {', '.join(TRANSFORMATIONS)}") from None
