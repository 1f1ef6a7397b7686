"""What a card's Sensitivity headline should say of its pairs, worked out here from the figures' own fields (the
test's oracle, apart from the card code's `readings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def pairs_said(figures: Mapping[str, Mapping[str, Any]]) -> str:
    """'hears 3 of 4 pairs (a, b, c), inverted on 1 (d)' for pair name -> figure: blind where the figure's
    interval holds 0.5 (or it has no items), else hearing or inverted by the side of 0.5 its accuracy is on."""
    kinds: dict[str, list[str]] = {"hears": [], "blind": [], "inverted": []}
    for name, figure in figures.items():
        ci = figure.get("ci")
        if not figure["items"] or ci is None or ci[0] <= 0.5 <= ci[1]:
            kinds["blind"].append(name)
        else:
            kinds["hears" if figure["accuracy"] > 0.5 else "inverted"].append(name)
    words = {
        "hears": f"hears {len(kinds['hears'])} of {len(figures)} pair" + ("s" if len(figures) > 1 else ""),
        "blind": f"blind to {len(kinds['blind'])}",
        "inverted": f"inverted on {len(kinds['inverted'])}",
    }
    return ", ".join(
        words[kind] + (f" ({', '.join(kinds[kind])})" if kinds[kind] else "")
        for kind in words
        if kind == "hears" or kinds[kind]
    )
