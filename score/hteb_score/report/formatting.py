"""How numbers are printed in result cards, comparison.md and report.html: one place, so the
card and the comparison can never drift apart.

>>> number(3.14159), number(-0.5, sign=True), number(None), number(0.12345, 3)
('3.14', '-0.50', '-', '0.123')
>>> p_value(0.0004), p_value(0.0123), p_value(None)
('<0.001', '0.012', '-')
>>> count(1, "model"), count(3, "dataset")
('1 model', '3 datasets')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hteb_contract.specs.transformations import transformation_spec
from hteb_contract.taxonomy import AXIS_LABELS
from hteb_score.scoring.model_scores import HTEB
from hteb_score.stats.hodges_lehmann import coverage_note


def number(value: float | None, digits: int = 2, *, sign: bool = False) -> str:
    """A score or delta in points with `digits` decimals (with its sign when `sign`); "-" for none. A value that
    rounds to zero is 0.00, unsigned: neither a loss nor a gain (never "-0.00").

    >>> number(-0.001, sign=True), number(0.004), number(-1.5, sign=True), number(2.0, sign=True)
    ('0.00', '0.00', '-1.50', '+2.00')
    """
    if value is None:
        return "-"
    shown = f"{value:+.{digits}f}"
    if float(shown) == 0:
        return f"{0:.{digits}f}"
    return shown if sign else shown.removeprefix("+")


def p_value(value: float | None) -> str:
    """A p-value with three decimals, and below 0.001 as such rather than a rounded zero; "-" for none."""
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def confidence_interval(effect: Mapping[str, Any]) -> str:
    """An effect's CI in signed points, "[-1.20, +0.35]", with the note on its coverage when it is not 95%."""
    low, high = number(effect.get("ci_low"), sign=True), number(effect.get("ci_high"), sign=True)
    return f"[{low}, {high}]{coverage_note(effect.get('ci_confidence'))}"


def share_interval(ci: Sequence[float] | None, digits: int = 3) -> str:
    """A share's interval as every page prints it, "[0.412, 0.588]"; "-" for none (a figure of ties alone).

    >>> share_interval([0.4123, 0.5877]), share_interval(None)
    ('[0.412, 0.588]', '-')
    """
    return "-" if ci is None else f"[{number(ci[0], digits)}, {number(ci[1], digits)}]"


def count(n: int, noun: str) -> str:
    """ "1 model", "3 models"."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def column_label(name: str) -> str:
    """How a score column (`hteb`, an axis, a transformation) is printed."""
    return "HTEB total" if name == HTEB else AXIS_LABELS.get(name, name.replace("_", " ").capitalize())


def heading(transformation: str) -> str:
    """How a narrow table heading names a transformation: its row's `short`, else its column label (a
    new rule row needs no code to be named)."""
    return transformation_spec(transformation).short or column_label(transformation)


def md_row(cells: Sequence[str]) -> str:
    """One Markdown table row of cells already written for Markdown (escaped where they came from a user)."""
    return "| " + " | ".join(cells) + " |"
