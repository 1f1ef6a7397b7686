"""The findings tables of the docs, written from the committed result cards (`hteb-score tables`).

A Markdown file marks each generated table:

    <!-- hteb:table noise-models findings/noise-1339 -->
    | model | Original | Noise | delta | ... |
    <!-- /hteb:table -->

(the table's name, then the folder it is written from, relative to the file: for the score tables
the folder of the cards, `*/result_card.json`; for `unit-times` the folder of the committed work
units, `MODEL/DATASET.hteb_part.json.gz`). `update_tables` replaces what stands between the markers
with what `TABLES[name]` renders from that folder (the cards through the same comparison
`hteb-score compare` makes), so a number in the docs is a view of the committed JSON, never typed by
hand; `hteb-score tables --check` fails when they differ.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hteb_contract.errors import ContractError, HtebError
from hteb_contract.common.escape import md_text, terminal
from hteb_contract.common.registry import Registry
from hteb_contract.taxonomy import AXES
from hteb_score import CARD_FILE
from hteb_score.report.analysis import compare
from hteb_score.report.comparison import Comparison
from hteb_score.report.formatting import confidence_interval, count, md_row, number, p_value
from hteb_score.report.inputs import load_card
from hteb_score.report.pairwise import label as ranked_label
from hteb_score.scoring.parts import TIMING_TOTAL, ScorePart, difference, read_part

_MARKED = re.compile(r"(<!-- hteb:table (?P<name>[\w-]+) (?P<folder>\S+) -->\n)(?P<body>.*?)(<!-- /hteb:table -->)",
                     re.S)
#: How a Noise rule is named in a table heading.
SHORT = {"character_deletion": "char. deletion", "numerisation": "numerisation", "keyboard_typos": "keyboard typos",
         "punctuation_casing_loss": "punct./casing loss", "random_capitalisation": "random caps"}



def _name(model: str) -> str:
    """A model as the docs name it: the last part of its id or path, escaped for a table cell."""
    return md_text(Path(model).name)


def noise_models(comparison: Comparison) -> str:
    """Per model, in leaderboard order: Original and Noise over the same datasets, their delta, and
    each Noise rule's mean delta (the heat map's cells)."""
    rules = [t for t in AXES["noise"] if t in comparison.heatmap_columns]
    lines = [md_row(["model", "Original", "Noise", "delta", *(SHORT[t] for t in rules)]), "|---" * (4 + len(rules)) + "|"]
    for row in comparison.leaderboard:
        figures = row.figures
        if figures is None:  # a row built without figures: never one of `leaderboard`'s
            continue
        if "noise" not in figures.axes:
            raise ContractError(f"table noise-models: the card of {terminal(row.model)} has no Noise results")
        cells = comparison.heatmap.get(row.model, {})
        lines.append(md_row([_name(row.model), number(figures.axis_originals["noise"]), number(figures.axes["noise"]),
                           number(figures.axis_deltas["noise"], sign=True),
                           *(number(cells[t].delta, sign=True) if t in cells else "-" for t in rules)]))
    return "\n".join(lines)


def noise_effects(comparison: Comparison) -> str:
    """Per Noise rule (largest shift first) and the Noise axis: HL shift, its CI, Holm p and the mean
    Kendall tau between the models' Original and transformed scores."""
    if "noise" not in comparison.effects["axes"]:
        raise ContractError("table noise-effects: the cards have no Noise results")
    rules = {t: e for t, e in comparison.effects["transformations"].items() if t in AXES["noise"]}
    rows = [*sorted(rules.items(), key=lambda item: item[1]["hl_shift"]), ("Noise axis", comparison.effects["axes"]["noise"])]
    lines = [md_row(["rule", "HL shift", "95% CI", "Holm p", "mean Kendall tau, Original vs rule"]), "|---" * 5 + "|"]
    for name, effect in rows:
        tau = comparison.ranking_stability["noise" if name == "Noise axis" else name].mean
        lines.append(md_row([md_text(name), number(effect["hl_shift"], sign=True), confidence_interval(effect),
                           p_value(effect["p_holm"]), number(tau, 3)]))
    return "\n".join(lines)


def model_groups(comparison: Comparison) -> str:
    """Model against model: per model (in leaderboard order), on each ranked column its point rank,
    rank interval and group letters, then per column how many pairs were separated after Holm."""
    rankings = comparison.pairwise
    names = list(rankings)
    lines = [md_row(["model", *(ranked_label(n) for n in names)]), "|---" * (1 + len(names)) + "|"]
    lines += [md_row([_name(row.model), *(rankings[n].cell(row.model) for n in names)]) for row in comparison.leaderboard]
    lines.append(md_row(["pairs separated (Holm p < 0.05)", *(
        f"{sum(p.separated for p in rankings[n].pairs)} of {len(rankings[n].pairs)}" for n in names)]))
    return "\n".join(lines)


def noise_subsets(comparison: Comparison) -> str:
    """Per dataset and Noise rule, the subsets its figure rests on ("5 of 12") and the share of texts it
    changed, from the cards' coverage (the same for every model of one revision: the first card's)."""
    if not comparison.coverage_stated:
        raise ContractError("table noise-subsets: the cards do not record what each figure rests on (scored "
                            "before hteb-score recorded it): score them again")
    rows = [r for r in comparison.coverage if r.transformation in AXES["noise"]]
    lines = [md_row(["dataset", "rule", "subsets scored", "texts changed", "left out"]), "|---" * 5 + "|"]
    seen = set()
    for r in rows:
        if (r.dataset, r.transformation, r.seed) in seen:
            continue
        seen.add((r.dataset, r.transformation, r.seed))
        changed = f"{r.changed_share:.0%}" + (" (mostly unchanged)" if r.flagged_unchanged else "")
        lines.append(md_row([md_text(r.dataset), SHORT[r.transformation], r.subsets, changed,
                             md_text(", ".join(r.left_out) or "-")]))
    return "\n".join(lines)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.1f}"


def _cached(parts: Sequence[ScorePart]) -> str:
    """The share of a unit's unique texts its embedding cache held (not encoded in its own time)."""
    unique = sum(p.timings.get("unique_texts", 0.0) for p in parts)
    encoded = sum(p.timings.get("texts_encoded", 0.0) for p in parts)
    if unique <= 0 or encoded >= unique:
        return ""
    share = 1 - encoded / unique
    return f" ({'<1%' if share < 0.01 else f'{share:.0%}'} cached)"


def unit_times(parts: Mapping[str, Sequence[ScorePart]]) -> str:
    """Minutes of wall time per work unit (a row per part's datasets, a column per model), with the
    share of its texts its embedding cache already held, and each model's sum; "-" where a model
    has no such unit yet."""
    models = list(parts)
    rows: dict[tuple[str, ...], dict[str, ScorePart]] = {}
    for model in models:
        for part in parts[model]:
            datasets = tuple(u.dataset for u in part.units)
            if TIMING_TOTAL not in part.timings:
                raise ContractError(f"table unit-times: the work unit {terminal(' + '.join(datasets))} of "
                                    f"{terminal(model)} has no total time ({TIMING_TOTAL})")
            rows.setdefault(datasets, {})[model] = part
    lines = [md_row(["unit", *map(md_text, models)]), "|---" * (1 + len(models)) + "|"]
    for datasets in sorted(rows):
        held = rows[datasets]
        lines.append(md_row([md_text(" + ".join(datasets)), *(
            _minutes(held[m].timings[TIMING_TOTAL]) + _cached([held[m]]) if m in held else "-" for m in models)]))
    lines.append(md_row(["in all", *(
        f"{_minutes(sum(p.timings[TIMING_TOTAL] for p in parts[m]))} over {count(len(parts[m]), 'unit')}"
        f"{_cached(parts[m])}"
        for m in models)]))
    return "\n".join(lines)


def comparison_of(folder: Path) -> Comparison:
    """The comparison of the cards in `folder` (`*/result_card.json`), as `hteb-score compare` makes it."""
    cards = sorted(Path(folder).glob(f"*/{CARD_FILE}"))
    if not cards:
        raise HtebError(f"{folder}: no result cards (*/result_card.json)")
    return compare([load_card(path) for path in cards], n_splits=10)


def parts_of(folder: Path) -> dict[str, list[ScorePart]]:
    """The committed work units in `folder`, by model (`MODEL/*.hteb_part.json.gz`), models in name order;
    each part checked as `merge` checks it (read_part), and a model's parts as parts of one run: the same
    identity (model, revision, options) and each dataset in one of them."""
    found: dict[str, list[ScorePart]] = {}
    paths: dict[str, list[Path]] = {}
    for path in sorted(Path(folder).glob("*/*.hteb_part.json.gz")):
        found.setdefault(path.parent.name, []).append(read_part(path))
        paths.setdefault(path.parent.name, []).append(path)
    if not found:
        raise HtebError(f"{folder}: no work units (MODEL/*.hteb_part.json.gz)")
    for model, parts in found.items():
        _one_run(parts, paths[model])
    return found


def _one_run(parts: Sequence[ScorePart], paths: Sequence[Path]) -> None:
    first, held = parts[0].identity.to_dict(), dict[str, Path]()
    for part, path in zip(parts, paths):
        differs = difference(first, part.identity.to_dict())
        if differs is not None:
            raise HtebError(f"{paths[0]} and {path} differ in identity.{differs}: they are not work units of one run")
        for unit in part.units:
            if unit.dataset in held:
                raise HtebError(f"{held[unit.dataset]} and {path} both hold units.{unit.dataset}: a unit is timed once")
            held[unit.dataset] = path


@dataclass(frozen=True)
class Table:
    """A generated table: what it is read from (a folder's cards or parts) and how it is rendered."""

    read: Callable[[Path], Any]
    render: Callable[[Any], str]


TABLES: Registry[Table] = Registry("findings table", entries={
    "noise-models": Table(comparison_of, noise_models), "noise-effects": Table(comparison_of, noise_effects),
    "model-groups": Table(comparison_of, model_groups), "noise-subsets": Table(comparison_of, noise_subsets),
    "unit-times": Table(parts_of, unit_times)})


def update_tables(text: str, base: Path) -> str:
    """`text` with every marked table rendered anew from its folder's cards or parts (relative to `base`),
    each folder read once per reader."""
    read: dict[tuple[Callable[[Path], Any], str], Any] = {}

    def render(match: re.Match[str]) -> str:
        table = TABLES.get(match["name"])
        key = (table.read, match["folder"])
        if key not in read:
            read[key] = table.read(base / match["folder"])
        return match.group(1) + table.render(read[key]) + "\n" + match.group(5)

    updated, n = _MARKED.subn(render, text)
    if n == 0:
        raise ContractError("no generated table in it (<!-- hteb:table NAME CARDS --> ... <!-- /hteb:table -->)")
    return updated
