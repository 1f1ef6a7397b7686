"""The leaderboard's Sensitivity (issue 45): each model's minimal-pair figures from its card on a Sensitivity
revision, beside the board's robustness, never folded into a total.

Robustness asks whether a score holds when meaning is kept; a model deaf to negation or numbers passes it best.
So the page shows, per model scored on a Sensitivity revision, each pair's accuracy with its exact interval and
what it reads (report/site/sensitivity_tables.py reads the cards the same way), a board column counting the pairs
the model hears, and one figure per robustness axis of the board: each pair's accuracy (x) against the model's
delta on that axis over all the board's datasets (y), so "robust because deaf" sits in the left half near zero.
The pairs are not averaged: a pair of 59 items would weigh as much as one of 5,015 (`overall` stays in the card).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hteb_contract.common.escape import plot_label
from hteb_contract.errors import HtebError
from hteb_score.report.compare.plots import new_figure, png_bytes
from hteb_score.report.formatting import column_label, number, share_interval
from hteb_score.report.site.sensitivity_tables import sensitivity_cards
from hteb_score.scoring.sensitivity import reading, readings

#: A model's colour in the figure, in the table's order (then grey for chance rows).
COLOURS = ("#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d", "#1f78b4")


def sensitivity_view(folder: Path, board_models: Sequence[str]) -> dict[str, Any]:
    """What the page shows of the Sensitivity cards in `folder`: the revision, the pairs, and per model (real
    models by name, then chance rows) each pair's figure and reading, and whether the board ranks it too."""
    rows = sensitivity_cards(folder)
    revisions = sorted({r.revision for r in rows})
    if len(revisions) > 1:
        raise HtebError(
            f"{folder}: Sensitivity cards of {len(revisions)} revisions ({', '.join(revisions)}): one per page"
        )
    twice = sorted({r.model for r in rows if [q.model for q in rows].count(r.model) > 1})
    if twice:
        raise HtebError(f"{folder}: two Sensitivity cards of model {twice[0]!r}: one per model")
    pairs = list(dict.fromkeys(p["pair"] for r in rows for p in r.block["pairs"]))
    models = []
    for row in rows:
        figures = {
            p["pair"]: {
                "accuracy": p["accuracy"],
                "ci": p["ci"],
                "items": p["items"],
                "detectable": p["detectable"],
                "reading": reading(p),
            }
            for p in row.block["pairs"]
        }
        models.append(
            {
                "model": row.model,
                "name": row.plain,  # the page's template and the plot escape it for their formats
                "kind": "chance" if row.chance else "model",
                "on_board": row.model in board_models,
                "pairs": figures,
                "heard": len(readings({p["pair"]: p for p in row.block["pairs"]})["hears"]),
                "of_pairs": len(figures),
            }
        )
    return {
        "revision": revisions[0],
        "pairs": [{"pair": p, "label": column_label(p)} for p in pairs],
        "models": models,
    }


def cell(figure: Mapping[str, Any] | None) -> str:
    """A pair's figure as the page's table prints it: accuracy [low, high] and its reading."""
    if figure is None or figure["accuracy"] is None:
        return "-"
    interval = "" if figure["ci"] is None else f" {share_interval(figure['ci'])}"
    return f"{number(figure['accuracy'], 3)}{interval} {figure['reading'] or ''}".strip()


def figure_points(view: Mapping[str, Any], deltas: Mapping[str, Mapping[str, float | None]]) -> list[dict[str, Any]]:
    """The figure's points: per robustness axis of the board (`deltas`: axis -> model -> delta over all its
    datasets) and pair, each model with both a figure and a delta. A model the board does not hold has no point."""
    points = []
    for axis, by_model in deltas.items():
        for pair in view["pairs"]:
            for model in view["models"]:
                figure = model["pairs"].get(pair["pair"])
                delta = by_model.get(model["model"])
                if figure is None or figure["accuracy"] is None or delta is None:
                    continue
                points.append(
                    {
                        "axis": axis,
                        "pair": pair["pair"],
                        "model": model["model"],
                        "accuracy": figure["accuracy"],
                        "ci": figure["ci"],
                        "delta": delta,
                    }
                )
    return points


def sensitivity_figure(view: Mapping[str, Any], points: Sequence[Mapping[str, Any]]) -> bytes:
    """Robustness against sensitivity: one panel per (axis, pair), x the pair's accuracy with its interval (0.5,
    dashed: blind), y the axis delta in points; a model keeps its colour in every panel."""
    if not points:
        raise HtebError("the Sensitivity cards share no model with the board: nothing to plot against robustness")
    axes = list(dict.fromkeys(p["axis"] for p in points))
    pairs = [p for p in view["pairs"] if any(q["pair"] == p["pair"] for q in points)]
    names = {m["model"]: m["name"] for m in view["models"]}
    real = [m["model"] for m in view["models"] if m["kind"] == "model"]
    colour = {model: COLOURS[i % len(COLOURS)] for i, model in enumerate(real)}
    fig = new_figure(2.9 * len(pairs) + 0.6, 2.8 * len(axes) + 0.9)
    grid = fig.subplots(len(axes), len(pairs), squeeze=False, sharey="row")
    for r, axis in enumerate(axes):
        for c, pair in enumerate(pairs):
            ax = grid[r][c]
            ax.axvline(0.5, color="#888888", linestyle="--", linewidth=1)
            ax.axhline(0.0, color="#cccccc", linewidth=1)
            for point in (p for p in points if (p["axis"], p["pair"]) == (axis, pair["pair"])):
                tint = colour.get(point["model"], "#999999")
                low, high = point["ci"] or (point["accuracy"], point["accuracy"])
                ax.errorbar(
                    point["accuracy"],
                    point["delta"],
                    xerr=[[point["accuracy"] - low], [high - point["accuracy"]]],
                    fmt="o",
                    color=tint,
                    markersize=6,
                    capsize=3,
                    label=plot_label(names[point["model"]]),
                )
            ax.set_xlim(0, 1)
            ax.set_title(plot_label(pair["label"]), fontsize=10)
            ax.set_xlabel("accuracy (0.5: blind)", fontsize=10)
            if c == 0:
                ax.set_ylabel(f"{plot_label(column_label(axis))} Δ (points)", fontsize=10)
    handles: dict[str, Any] = {}
    for ax in grid.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=min(4, len(handles)), fontsize=10)
    fig.suptitle(f"Robustness against sensitivity ({plot_label(view['revision'])}; 95% exact intervals)")
    fig.tight_layout(rect=(0, 0.08 + 0.04 * ((len(handles) - 1) // 4), 1, 1))
    return png_bytes(fig)
