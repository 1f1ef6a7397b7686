"""The documentation site's leaderboard page (docs/leaderboard.html) and its CSV, from `leaderboard_data`.

One self-contained file, like report.html (report/rendering.py): inline style and script admitted by
their hashes in a Content Security Policy that forbids every fetch, so it works offline and copied
anywhere; its words in templates/leaderboard.html.j2, its script and style beside it. The data
rides in a JSON island (`<`, `>` and `&` written as JSON escapes, so no value can close the element);
the script puts every value from it on the page as text (`textContent`, never HTML), and the page's
own words from the data go through the template's `html` filter. The reader picks an axis, a language and a dataset,
ranks by any of the axis's columns, sorts by any header, and pins two models to see them side by side
with their paired test; the CSV beside the page holds every number it shows. A chance row (a null
model's card) stays below the models whatever the sort, with its scores but no rank, interval or group.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Mapping
from typing import Any

from hteb_contract.common.escape import csv_cell

from hteb_score.report.compare.comparison import CITE_NOTE
from hteb_score.report.formatting import column_label, count, number
from hteb_score.report.rendering import page
from hteb_score.report.compare.html_report import CSS_DPI, png_size
from hteb_score.report.compare.plots import DPI
from hteb_score.report.site.leaderboard_data import FACTS, axis_deltas, csv_rows
from hteb_score.report.site.sensitivity_board import cell, figure_points, sensitivity_figure
from hteb_score.report.compare.pairwise import ALPHA, METHOD

TITLE = "HTEB leaderboard"
CSV_NAME = "leaderboard.csv"

#: What the page inlines (report/templates/): its script and the shared style and its own.
SCRIPTS = ("leaderboard.js",)
STYLES = ("page.css", "leaderboard.css")


def _island(value: Any) -> str:
    """JSON for a `<script type="application/json">` element: nothing in it can end the element."""
    text = json.dumps(value, ensure_ascii=True, allow_nan=False, sort_keys=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def published_tables(published: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The paper's tables as the page prints them: per scope its heading and the rows' cells (report/formatting)."""
    axes = published["axes"]
    return [
        {
            "label": table["label"],
            "headings": [
                "Model",
                "Original",
                *(column_label(a) for a in axes),
                "HTEB",
                "\u0394",
                "Original on this board",
            ],
            "rows": [
                {
                    "average": row["average"],
                    "cells": [
                        row["model"],
                        *(number(row[c]) for c in published["columns"]),
                        number(row["delta"], sign=True),
                        "" if row["board_original"] is None else number(row["board_original"]),
                    ],
                }
                for row in table["rows"]
            ],
        }
        for table in published["scopes"].values()
    ]


def sensitivity_section(data: Mapping[str, Any]) -> dict[str, Any] | None:
    """The page's Sensitivity section (None where no Sensitivity cards were given): its table's headings and
    rows, and the robustness-against-sensitivity figure as a data: URL with its drawn size and its text (None
    where no model of the Sensitivity cards is on the board: the table still says what each one hears)."""
    view = data["sensitivity"]
    if view is None:
        return None
    points = figure_points(view, axis_deltas(data))
    section = {
        "revision": view["revision"],
        "headings": ["Model", *(p["label"] for p in view["pairs"]), "Pairs heard", "On the board"],
        "rows": [
            {
                "chance": m["kind"] == "chance",
                "cells": [
                    m["name"],
                    *(cell(m["pairs"].get(p["pair"])) for p in view["pairs"]),
                    f"{m['heard']} of {m['of_pairs']}",
                    "yes" if m["on_board"] else "no",
                ],
            }
            for m in view["models"]
        ],
        "figure": None,
    }
    if not points:  # no model of these cards is on the board: its table stands, with nothing to plot it against
        return section
    png = sensitivity_figure(view, points)
    width, height = png_size(png)
    return {
        **section,
        "figure": "data:image/png;base64," + base64.b64encode(png).decode("ascii"),
        "width": round(width * CSS_DPI / DPI),
        "height": round(height * CSS_DPI / DPI),
        "alt": "; ".join(
            f"{p['model']} {p['pair']}: accuracy {number(p['accuracy'], 3)}, {data['labels'][p['axis']]} "
            f"delta {number(p['delta'], sign=True)}"
            for p in points
        ),
    }


def render(data: Mapping[str, Any]) -> str:
    """The page (templates/leaderboard.html.j2): the controls, the board, the tie groups, the pinned pair,
    how it is made; the data in a JSON island its script reads."""
    n_models = sum(m["kind"] == "model" for m in data["models"])
    n_chance = len(data["models"]) - n_models
    beside = f" and {count(n_chance, 'chance row')} (unranked)" if n_chance else ""
    sensitivity = sensitivity_section(data)
    return page(
        "leaderboard.html.j2",
        title=TITLE,
        scripts=SCRIPTS,
        styles=STYLES,
        images=sensitivity is not None and sensitivity["figure"] is not None,
        sensitivity=sensitivity,
        counted=count(n_models, "model") + beside,
        n_datasets=len(data["datasets"]),
        languages_from_table=data["languages_from_table"],
        revision=data["revision"],
        csv_name=CSV_NAME,
        method=METHOD,
        cite_note=CITE_NOTE,
        citation=data["citation"],
        provenance=data["provenance"],
        published_source=data["published"]["source"],
        published=published_tables(data["published"]),
        island=_island(
            {
                **{k: v for k, v in data.items() if k not in ("citation", "published", "provenance", "notes")},
                "alpha": ALPHA,
                "facts": FACTS,
            }
        ),
    )


def csv_text(data: Mapping[str, Any]) -> str:
    """The CSV beside the page (every number it shows)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for row in csv_rows(data):
        writer.writerow([csv_cell(c) for c in row])
    return out.getvalue()
