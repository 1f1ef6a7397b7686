"""PNG figures for people who would rather look than read (paper Figs. 3, 4 and 6).

Each function draws one `matplotlib.figure.Figure` on its own Agg canvas (no pyplot, no global
backend state, no display) and `png_bytes` renders it. Every figure has a title that says what is
plotted, labelled axes with units, and a legend, so it can be read without the paper at hand.
Every name from the inputs goes through `plot_label`: a `$` in it is a dollar sign, never mathtext.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from io import BytesIO
from typing import TYPE_CHECKING, Any, TypeGuard

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure

from hteb_contract.common.escape import plot_label
from hteb_contract.taxonomy import INSTALLED, Taxonomy
from hteb_score.report.formatting import column_label, number

if TYPE_CHECKING:
    from hteb_score.report.compare.comparison import LeaderboardRow

#: An axis's colour in every figure (an axis this release does not know: grey).
AXIS_COLOURS = dict(zip(INSTALLED.members, ("#1b9e77", "#d95f02", "#7570b3", "#66a61e", "#e7298a")))
DPI = 150
#: The smallest text a figure carries, in points at its drawn size (report.html shows it at that size).
MIN_FONT_PT = 10


def new_figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas (no pyplot, no global backend state)."""
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def png_bytes(fig: Figure) -> bytes:
    """The figure as PNG bytes, cropped to what is drawn."""
    buffer = BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, bbox_inches="tight")
    return buffer.getvalue()


def _defined(value: float | None) -> TypeGuard[float]:
    """A point that can be drawn: undefined scores (None, NaN, inf) are skipped, never plotted."""
    return value is not None and math.isfinite(value)


def _row_values(row: LeaderboardRow) -> list[float]:
    return [v for v in (row.original, *row.axes.values(), row.hteb) if _defined(v)]


def axis_dumbbell(
    leaderboard: Sequence[LeaderboardRow], axes: Sequence[str], taxonomy: Taxonomy, title: str = ""
) -> Figure:
    """Fig. 4: one row per model; a bar from the Original score to the lowest axis score, with the
    Original, each axis (labelled and placed in or beside the total as `taxonomy` says) and the HTEB
    total marked on it. Models in leaderboard order, best on top; `title` adds a line (the basis)."""
    rows = list(reversed(leaderboard))
    fig = new_figure(9, 1.2 + 0.45 * len(rows))
    ax = fig.subplots()
    y = np.arange(len(rows))
    for i, r in enumerate(rows):
        values = _row_values(r)
        if values:
            ax.plot([min(values), max(values)], [i, i], color="#bbbbbb", linewidth=3, zorder=1)
    marked = [(i, r.original) for i, r in enumerate(rows) if _defined(r.original)]
    ax.scatter([v for _, v in marked], [i for i, _ in marked], s=70, color="black", label="Original", zorder=3)
    for axis in axes:
        marked = [(i, value) for i, r in enumerate(rows) if _defined(value := r.axes.get(axis))]
        ax.scatter(
            [v for _, v in marked],
            [i for i, _ in marked],
            s=55,
            color=AXIS_COLOURS.get(axis, "#999999"),
            label=(
                f"HTEB {taxonomy.labels[axis]} axis"
                if taxonomy.in_total(axis)
                else f"{taxonomy.labels[axis]} axis (not in total)"
            ),
            zorder=3,
        )
    totals = [(i, r.hteb) for i, r in enumerate(rows) if _defined(r.hteb)]
    if totals:
        ax.scatter(
            [t for _, t in totals],
            [i for i, _ in totals],
            s=130,
            marker="*",
            color="#e7298a",
            edgecolor="black",
            linewidth=0.5,
            label="HTEB total (mean of the paper's axes)" if axes else "HTEB total",
            zorder=4,
        )
    for i, r in enumerate(rows):
        if _defined(r.delta) and _row_values(r):
            ax.annotate(
                f"{r.delta:+.1f}",
                (min(_row_values(r)), i),
                xytext=(-8, 0),
                textcoords="offset points",
                ha="right",
                va="center",
                fontsize=MIN_FONT_PT,
                color="#444444",
            )
    ax.set_yticks(y, [plot_label(r.model) for r in rows])
    ax.set_xlabel("score (points, mean over datasets)")
    heading = (  # what is drawn: the HTEB total where one is defined, else the axes scored (a Noise-only revision)
        "Original vs HTEB scores per model (number: HTEB total − Original)"
        if totals
        else f"Original vs {' and '.join(taxonomy.labels[a] for a in axes) or 'no axis'} scores per model"
    )
    ax.set_title(heading + (f"\n{title}" if title else ""), pad=48)
    ax.grid(axis="x", alpha=0.3)
    everything = [v for r in rows for v in _row_values(r)] or [0.0, 100.0]
    low, high = min(everything), max(everything)
    ax.set_xlim(low - 0.12 * (high - low + 1), high + 0.05 * (high - low + 1))
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=3, frameon=False, fontsize=MIN_FONT_PT)
    return fig


def delta_heatmap(
    models: Sequence[str], names: Sequence[str], deltas: Sequence[Sequence[float | None]], title: str = ""
) -> Figure:
    """Fig. 6: model x column (transformations, else axes, else the HTEB total); `deltas[i][j]` is
    the mean over datasets of (transformed − Original) of `models[i]` in column `names[j]`; red = drop.
    An undefined or missing cell (None, NaN) is left blank and marked n/a; `title` adds a line (the basis)."""
    order = list(models)
    grid = np.ma.masked_invalid(np.array([[np.nan if v is None else v for v in row] for row in deltas], dtype=float))
    limit = max(float(np.abs(grid).max()) if grid.count() else 0.0, 0.5)
    fig = new_figure(1.6 + 1.05 * len(names), 1.4 + 0.42 * len(order))
    ax = fig.subplots()
    image = ax.imshow(grid, cmap="RdBu", norm=TwoSlopeNorm(vcenter=0.0, vmin=-limit, vmax=limit), aspect="auto")
    for i in range(len(order)):
        for j in range(len(names)):
            value = grid[i, j]
            defined = value is not np.ma.masked
            ax.text(
                j,
                i,
                f"{value:+.1f}" if defined else "n/a",
                ha="center",
                va="center",
                fontsize=MIN_FONT_PT,
                color="white" if defined and abs(value) > 0.6 * limit else "black",
            )
    ax.set_xticks(range(len(names)), [plot_label(column_label(n)) for n in names], rotation=30, ha="right")
    ax.set_yticks(range(len(order)), [plot_label(model) for model in order])
    ax.set_title(
        "Score change per transformation (points, transformed − Original,\nmean over datasets; red = worse)"
        + (f"\n{title}" if title else "")
    )
    fig.colorbar(image, ax=ax, label="Δ score (points)", shrink=0.8)
    return fig


def drift_vs_quality(drift_by_model: Mapping[str, Mapping[str, Any]]) -> Figure | None:
    """Fig. 3: per transformation, embedding drift 1 − cos(orig, transformed) against the judge's
    quality score, one colour per model, with Spearman ρ and its bootstrap CI in the legend.
    None when no model has rated items."""
    transformations = sorted({t for blocks in drift_by_model.values() for t, e in blocks.items() if e.get("points")})
    if not transformations:
        return None
    columns = min(3, len(transformations))  # 3 x 4.2 in: 1210 px on the page, inside 1400 px
    rows = -(-len(transformations) // columns)
    n_models = len(drift_by_model)
    fig = new_figure(4.2 * columns, (3.4 + 0.5 * n_models) * rows)
    axs = fig.subplots(rows, columns, squeeze=False, sharey=True)
    colours = matplotlib.colormaps["tab10"]
    for k, t in enumerate(transformations):
        ax = axs[k // columns][k % columns]
        for c, (model, blocks) in enumerate(sorted(drift_by_model.items())):
            entry = blocks.get(t) or {}
            if not entry.get("points"):
                continue
            rho = entry.get("drift_quality_spearman")
            label = plot_label(model) if rho is None else f"{plot_label(model)}: ρ={rho:+.2f}"
            if rho is not None and entry.get("drift_quality_ci_low") is not None:
                low, high = entry["drift_quality_ci_low"], entry["drift_quality_ci_high"]
                label += f" [{number(low, sign=True)}, {number(high, sign=True)}]"
            points = [
                (x, q)
                for x, q in zip(entry["points"]["drift"], entry["points"]["quality"])
                if _defined(x) and _defined(q)
            ]
            ax.scatter(
                [x for x, _ in points],
                [q for _, q in points],
                s=12,
                alpha=0.6,
                color=colours(c % 10),
                label=label,
            )
        ax.set_title(plot_label(column_label(t)))
        ax.set_xlabel("embedding drift 1 − cos")
        if k % columns == 0:
            ax.set_ylabel("judge quality score")
        ax.grid(alpha=0.3)
        ax.legend(
            fontsize=MIN_FONT_PT,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.25),
            frameon=False,
            title="model: Spearman ρ [95% CI]",
            title_fontsize=MIN_FONT_PT,
        )
    for k in range(len(transformations), rows * columns):
        axs[k // columns][k % columns].axis("off")
    fig.suptitle("Embedding drift vs judge quality per item (Spearman ρ, 95% bootstrap CI)")
    fig.tight_layout()
    return fig
