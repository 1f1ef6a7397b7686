"""report.html: the comparison as one self-contained page, for readers who want to look rather
than read Markdown.

Everything is inline (CSS, a small sort script, the PNG plots as data URIs) and a Content Security
Policy forbids any fetch, so the page works offline and anywhere it is copied (report/rendering.py;
the page's words and order in templates/report.html.j2, its script and style beside it). It reads at 1400 px
and on a phone alike: the headline result first, the notices folded into one block after it, wide
tables and plots scrolling in their own frames (the leaderboard's model column stays in view), the
plots shown at their drawn size (text >= 10 pt, `plots.MIN_FONT_PT`), and an undefined statistic
saying why in its own cell. The policy admits only the page's own script, by its hash: text from
the inputs (model names, sources) is escaped (`hteb_contract.common.escape.html_text`), and even a
name that slipped through could not run. Rendered from the same `Comparison` as
comparison.md, with the same number formats.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterable, Mapping, Sequence
from hteb_contract.common.escape import html_text
from typing import Any

from hteb_score.report.provenance import made_from
from hteb_score.report.compare.basis import SAME
from hteb_score.report.compare import explorer_html
from hteb_score.report.compare.chance import row_name
from hteb_score.report.compare.comparison import (
    CHANCE_NOTE,
    CITE_NOTE,
    Comparison,
    LeaderboardRow,
    Stability,
    chance_cells,
    SIGN_WORDS,
    chance_words,
    least_p_cell,
    coverage_cell,
    figure_cell,
    heat_cell,
)
from hteb_score.report.rendering import page
from hteb_score.report.formatting import column_label, confidence_interval, count, number, p_value
from hteb_score.report.compare.pairwise import ALPHA, groups_sentence
from hteb_score.report.compare.pairwise import label as ranked_label
from hteb_score.report.compare.plots import DPI
from hteb_score.stats.hodges_lehmann import EXACT_MAX_N, WALSH_NORMAL
from hteb_score.scoring.statistics import effect_least_p
from hteb_score.stats.rank_null import Chance

#: CSS pixels per inch: a plot drawn W inches wide is shown W x 96 px wide, its text at its points.
CSS_DPI = 96
#: Holm-adjusted p thresholds and their marks, strictest first; the page's legend is made from it.
SIGNIFICANCE: tuple[tuple[float, str], ...] = ((0.001, "***"), (0.01, "**"), (0.05, "*"))

FIGURE_CAPTIONS = {
    "axis_dumbbell.png": "Original vs per-axis scores per model",
    "delta_heatmap.png": "Mean delta (transformed - Original) per model and column",
    "drift_quality.png": "Embedding drift vs judge quality of the transformed texts",
}

#: What the page inlines (report/templates/): the sort script and the item explorer's, the shared style and its own.
SCRIPTS = ("sortable.js", "explorer.js")
STYLES = ("page.css", "report.css", "explorer.css")
TITLE = "HTEB model comparison"


def render(comparison: Comparison, figures: Mapping[str, bytes]) -> str:
    """The page (templates/report.html.j2): summary and warnings, leaderboard, model against model, plots,
    effects, stability, reliability, the item explorer, inputs and protocol."""
    lines = "\n".join  # a section: its elements, one a line
    return page(
        "report.html.j2",
        title=TITLE,
        scripts=SCRIPTS,
        styles=STYLES,
        images=True,
        headline=lines(_headline(comparison)),
        provenance=made_from([m.card for m in comparison.models if m.card is not None]),
        counted=f"{comparison.counted()}, {count(len(comparison.datasets), 'dataset')}",
        notices=lines(_notices(comparison.warnings)),
        leaderboard=lines(_leaderboard(comparison)),
        pairwise=lines(_pairwise(comparison)),
        figures=lines(_figures(figures)),
        effects=lines(_effects(comparison)),
        stability=lines(_stability(comparison)),
        reliability=lines(_reliability(comparison)),
        coverage=lines(_coverage(comparison)),
        explorer=lines(explorer_html.section(comparison.models)),
        inputs=lines(_inputs(comparison)),
        protocol=lines(_protocol(comparison)),
        cite_note=CITE_NOTE,
        citation=comparison.citation(),
    )


def _headline(c: Comparison) -> list[str]:
    """The result first: the leaderboard's top model under HTEB; where no total is defined, the lead
    on Noise (who ranks first, by how much, with what interval); failing that, by Original."""
    if c.lead is not None:
        return [f'<p class="headline">{html_text(c.lead.sentence())}</p>']
    ranked = [r for r in c.leaderboard if r.rank_hteb == 1]
    if ranked:
        r = ranked[0]
        return [
            f'<p class="headline"><strong>{html_text(r.model)}</strong> ranks first under HTEB: '
            f"{number(r.hteb)} ({number(r.delta, sign=True)} from its Original {number(r.original)}).</p>"
        ]
    first = [r for r in c.leaderboard if r.rank_original == 1]
    if not first:
        return []
    return [
        f'<p class="headline">No HTEB total is defined; <strong>{html_text(first[0].model)}</strong> ranks '
        f"first on Original: {number(first[0].original)}.</p>"
    ]


def _notices(warnings: Sequence[str]) -> list[str]:
    """Every notice about the inputs in one block, folded: the reader opens it when wanted."""
    if not warnings:
        return []
    items = "".join(f"<li>{html_text(w)}</li>" for w in warnings)
    return [
        f'<details class="notices" id="notices"><summary>{count(len(warnings), "notice")} about the inputs '
        f"(open to read)</summary><ul>{items}</ul></details>"
    ]


def significance_mark(p_holm: float | None) -> str:
    """`***`, `**`, `*` by the Holm-adjusted p (see SIGNIFICANCE), "" when not significant or undefined."""
    if p_holm is None:
        return ""
    return next((mark for threshold, mark in SIGNIFICANCE if p_holm < threshold), "")


def _leaderboard(c: Comparison) -> list[str]:
    """Axes in the HTEB total before it, axes beside it (Noise) after it, as in comparison.md; a
    figure that differs from the model's card has the card's beside it, and the row is marked."""
    axes = c.leaderboard_axes()
    paper = [a for a in axes if c.taxonomy.in_total(a)]
    beside = [a for a in axes if not c.taxonomy.in_total(a)]
    total, ranked = c.has_total, c.rank_column()

    def axis_headers(axes: list[str]) -> list[tuple[str, str]]:
        return [h for a in axes for h in ((column_label(a), "number"), (f"{column_label(a)} Δ", "number"))]

    header = [
        (f"{ranked} rank" if ranked else "Rank", "number"),
        ("Model", "text"),
        ("Rank interval, group", "text"),
        ("Original", "number"),
        *axis_headers(paper),
        *([("HTEB total", "number"), ("Δ", "number")] if total else []),
        *axis_headers(beside),
        ("Original rank", "number"),
        *([("Rank change", "number")] if ranked else []),
        ("Rests on", "text"),
    ]
    rows = []
    for r in c.leaderboard:
        axis_cells = {
            a: [_num(r.axes.get(a), _axis_part(r, a, 0)), _delta(r.axis_deltas.get(a), _axis_part(r, a, 1))]
            for a in axes
        }
        ranks = c.rank_change(r)
        place = None if ranked is None else (None if ranks is None else ranks[1])
        change = None if ranks is None else ranks[0] - ranks[1]
        original_rank = _num(r.rank_original, str(r.rank_original or "-"))
        rows.append(
            [
                _num(place, str(place or "-")) if ranked else original_rank,
                _text(row_name(r.model, r.chance) + (" †" if r.differs_from_card else "")),
                _text(c.rank_interval(r)),
                _num(r.original, figure_cell(r, "original")),
                *(cell for a in paper for cell in axis_cells[a]),
                *(
                    [_num(r.hteb, figure_cell(r, "hteb")), _delta(r.delta, figure_cell(r, "delta", sign=True))]
                    if total
                    else []
                ),
                *(cell for a in beside for cell in axis_cells[a]),
                original_rank,
                *([_num(change, "-" if change is None else f"{change:+d}")] if ranked else []),
                _text(coverage_cell(r)),
            ]
        )
    note = (
        f"Basis (--basis {html_text(c.basis.name)}): {html_text(c.basis.description)}. Means over datasets; "
        "each axis Δ is against the Original of the datasets the axis was scored on"
        + (", the HTEB Δ against the Original of the datasets the total rests on" if total else "")
        + (
            f"; rank 1 = best, rank change positive = moved up under {html_text(ranked)}."
            if ranked
            else "; rank 1 = best."
        )
    )
    if not total:
        note += " No HTEB total is defined (no axis of the paper was scored): its columns are left out" + (
            f" and the models rank by {html_text(ranked)}." if ranked else "."
        )
    note += (
        f" Rank interval, group: on {html_text(ranked_label(c.rank_key()))}, the ranks a model can take and its "
        "letters, model against model (below)."
    )
    if any(r.differs_from_card for r in c.leaderboard):
        note += " † a figure differs from the model's card: the card's is given beside it."
    if c.chance:
        note += " " + html_text(CHANCE_NOTE)
    if beside and total:
        note += (
            f" {html_text(', '.join(map(column_label, beside)))} is reported beside the HTEB total, not in it: "
            "the total is the mean of the paper's axes, comparable with the paper."
        )
    return ["<h2>Leaderboard</h2>", f'<p class="note">{note}</p>', _table("leaderboard", header, rows), *_heatmap(c)]


def _pairwise(c: Comparison) -> list[str]:
    """Model against model: each ranked column's groups in a sentence, the ranks table, the pairs."""
    rankings = c.pairwise
    if not rankings or not next(iter(rankings.values())).all_pairs:
        return []
    names = list(rankings)
    out = [
        "<h2>Model against model</h2>",
        '<p class="note">Per pair of models and column, the per-dataset difference (first minus second) over the '
        "datasets every model has: HL shift with its 95% CI, Wilcoxon p, corrected over the pairs by Shaffer's "
        f"step-down; separated: Shaffer p &lt; {ALPHA}. A cell reads rank [interval] groups: the point rank by "
        "the mean, the ranks the model can take given the separated pairs (family-wise 95%), and its letters: "
        "models sharing a letter cannot be told apart.</p>",
        "<ul>",
        *(f"<li>{html_text(groups_sentence(rankings[n]))}</li>" for n in names),
        "</ul>",
    ]
    header = [("Model", "text"), *((ranked_label(n), "text") for n in names)]
    rows = [[_text(m), *(_text(rankings[n].cell(m)) for n in names)] for m in next(iter(rankings.values())).order]
    out.append(_table("pairwise-ranks", header, rows))
    pair_header = [
        ("First", "text"),
        ("Second", "text"),
        ("HL shift", "number"),
        ("95% CI", "number"),
        ("p", "number"),
        ("p (Shaffer)", "number"),
        ("Separated", "text"),
        ("Datasets", "number"),
    ]
    for name in names:
        pairs = [
            [
                _text(p.first),
                _text(p.second),
                _delta(p.effect["hl_shift"]),
                _num(p.effect["ci_low"], confidence_interval(p.effect)),
                _num(p.effect["p_value"], p_value(p.effect["p_value"])),
                _num(p.effect["p_shaffer"], p_value(p.effect["p_shaffer"])),
                _text("yes" if p.separated else "no"),
                _num(p.effect["n_datasets"], str(p.effect["n_datasets"])),
            ]
            for p in rankings[name].all_pairs
        ]
        out += [f"<h3>{html_text(ranked_label(name))}: pairs</h3>", _table(f"pairs-{name}", pair_header, pairs)]
    return out


def _axis_part(row: LeaderboardRow, axis: str, part: int) -> str:
    """The score (part 0) or the delta (part 1) of an axis cell, each with the card's where it differs."""
    if axis not in row.axes:
        return "-"
    value = row.axes[axis] if part == 0 else row.axis_deltas[axis]
    shown = number(value, sign=part == 1)
    card = row.card
    if card is None:
        return shown
    theirs = (card.axes if part == 0 else card.axis_deltas).get(axis)
    if theirs is not None and abs(theirs - value) < SAME:
        return shown
    return f"{shown} (card {number(theirs, sign=part == 1)})"


def _heatmap(c: Comparison) -> list[str]:
    if not c.heatmap_columns:
        return []
    header = [("Model", "text"), *((column_label(n), "number") for n in c.heatmap_columns)]
    chance = c.chance
    rows = [
        [
            _text(row_name(model, chance.get(model))),
            *(_delta(row[n].delta, heat_cell(row[n])) for n in c.heatmap_columns),
        ]
        for model, row in c.heatmap.items()
    ]
    note = (
        "The heat map's cells: per model, the mean over datasets of (transformed - Original) on the basis above; "
        '"card": the model\'s own figure where it differs; - : no score.'
    )
    return ["<h3>Mean delta per transformation</h3>", f'<p class="note">{note}</p>', _table("heatmap", header, rows)]


def _figures(figures: Mapping[str, bytes]) -> list[str]:
    """Each plot at the size it was drawn (CSS pixels = inches x 96, so its text keeps its points),
    scrolling in its own frame where the page is narrower."""
    out = ["<h2>Plots</h2>"]
    for name, png in figures.items():
        caption = html_text(FIGURE_CAPTIONS.get(name, name))
        data = base64.b64encode(png).decode("ascii")
        width, height = (round(side * CSS_DPI / DPI) for side in png_size(png))
        out.append(
            f'<figure><div class="scroll"><img src="data:image/png;base64,{data}" alt="{caption}" '
            f'width="{width}" height="{height}"></div>'
            f"<figcaption>{caption} ({html_text(name)})</figcaption></figure>"
        )
    return out


def png_size(png: bytes) -> tuple[int, int]:
    """(width, height) in pixels, from the PNG's IHDR chunk."""
    return struct.unpack(">II", png[16:24])


def _effects(c: Comparison) -> list[str]:
    marks = ", ".join(f"<code>{mark}</code> p (Holm) &lt; {threshold:g}" for threshold, mark in SIGNIFICANCE)
    out = [
        "<h2>Transformation effects across models</h2>",
        '<p class="note">Per dataset, the delta averaged over models. HL shift = Hodges-Lehmann estimate of the '
        "median delta with its 95% CI (not adjusted for multiple comparisons; a percentage after a CI is the "
        "coverage it reaches where too few datasets differ for 95%); p (Holm) = Wilcoxon signed-rank p, "
        "Holm-corrected within each table; least p = the smallest two-sided p the exact test can give the datasets "
        "that moved (before Holm: the most the data could say). Median |Δ| is pooled over the axis's "
        "transformations for axes.</p>",
        f'<p class="note">Significance marks: {marks}; no mark: not significant at 0.05 after Holm '
        "correction, or undefined (-).</p>",
    ]
    header = [
        ("Transformation / axis", "text"),
        ("HL shift", "number"),
        ("95% CI", "number"),
        ("p (Holm)", "number"),
        ("Sig.", "text"),
        ("Least p", "number"),
        ("Median |Δ|", "number"),
        ("Datasets", "number"),
    ]
    titles = {"transformations": "Per transformation", "axes": "Per axis", "total": "HTEB total"}
    for family, effects in c.effects.items():
        if not effects:
            continue
        rows = []
        for name, e in effects.items():
            pooled = e.get("median_abs_delta_pooled")
            abs_delta = pooled if pooled is not None else e["median_abs_delta"]
            ci = confidence_interval(e)
            mark = significance_mark(e["p_holm"])
            label = column_label(name) + (f" (undefined: {e['undefined']})" if e.get("undefined") else "")
            rows.append(
                [
                    _text(label),
                    _delta(e["hl_shift"]),
                    _num(e["ci_low"], ci),
                    _num(e["p_holm"], p_value(e["p_holm"])),
                    _cell(mark, mark or None, "sig"),
                    _num(effect_least_p(e), least_p_cell(e)),
                    _num(abs_delta, number(abs_delta)),
                    _num(e["n_datasets"], str(e["n_datasets"])),
                ]
            )
        out += [f"<h3>{titles.get(family, html_text(family))}</h3>", _table(f"effects-{family}", header, rows)]
    return out


def _stability(c: Comparison) -> list[str]:
    if c.ranked_models < 2:
        return ["<h2>Ranking stability</h2>", f"<p>{html_text(c.ONE_MODEL.capitalize())}.</p>"]
    header = [
        ("Transformation / axis", "text"),
        ("Mean τ", "number"),
        ("SD", "number"),
        ("p (random order)", "number"),
        ("Random order 95%", "number"),
        ("Datasets", "number"),
    ]
    rows = [
        [
            _text(column_label(name)),
            _num(s.mean, number(s.mean, 3), _tau_undefined(s, len(c.models))),
            _num(s.sd, number(s.sd, 3), "one dataset: no spread" if s.n == 1 else None),
            *_chance(s.chance, 3),
            _num(s.n, str(s.n)),
        ]
        for name, s in c.ranking_stability.items()
    ]
    note = (
        "Kendall τ between the models' Original and transformed scores on each dataset; mean ± sample SD "
        "over the datasets where it is defined (1 = the ranking does not change). "
        + chance_words("stability", c.ranked_models)
    )
    return ["<h2>Ranking stability</h2>", f'<p class="note">{note}</p>', _table("stability", header, rows)]


def _tau_undefined(s: Stability, models: int) -> str | None:
    """Why a mean τ is undefined, said in its cell (None: it is defined)."""
    if s.mean is not None:
        return None
    if models < 2:
        return "needs two models or more"
    if not s.per_dataset:
        return "no dataset has this column for every model"
    where = "its one dataset" if len(s.per_dataset) == 1 else f"all {len(s.per_dataset)} datasets"
    return f"undefined on {where}: the models tie there on Original or on this column, and a tie is no ranking"


def _reliability(c: Comparison) -> list[str]:
    out = ["<h2>Split-half reliability of the per-axis profiles</h2>"]
    if c.reliability.reason:
        return [*out, f"<p>Not computed: {html_text(c.reliability.reason)}.</p>"]
    header = [
        ("Axis", "text"),
        ("Median ρ", "number"),
        ("p (unrelated halves)", "number"),
        ("Unrelated halves 95%", "number"),
        ("Level SD", "number"),
        ("Half-gap SD", "number"),
        ("Splits", "number"),
        ("Defined", "number"),
    ]
    rows = [
        [
            _text(column_label(axis)),
            _num(
                r.median_rho,
                number(r.median_rho, 2, sign=True),
                None
                if r.median_rho is not None
                else f"undefined in all {count(r.n_splits, 'split')}: the models "
                "tie on a half, and a tie is no ranking",
            ),
            *_chance(c.reliability.chance.get(axis), 2),
            _num(r.level_sd, number(r.level_sd, 2)),
            _num(r.gap_sd, number(r.gap_sd, 2)),
            _num(r.n_splits, str(r.n_splits)),
            _num(r.n_defined, str(r.n_defined)),
        ]
        for axis, r in c.reliability.per_axis.items()
    ]
    note = (
        "Median Spearman ρ between model scores on two task-stratified halves of the datasets. "
        + chance_words("reliability", c.ranked_models)
        + " "
        + SIGN_WORDS
    )
    return [*out, f'<p class="note">{note}</p>', _table("reliability", header, rows)]


def _chance(chance: Chance | None, digits: int) -> list[str]:
    """A row's p and 95% level of chance as sortable cells (comparison.chance_cells' text)."""
    p, level = chance_cells(chance, digits)
    return [_num(None if chance is None else chance.p, p), _num(None if chance is None else chance.level, level)]


def _coverage(c: Comparison) -> list[str]:
    """What each figure rests on (report/compare/coverage_rows.py); nothing where no card records it."""
    if not c.coverage_stated:
        return []
    header = [
        ("Dataset", "text"),
        ("Variant", "text"),
        ("Subsets scored", "number"),
        ("Texts changed", "number"),
        ("Left out", "text"),
        ("Models", "text"),
    ]
    rows = [
        [
            _text(r.dataset),
            _text(f"{r.transformation} seed {r.seed}"),
            _num(r.subsets_scored, r.subsets),
            _num(r.changed_share, f"{r.changed_share:.0%}" + (" mostly unchanged" if r.flagged_unchanged else "")),
            _text(", ".join(r.left_out) or None),
            _text(", ".join(r.models)),
        ]
        for r in c.coverage
    ]
    note = (
        "Every Noise variant, and any other variant that left subsets out or whose texts are mostly unchanged "
        "(an unchanged text scores as the Original): the subsets its dataset figure averages."
    )
    return ["<h2>What each figure rests on</h2>", f'<p class="note">{note}</p>', _table("coverage", header, rows)]


def _inputs(c: Comparison) -> list[str]:
    header = [("Model", "text"), ("Source", "text"), ("Dataset revision", "text"), ("Scoring protocol", "text")]
    rows = []
    for m in c.models:
        protocol = (m.card or {}).get("protocol")
        rows.append([_text(m.model), _text(m.source), _text(m.revision), _text(protocol, missing="- (scores table)")])
    return ["<h2>Inputs</h2>", _table("inputs", header, rows)]


def _protocol(c: Comparison) -> list[str]:
    methods = sorted({e["ci_method"] for effects in c.effects.values() for e in effects.values()})
    ci = {
        "walsh": "exact signed-rank interval (Walsh averages)",
        "bootstrap": "seeded percentile bootstrap",
        WALSH_NORMAL: f"signed-rank interval (Walsh averages), k from the normal approximation (more than "
        f"{EXACT_MAX_N} datasets differ)",
    }
    splits = {r.n_splits for r in c.reliability.per_axis.values()}
    items = [
        f"Datasets compared ({len(c.datasets)}, those every model has an Original score for): "
        f"{html_text(', '.join(c.datasets))}.",
        "Leaderboard: per model, the mean over datasets of Original, each axis (mean of its transformations) and "
        "the HTEB total (mean of the paper's three axes; Noise is never in it), on the basis "
        f"<code>{html_text(c.basis.name)}</code>: {html_text(c.basis.description)}.",
        f"Effects: HL shift with {html_text(' / '.join(ci.get(m, m) for m in methods) or '-')} CI, Wilcoxon signed-rank "
        "p, Holm correction within each family (transformations; axes; total)"
        + ("" if all(map(c.taxonomy.in_total, c.columns.names())) else ", the paper's and Noise's apart")
        + ".",
        "Ranking stability: Kendall τ per dataset; reliability: split-half Spearman ρ"
        + (f" over {', '.join(map(str, sorted(splits)))} random splits." if splits else "."),
        "Dataset revisions: " + ("<strong>mixed</strong>." if c.mixed_revisions else "one revision."),
    ]
    if c.forced:
        items.append("<strong>Forced</strong>: inputs that do not match were compared anyway (--force).")
    return ["<h2>Protocol</h2>", "<ul>", *(f"<li>{item}</li>" for item in items), "</ul>"]


def _table(table_id: str, header: Sequence[tuple[str, str]], rows: Iterable[Sequence[str]]) -> str:
    """A sortable table: `header` is (label, "number" | "text") per column, rows are rendered cells."""
    head = "".join(
        f'<th data-type="{kind}"><button type="button">{html_text(label)}</button></th>' for label, kind in header
    )
    body = "\n".join(f"<tr>{''.join(cells)}</tr>" for cells in rows)
    return (
        f'<div class="scroll"><table id="{table_id}" class="sortable">\n<thead><tr>{head}</tr></thead>\n'
        f"<tbody>\n{body}\n</tbody>\n</table></div>"
    )


def _cell(shown: str, value: Any, css: str = "", why: str | None = None) -> str:
    """A cell showing `shown`, sorted by `value` (None: undefined, sorted last); `why` says, in the
    cell, why it is empty."""
    attrs = "" if value is None else f' data-value="{html_text(str(value))}"'
    attrs += f' class="{css}"' if css else ""
    reason = "" if why is None else f'<span class="why">{html_text(why)}</span>'
    return f"<td{attrs}>{html_text(shown)}{reason}</td>"


def _num(value: float | None, shown: str, why: str | None = None) -> str:
    return _cell(shown, None if value is None else repr(float(value)), why=why)


def _text(value: str | None, missing: str = "-") -> str:
    """A text cell; `missing` is shown where there is no value (sorted last)."""
    return _cell(missing if value is None else value, value, "text")


def _delta(value: float | None, shown: str | None = None) -> str:
    shown = number(value, sign=True) if shown is None else shown
    css = "" if value is None or float(number(value)) == 0 else ("neg" if value < 0 else "pos")  # 0.00: neutral
    return _cell(shown, None if value is None else repr(float(value)), css)
