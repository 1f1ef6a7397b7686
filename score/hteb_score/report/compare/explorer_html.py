"""report.html's item explorer: per model and transformation, the items whose embedding moved most
(lowest cosine) and those whose task outcome flipped, original and transformed texts side by side,
with the judge's scores and the error flag, from the items.parquet beside each card
(scoring/item_measures.py). A search box filters the rows offline (templates/explorer.js, admitted by
the page's Content Security Policy with the sort script); every text is escaped (`html_text`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from hteb_contract.common.escape import html_text
from hteb_score.scoring.model_scores import ModelScores

#: The page's bound: per model and transformation, this many moved-most items and this many flipped ones.
HTML_TOP_N = 10

HEADER = (
    ("Model", "text"),
    ("Transformation", "text"),
    ("Dataset", "text"),
    ("Seed", "number"),
    ("Cosine", "number"),
    ("Shown because", "text"),
    ("Judge quality", "number"),
    ("Fluency", "number"),
    ("Errors kept", "text"),
    ("Original text", "text"),
    ("Transformed text", "text"),
)


def chosen(items: Sequence[Mapping[str, Any]], top_n: int = HTML_TOP_N) -> list[Mapping[str, Any]]:
    """Per transformation, the `top_n` lowest-cosine items and the `top_n` lowest-cosine flipped ones."""
    by_t: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in items:
        by_t[row["transformation"]].append(row)
    kept: list[Mapping[str, Any]] = []
    for transformation in sorted(by_t):
        ranked = sorted(by_t[transformation], key=lambda r: r["cosine"])
        flipped = [r for r in ranked if r.get("outcome_flipped")][:top_n]
        picked = {id(r) for r in ranked[:top_n]} | {id(r) for r in flipped}
        kept.extend(r for r in ranked if id(r) in picked)
    return kept


def _why(row: Mapping[str, Any]) -> str:
    reasons = []
    if row.get("top10_changed"):
        reasons.append("top-10 changed")
    if row.get("order_flipped"):
        reasons.append("pair order flipped")
    return ", ".join(reasons) or "moved most"


def _td(shown: str, value: Any = None, css: str = "") -> str:
    attrs = "" if value is None else f' data-value="{html_text(str(value))}"'
    attrs += f' class="{css}"' if css else ""
    return f"<td{attrs}>{html_text(shown)}</td>"


def _num(value: float | None, digits: int) -> str:
    return _td("-") if value is None else _td(f"{value:.{digits}f}", repr(float(value)))


def _row(model: str, row: Mapping[str, Any]) -> str:
    cells = [
        _td(model, model, "text"),
        _td(row["transformation"], row["transformation"], "text"),
        _td(row["dataset"], row["dataset"], "text"),
        _td(str(row["seed"]), row["seed"]),
        _num(row["cosine"], 3),
        _td(_why(row), _why(row), "text"),
        _num(row.get("quality"), 2),
        _num(row.get("fluency"), 2),
        _td("yes" if row.get("with_errors") else "no", None, "text"),
        _td(row["original_text"], None, "item"),
        _td(row["transformed_text"], None, "item"),
    ]
    return f"<tr>{''.join(cells)}</tr>"


def section(models: Sequence[ModelScores]) -> list[str]:
    """The explorer's heading, search box and table; nothing when no input has an items.parquet."""
    rows = [_row(m.model, r) for m in models if m.items for r in chosen(m.items)]
    if not rows:
        return []
    head = "".join(
        f'<th data-type="{kind}"><button type="button">{html_text(label)}</button></th>' for label, kind in HEADER
    )
    return [
        "<h2>Item explorer</h2>",
        f'<p class="note">Per model and transformation, the {HTML_TOP_N} items whose embedding moved most (lowest '
        f"cosine between the original and the transformed text) and the {HTML_TOP_N} lowest-cosine items whose "
        "task outcome flipped (a retrieval query's top-10 documents changed; a pair left its half of the "
        "predicted similarity order). All of each run's explorer items are in its items.parquet.</p>",
        '<input type="search" id="explorer-search" placeholder="Filter: words in any cell" '
        'aria-label="Filter the item explorer">',
        f'<div class="scroll"><table id="explorer" class="sortable">\n<thead><tr>{head}</tr></thead>\n'
        "<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table></div>",
    ]
