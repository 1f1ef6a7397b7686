"""The HTEB paper's published totals beside the leaderboard: its Tables 14 (English) and 15 (multilingual),
typed in once (`paper_totals.csv`, beside this module), so a reader sees the HTEB total of the paper's
models today, on the authors' revision made with Gemma-3-27B, while the revisions scored here hold the
Noise axis only. Where a paper model is one of the board's (by Hub id), the row also carries that model's
Original on the board: on other datasets (the paper's English or multilingual set against the board's
revision), so the page says the two are not one comparison.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hteb_contract.common import csv_input
from hteb_contract.errors import HtebError

TABLE = Path(__file__).with_name("paper_totals.csv")
AVERAGE = "Average"
#: The paper's three axes, as its tables order them, and the columns of a row.
PAPER_AXES = ("lexical", "length", "language")
SCORES = ("original", *PAPER_AXES, "hteb_total")
#: Each scope and the table of the paper it comes from.
SCOPES = {"english": "English, Table 14", "multilingual": "Multilingual, Table 15"}
SOURCE = (
    "Published by the HTEB paper (arXiv 2605.28190) on the authors' revision, made with Gemma-3-27B-it "
    "(int4 AWQ), 3 runs; HTEB is the mean of its three axes"
)


@dataclass(frozen=True)
class PublishedRow:
    """One row of the paper's table: a model (or the paper's Average) in a scope, its scores in points."""

    scope: str
    model: str
    hub_id: str | None
    scores: Mapping[str, float]


def published_rows(path: Path = TABLE) -> list[PublishedRow]:
    """The rows of the typed-in tables, in the paper's order (each scope's Average last)."""
    rows = []
    for raw in csv_input.read(path, HtebError):
        if raw["scope"] not in SCOPES:
            raise HtebError(f"{path}: unknown scope {raw['scope']!r} (known: {', '.join(SCOPES)})")
        rows.append(PublishedRow(raw["scope"], raw["model"], raw["hub_id"] or None, {c: float(raw[c]) for c in SCORES}))
    return rows


def published_view(board_original: Mapping[str, float], rows: list[PublishedRow] | None = None) -> dict[str, Any]:
    """The page's view of the published tables: per scope its rows (scores, HTEB minus Original) and, for a
    paper model on the board (`board_original`: Hub id -> its Original mean there), that Original."""
    rows = published_rows() if rows is None else rows
    scopes = {}
    for scope, label in SCOPES.items():
        scopes[scope] = {
            "label": label,
            "rows": [
                {
                    "model": r.model,
                    "hub_id": r.hub_id,
                    "average": r.model == AVERAGE,
                    **r.scores,
                    "delta": r.scores["hteb_total"] - r.scores["original"],
                    "board_original": board_original.get(r.hub_id) if r.hub_id else None,
                }
                for r in rows
                if r.scope == scope
            ],
        }
    return {"source": SOURCE, "axes": list(PAPER_AXES), "columns": list(SCORES), "scopes": scopes}
