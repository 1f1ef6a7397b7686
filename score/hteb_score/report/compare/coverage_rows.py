"""What the compared figures rest on: from each card's `coverage` (report/card/card.py), the variants worth
stating — every Noise variant and any other variant that left subsets out or is mostly unchanged —
with the subsets its figure rests on ("5 of 12"), its share of texts changed, what was left out and
the models whose cards say so. Read by comparison.md/json, the report page and `hteb-score tables`.

>>> card = {"coverage": [{"dataset": "D", "transformation": "numerisation", "seed": 1, "subsets_scored": 5,
...         "subsets_total": 12, "changed_share": 0.42, "flagged_unchanged": True,
...         "left_out": [{"subset": "amh", "reason": "not_applicable", "detail": "no digits"}]}]}
>>> rows = coverage_rows([("m1", card), ("m2", card)])
>>> rows[0].subsets, rows[0].models, rows[0].left_out
('5 of 12', ('m1', 'm2'), ('amh',))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from hteb_contract.common.escape import md_text
from hteb_contract.taxonomy import recorded_in
from hteb_score.report.formatting import md_row


@dataclass(frozen=True)
class CoverageRow:
    """One variant's coverage, as the cards of `models` state it."""

    dataset: str
    transformation: str
    seed: int
    subsets_scored: int
    subsets_total: int
    changed_share: float
    flagged_unchanged: bool
    left_out: tuple[str, ...]
    models: tuple[str, ...]
    reasons: tuple[str, ...] = ()  # why each of `left_out` was (not_applicable, mostly_unchanged), in its order

    @property
    def subsets(self) -> str:
        return f"{self.subsets_scored} of {self.subsets_total}"

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "transformation": self.transformation,
            "seed": self.seed,
            "subsets_scored": self.subsets_scored,
            "subsets_total": self.subsets_total,
            "changed_share": self.changed_share,
            "flagged_unchanged": self.flagged_unchanged,
            "left_out": list(self.left_out),
            "models": list(self.models),
        }

    def cells(self) -> list[str]:
        """The Markdown row: dataset, variant, subsets, texts changed, left out, models."""
        changed = f"{self.changed_share:.0%}" + (" **mostly unchanged**" if self.flagged_unchanged else "")
        return [
            md_text(self.dataset),
            md_text(f"{self.transformation} seed {self.seed}"),
            self.subsets,
            changed,
            md_text(", ".join(self.left_out) or "-"),
            md_text(", ".join(self.models)),
        ]


def coverage_rows(cards: Iterable[tuple[str, Mapping[str, Any] | None]], every: bool = False) -> list[CoverageRow]:
    """The rows worth stating from (model, card) pairs (a card None or without `coverage` gives none), or
    with `every` each variant's; one row per variant and coverage, naming the models whose cards give it."""
    found: dict[CoverageRow, list[str]] = {}
    for model, card in cards:
        rules = recorded_in(card or {}).transformations_of("noise")
        for entry in (card or {}).get("coverage", ()):
            noise = entry["transformation"] in rules
            if not (every or noise or entry["left_out"] or entry["flagged_unchanged"]):
                continue
            row = CoverageRow(
                entry["dataset"],
                entry["transformation"],
                entry["seed"],
                entry["subsets_scored"],
                entry["subsets_total"],
                entry["changed_share"],
                entry["flagged_unchanged"],
                tuple(e["subset"] for e in entry["left_out"]),
                (),
                tuple(e["reason"] for e in entry["left_out"]),
            )
            found.setdefault(row, []).append(model)
    return [replace(row, models=tuple(models)) for row, models in found.items()]


def recorded(cards: Iterable[Mapping[str, Any] | None]) -> bool:
    """Whether any card records its coverage."""
    return any("coverage" in (card or {}) for card in cards)


HEADER = ["dataset", "variant", "subsets scored", "texts changed", "left out", "models"]


def markdown(rows: Sequence[CoverageRow], stated: bool) -> list[str]:
    """The section of comparison.md (`stated`: some card records coverage; else none, as before it was)."""
    if not stated:
        return []
    out = ["", "## What each figure rests on", ""]
    out += [
        "Every Noise variant, and any other variant that left subsets out or whose texts are mostly unchanged "
        "(an unchanged text scores as the Original): the subsets its dataset figure averages.",
        "",
    ]
    if not rows:
        return out + ["No such variant: every figure rests on all its subsets."]
    return out + [md_row(HEADER), "|---" * len(HEADER) + "|", *(md_row(row.cells()) for row in rows)]
