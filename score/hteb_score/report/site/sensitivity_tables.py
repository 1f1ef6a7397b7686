"""The Sensitivity findings' tables (docs/sensitivity.md, `hteb-score tables`), from the committed cards of
models scored on a Sensitivity revision (`make sensitivity-findings`): each model's `sensitivity` block as the
card states it, the null models' chance rows last.

`sensitivity-models`: per model, each minimal pair's accuracy with its interval and reading, then the mean of
the pairs' accuracies, last and headed as unweighted (and the hard twins' mean, where a card was scored with
them); `sensitivity-datasets`: per pair and dataset, each model's accuracy beside the smallest its items can tell
from 0.5 (`detectable`), so a blind cell on a dataset with few items reads as what it is;
`sensitivity-top1`: per pair and retrieval dataset, each model's top-1 flip (the twin query keeps the original
query's top-1 document, the changed query loses it) with its interval, and its two parts;
`sensitivity-robustness`: per model scored on both, its Sensitivity beside its Noise robustness (a second folder
of Noise cards), so that "robust because deaf" shows at a glance: how many pairs it hears, is blind to and is
inverted on, not the mean of the pairs' accuracies, which weighs a pair of a few items as one of thousands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hteb_contract.common.escape import md_text
from hteb_contract.errors import HtebError
from hteb_score.report.compare.chance import chance_rows, row_name
from hteb_score.report.compare.inputs import load_folder
from hteb_score.report.formatting import md_row, number, share_interval
from hteb_score.scoring.sensitivity import detectable, readings
from hteb_score.scoring.model_scores import ModelScores


@dataclass(frozen=True)
class SensitivityRow:
    """One model's card: the name its rows show (a chance row's labelled) and its `sensitivity` block."""

    name: str  # for Markdown
    block: Mapping[str, Any]
    chance: bool
    model: str = ""  # the card's model id
    revision: str = ""  # the label of the dataset revision the card scored
    plain: str = ""  # the name unescaped, for a page or a plot to escape its own way


def sensitivity_cards(folder: Path) -> list[SensitivityRow]:
    """The cards in `folder` (`*/result_card.json`, each checked as `compare` checks it) with a Sensitivity
    block: real models in name order, then the chance rows."""
    models = load_folder(folder)
    missing = [m.source for m in models if not (m.card or {}).get("sensitivity")]
    if missing:
        raise HtebError(f"{missing[0]}: the card has no Sensitivity figures (not scored on a Sensitivity revision)")
    chance = chance_rows(models)
    plain = {m.model: row_name(Path(m.model).name, chance.get(m.model)) for m in models}
    rows = [
        SensitivityRow(
            md_text(plain[m.model]),
            (m.card or {})["sensitivity"],
            m.model in chance,
            m.model,
            (m.card or {})["dataset"]["label"],
            plain[m.model],
        )
        for m in models
    ]
    return sorted(rows, key=lambda r: (r.chance, r.name))


def _pairs(rows: Sequence[SensitivityRow]) -> list[str]:
    """Every pair any card scored, in the cards' order."""
    return list(dict.fromkeys(p["pair"] for r in rows for p in r.block["pairs"]))


def _reading(figure: Mapping[str, Any] | None) -> str:
    """accuracy [low, high], bold where the interval leaves 0.5 out, "-" where not scored."""
    if figure is None or figure["accuracy"] is None:
        return "-"
    cell = number(figure["accuracy"], 3)
    if figure["ci"] is not None:
        cell += f" {share_interval(figure['ci'])}"
    return cell if figure["blind"] in (True, None) else f"**{cell}**"


def sensitivity_models(rows: Sequence[SensitivityRow]) -> str:
    """Per model, each pair's figure, then the mean of the pairs' accuracies (and of their hard accuracies,
    where a card was scored with hard twins), last: a mean that weighs a pair of few items as one of many is
    read after the pairs, under a heading that says so."""
    pairs = _pairs(rows)
    hard = any("hard_overall" in r.block for r in rows)
    means = ["mean of pairs (unweighted)", *(["hard mean of pairs (unweighted)"] if hard else [])]
    lines = [
        md_row(["model", *(f"{md_text(p)} (items)" for p in pairs), *means]),
        md_row(["---"] * (1 + len(pairs) + len(means))),
    ]
    for row in rows:
        by_pair = {p["pair"]: p for p in row.block["pairs"]}
        cells = [f"{_reading(by_pair.get(p))} ({by_pair[p]['items']})" if p in by_pair else "-" for p in pairs]
        figures = [row.block["overall"], *([row.block.get("hard_overall")] if hard else [])]
        lines.append(md_row([row.name, *cells, *(number(f, 3) for f in figures)]))
    return "\n".join(lines)


def sensitivity_datasets(rows: Sequence[SensitivityRow]) -> str:
    lines = [
        md_row(["pair", "dataset", "items", "detectable", *(r.name for r in rows)]),
        md_row(["---"] * (4 + len(rows))),
    ]
    for pair in _pairs(rows):
        datasets = list(dict.fromkeys(d["dataset"] for r in rows for d in r.block["datasets"] if d["pair"] == pair))
        for dataset in datasets:
            figures = [
                next((d for d in r.block["datasets"] if (d["pair"], d["dataset"]) == (pair, dataset)), None)
                for r in rows
            ]
            first = next(f for f in figures if f is not None)  # the items are the revision's: every model's alike
            # the items' reach where none ties (a card's own `detectable` sets its model's ties aside)
            lines.append(
                md_row(
                    [
                        md_text(pair),
                        md_text(dataset),
                        str(first["items"]),
                        number(detectable(first["items"]), 3),
                        *map(_reading, figures),
                    ]
                )
            )
    return "\n".join(lines)


def _flip(figure: Mapping[str, Any] | None) -> str:
    """share [low, high] (twin keeps / changed loses), "-" where the card has no top-1 flip."""
    flip = None if figure is None else figure.get("top1_flip")
    if flip is None:
        return "-"
    parts = f"{number(flip['twin_keeps'], 3)} / {number(flip['changed_loses'], 3)}"
    return f"{number(flip['share'], 3)} {share_interval(flip['ci'])} ({parts})"


def sensitivity_top1(rows: Sequence[SensitivityRow]) -> str:
    lines = [md_row(["pair", "dataset", "items", *(r.name for r in rows)]), md_row(["---"] * (3 + len(rows)))]
    for pair in _pairs(rows):
        figures_of = {
            d["dataset"]: [
                next((f for f in r.block["datasets"] if (f["pair"], f["dataset"]) == (pair, d["dataset"])), None)
                for r in rows
            ]
            for r in rows
            for d in r.block["datasets"]
            if d["pair"] == pair and "top1_flip" in d
        }
        for dataset, figures in figures_of.items():
            items = next(f["top1_flip"]["items"] for f in figures if f is not None and "top1_flip" in f)
            lines.append(md_row([md_text(pair), md_text(dataset), str(items), *map(_flip, figures)]))
    if len(lines) == 2:
        raise HtebError("no card holds a top-1 flip (a retrieval dataset scored since it was recorded)")
    return "\n".join(lines)


def sensitivity_and_noise(folders: Sequence[Path]) -> tuple[list[SensitivityRow], list[ModelScores]]:
    """The Sensitivity cards of the first folder (`sensitivity_cards`) and the Noise cards of the second."""
    sensitivity, noise = folders
    return sensitivity_cards(sensitivity), load_folder(noise)


def sensitivity_robustness(read: tuple[Sequence[SensitivityRow], Sequence[ModelScores]]) -> str:
    """Per model with both cards: its Sensitivity (how many pairs it hears, is blind to or inverted on) beside
    its Original and Noise scores (points) and the Noise delta, as its Noise card's aggregates state them.
    Chance rows last, as in the other tables."""
    rows, noise_cards = read
    noise = {m.model: (m.card or {}).get("aggregates", {}) for m in noise_cards}
    both = [r for r in rows if r.model in noise and noise[r.model].get("per_axis", {}).get("noise") is not None]
    if not both:
        raise HtebError("table sensitivity-robustness: no model has a Sensitivity card and a Noise card")
    lines = [
        md_row(["model", "Sensitivity: pairs heard", "blind", "inverted", "Original", "Noise", "Noise delta"]),
        md_row(["---"] * 7),
    ]
    for row in both:
        kinds = readings({p["pair"]: p for p in row.block["pairs"]})
        aggregates = noise[row.model]
        original, under_noise = aggregates["original"], aggregates["per_axis"]["noise"]
        lines.append(
            md_row(
                [
                    row.name,
                    *(str(len(kinds[kind])) for kind in ("hears", "blind", "inverted")),
                    number(original),
                    number(under_noise),
                    number(under_noise - original, sign=True),
                ]
            )
        )
    return "\n".join(lines)
