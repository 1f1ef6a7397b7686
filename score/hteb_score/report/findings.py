"""The findings tables of the docs, written from the committed result cards (`hteb-score tables`).

A Markdown file marks each generated table:

    <!-- hteb:table noise-models findings/noise-1339 -->
    | model | Original | Noise | delta | ... |
    <!-- /hteb:table -->

(the table's name, then the folder of its cards, `*/result_card.json`, relative to the file).
`update_tables` replaces what stands between the markers with what `TABLES[name]` renders from
those cards, through the same comparison `hteb-score compare` makes, so a number in the docs is
a view of the cards, never typed by hand; `hteb-score tables --check` fails when they differ.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from hteb_contract.errors import ContractError, HtebError
from hteb_contract.registry import Registry
from hteb_contract.taxonomy import AXES
from hteb_score.report.analysis import compare
from hteb_score.report.comparison import Comparison
from hteb_score.report.formatting import confidence_interval, number, p_value
from hteb_score.report.inputs import load_card

_MARKED = re.compile(r"(<!-- hteb:table (?P<name>[\w-]+) (?P<cards>\S+) -->\n)(?P<body>.*?)(<!-- /hteb:table -->)",
                     re.S)
#: How a Noise rule is named in a table heading.
SHORT = {"character_deletion": "char. deletion", "numerisation": "numerisation", "keyboard_typos": "keyboard typos",
         "punctuation_casing_loss": "punct./casing loss", "random_capitalisation": "random caps"}


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _name(model: str) -> str:
    """A model as the docs name it: the last part of its id or path."""
    return Path(model).name


def noise_models(comparison: Comparison) -> str:
    """Per model, in leaderboard order: Original and Noise over the same datasets, their delta, and
    each Noise rule's mean delta (the heat map's cells)."""
    rules = [t for t in AXES["noise"] if t in comparison.heatmap_columns]
    lines = [_row(["model", "Original", "Noise", "delta", *(SHORT[t] for t in rules)]), "|---" * (4 + len(rules)) + "|"]
    for row in comparison.leaderboard:
        figures = row.figures
        lines.append(_row([_name(row.model), number(figures.axis_originals["noise"]), number(figures.axes["noise"]),
                           number(figures.axis_deltas["noise"], sign=True),
                           *(number(comparison.heatmap[row.model][t].delta, sign=True) for t in rules)]))
    return "\n".join(lines)


def noise_effects(comparison: Comparison) -> str:
    """Per Noise rule (largest shift first) and the Noise axis: HL shift, its CI, Holm p and the mean
    Kendall tau between the models' Original and transformed scores."""
    rules = {t: e for t, e in comparison.effects["transformations"].items() if t in AXES["noise"]}
    rows = [*sorted(rules.items(), key=lambda item: item[1]["hl_shift"]), ("Noise axis", comparison.effects["axes"]["noise"])]
    lines = [_row(["rule", "HL shift", "95% CI", "Holm p", "mean Kendall tau, Original vs rule"]), "|---" * 5 + "|"]
    for name, effect in rows:
        tau = comparison.ranking_stability["noise" if name == "Noise axis" else name].mean
        lines.append(_row([name, number(effect["hl_shift"], sign=True), confidence_interval(effect),
                           p_value(effect["p_holm"]), number(tau, 3)]))
    return "\n".join(lines)


TABLES: Registry[Callable[[Comparison], str]] = Registry("findings table", entries={
    "noise-models": noise_models, "noise-effects": noise_effects})


def comparison_of(folder: Path) -> Comparison:
    """The comparison of the cards in `folder` (`*/result_card.json`), as `hteb-score compare` makes it."""
    cards = sorted(Path(folder).glob("*/result_card.json"))
    if not cards:
        raise HtebError(f"{folder}: no result cards (*/result_card.json)")
    return compare([load_card(path) for path in cards], n_splits=10)


def update_tables(text: str, base: Path) -> str:
    """`text` with every marked table rendered anew from its cards (folders relative to `base`)."""
    comparisons: dict[str, Comparison] = {}

    def render(match: re.Match[str]) -> str:
        folder = match["cards"]
        if folder not in comparisons:
            comparisons[folder] = comparison_of(base / folder)
        return match.group(1) + TABLES.get(match["name"])(comparisons[folder]) + "\n" + match.group(5)

    updated, n = _MARKED.subn(render, text)
    if n == 0:
        raise ContractError("no generated table in it (<!-- hteb:table NAME CARDS --> ... <!-- /hteb:table -->)")
    return updated
