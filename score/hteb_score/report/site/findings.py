"""The findings tables of the docs, written from the committed result cards (`hteb-score tables`).

A Markdown file marks each generated table:

    <!-- hteb:table noise-models findings/noise-1339 -->
    | model | Original | Noise | delta | ... |
    <!-- /hteb:table -->

(the table's name, then the folder it is written from, relative to the file: for the score tables
the folder of the cards, `*/result_card.json`; for `unit-times` the folder of the committed work
units, `MODEL/DATASET.hteb_part.json.gz`, with those that left the tree at its round's `parts-at`). `update_tables` replaces what stands between the markers
with what `TABLES[name]` renders from that folder (the cards through the same comparison
`hteb-score compare` makes), so a number in the docs is a view of the committed JSON, never typed by
hand; `hteb-score tables --check` fails when they differ.

A null model's card among the models' is the chance row (report/compare/chance.py): listed last, labelled, in
no rank, group, count of pairs or headline; the item examples and the power table leave it out.
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
from hteb_score.report.compare.analysis import compare
from hteb_score.report.compare.chance import chance_rows, row_name
from hteb_score.report.compare.comparison import Comparison
from hteb_score.report.formatting import confidence_interval, count, heading, md_row, number, p_value
from hteb_score.report.compare.inputs import load_folder
from hteb_score.report.compare.pairwise import power_markdown
from hteb_score.report.compare.pairwise import label as ranked_label
from hteb_score.report.compare.per_dataset import tables as per_dataset_tables
from hteb_score.report.site.parts_at import parts_left
from hteb_score.report.site.sensitivity_tables import (
    sensitivity_and_noise,
    sensitivity_cards,
    sensitivity_datasets,
    sensitivity_top1,
    sensitivity_models,
    sensitivity_robustness,
)
from hteb_score.scoring.model_scores import ModelScores
from hteb_score.scoring.parts import PART_SUFFIX, TIMING_TOTAL, ScorePart, difference, read_part

_MARKED = re.compile(
    r"(<!-- hteb:table (?P<name>[\w-]+) (?P<folder>\S+) -->\n)(?P<body>.*?)(<!-- /hteb:table -->)", re.S
)


def _name(model: str) -> str:
    """A model as the docs name it: the last part of its id or path, escaped for a table cell."""
    return md_text(Path(model).name)


def _row(model: str, chance: Mapping[str, str]) -> str:
    """A table row's model: `_name`, a chance row's with its label."""
    return md_text(row_name(Path(model).name, chance.get(model)))


def noise_models(comparison: Comparison) -> str:
    """Per model, in leaderboard order: Original and Noise over the same datasets, their delta, and
    each Noise rule's mean delta (the heat map's cells)."""
    rules = [t for t in comparison.taxonomy.transformations_of("noise") if t in comparison.heatmap_columns]
    lines = [
        md_row(["model", "Original", "Noise", "delta", *(heading(t) for t in rules)]),
        "|---" * (4 + len(rules)) + "|",
    ]
    for row in comparison.leaderboard:
        figures = row.figures
        if figures is None:  # a row built without figures: never one of `leaderboard`'s
            continue
        if "noise" not in figures.axes:
            raise ContractError(f"table noise-models: the card of {terminal(row.model)} has no Noise results")
        cells = comparison.heatmap.get(row.model, {})
        lines.append(
            md_row(
                [
                    _row(row.model, comparison.chance),
                    number(figures.axis_originals["noise"]),
                    number(figures.axes["noise"]),
                    number(figures.axis_deltas["noise"], sign=True),
                    *(number(cells[t].delta, sign=True) if t in cells else "-" for t in rules),
                ]
            )
        )
    return "\n".join(lines)


def noise_effects(comparison: Comparison) -> str:
    """Per Noise rule (largest shift first) and the Noise axis: HL shift, its CI, Holm p, the mean Kendall tau
    between the models' Original and transformed scores and its p among random reorderings of the models."""
    if "noise" not in comparison.effects["axes"]:
        raise ContractError("table noise-effects: the cards have no Noise results")
    rules = {
        t: e
        for t, e in comparison.effects["transformations"].items()
        if t in comparison.taxonomy.transformations_of("noise")
    }
    rows = [
        *sorted(rules.items(), key=lambda item: item[1]["hl_shift"]),
        ("Noise axis", comparison.effects["axes"]["noise"]),
    ]
    header = ["rule", "HL shift", "95% CI", "Holm p", "mean Kendall tau, Original vs rule", "tau: p (random order)"]
    lines = [md_row(header), "|---" * len(header) + "|"]
    for name, effect in rows:
        stability = comparison.ranking_stability["noise" if name == "Noise axis" else name]
        lines.append(
            md_row(
                [
                    md_text(name),
                    number(effect["hl_shift"], sign=True),
                    confidence_interval(effect),
                    p_value(effect["p_holm"]),
                    number(stability.mean, 3),
                    p_value(None if stability.chance is None else stability.chance.p),
                ]
            )
        )
    return "\n".join(lines)


def model_groups(comparison: Comparison) -> str:
    """Model against model: per model (in leaderboard order), on each ranked column its point rank,
    rank interval and group letters, then per column how many pairs of models were separated after
    Shaffer's correction; a chance row last, with how many models each column separates from it."""
    rankings, chance = comparison.pairwise, comparison.chance
    names = list(rankings)
    lines = [md_row(["model", *(ranked_label(n) for n in names)]), "|---" * (1 + len(names)) + "|"]
    lines += [
        md_row([_name(row.model), *(rankings[n].cell(row.model) for n in names)])
        for row in comparison.leaderboard
        if row.model not in chance
    ]
    for model in chance:
        against = [
            [p for p in rankings[n].chance_pairs if model in (p.first, p.second) and {p.first, p.second} - set(chance)]
            for n in names
        ]
        lines.append(
            md_row(
                [
                    _row(model, chance),
                    *(
                        f"no rank; separated from {sum(p.separated for p in pairs)} of {len(pairs)} models"
                        for pairs in against
                    ),
                ]
            )
        )
    models = [rankings[n].pairs for n in names]
    lines.append(
        md_row(
            [
                "pairs separated (Shaffer p < 0.05)",
                *(f"{sum(p.separated for p in pairs)} of {len(pairs)}" for pairs in models),
            ]
        )
    )
    return "\n".join(lines)


def noise_subsets(comparison: Comparison) -> str:
    """Per dataset and Noise rule, the subsets its figure rests on ("5 of 12") and the share of texts it
    changed, from the cards' coverage (the same for every model of one revision: the first card's)."""
    if not comparison.coverage_stated:
        raise ContractError(
            "table noise-subsets: the cards do not record what each figure rests on (scored "
            "before hteb-score recorded it): score them again"
        )
    rows = [r for r in comparison.coverage if r.transformation in comparison.taxonomy.transformations_of("noise")]
    lines = [md_row(["dataset", "rule", "subsets scored", "texts changed", "left out"]), "|---" * 5 + "|"]
    seen = set()
    for r in rows:
        if (r.dataset, r.transformation, r.seed) in seen:
            continue
        seen.add((r.dataset, r.transformation, r.seed))
        changed = f"{r.changed_share:.0%}" + (" (mostly unchanged)" if r.flagged_unchanged else "")
        lines.append(
            md_row(
                [
                    md_text(r.dataset),
                    heading(r.transformation),
                    r.subsets,
                    changed,
                    md_text(", ".join(r.left_out) or "-"),
                ]
            )
        )
    return "\n".join(lines)


def cards_of(folders: Sequence[Path]) -> list[list[ModelScores]]:
    """The cards of each folder (`*/result_card.json`), each checked as `compare` checks its inputs."""
    return [load_folder(folder) for folder in folders]


def noise_before_after(cards: Sequence[Sequence[ModelScores]]) -> str:
    """Each Noise rule's delta from the Original (points) on the datasets a later revision changed, before
    (the first folder's cards) and after (the second's), for each model both hold. A dataset counts as
    changed where the later card scored it afresh: not carried from the earlier revision (`hteb-score
    carry`). The subsets each later figure rests on come from its card's coverage."""
    before, after = ({m.model: m for m in group} for group in cards)
    chance = chance_rows(list(after.values()))
    models = sorted((m for m in after if m in before), key=lambda m: m in chance)  # chance rows last
    if not models:
        raise ContractError("table noise-before-after: no model has cards in both folders")
    first = after[models[0]].card or {}
    carried = {f["dataset"] for f in first.get("flags", []) if f["code"] == "carried_from_revision"}
    rests = {
        (c["dataset"], c["transformation"]): f"{c['subsets_scored']} of {c['subsets_total']}"
        for c in first.get("coverage", [])
    }
    datasets = [d for d in after[models[0]].original if d not in carried]
    rules = [t for t in after[models[0]].taxonomy.transformations_of("noise") if t in after[models[0]].transformations]
    lines = [
        md_row(["dataset", "rule", "subsets (after)", *(f"{_row(m, chance)} before -> after" for m in models)]),
        "|---" * (3 + len(models)) + "|",
    ]

    def delta(scores: ModelScores, dataset: str, rule: str) -> str:
        value = scores.transformations.get(rule, {}).get(dataset)
        return "-" if value is None else number(value - scores.original[dataset], sign=True)

    for dataset in datasets:
        for rule in rules:
            lines.append(
                md_row(
                    [
                        md_text(dataset),
                        heading(rule),
                        rests.get((dataset, rule), "-"),
                        *(f"{delta(before[m], dataset, rule)} -> {delta(after[m], dataset, rule)}" for m in models),
                    ]
                )
            )
    return "\n".join(lines)


def noise_item_cosines(comparison: Comparison) -> str:
    """Per Noise rule, per model: how far each text's embedding moves (the cards' per-item measures, label
    free, over the texts each rule changed): the mean over datasets of the mean drift (1 - cosine) between a
    transformed text's embedding and its original's, of the share of texts within the pass drift, and of
    that share on the model's own scale (the drift calibrated by its baseline between unrelated texts);
    rules that move embeddings most first."""
    cards = {row.model: _card_of(comparison, row.model) for row in comparison.leaderboard}
    measured = {m: c.get("item_measures") for m, c in cards.items()}
    if not all(measured.values()):
        raise ContractError("table noise-item-cosines: a card has no per-item measures (scored before them)")
    models = list(cards)
    block: dict[str, Any] = measured[models[0]] or {}

    def mean(model: str, rule: str, key: str) -> float | None:
        values = [
            v[key]
            for v in measured[model]["per_transformation"].get(rule, {}).values()  # type: ignore[index]
            if v[key] is not None
        ]
        return float(sum(values) / len(values)) if values else None

    def share(value: float | None) -> str:
        return "-" if value is None else f"{value:.0%}"

    rules = sorted(
        (
            t
            for t in comparison.taxonomy.transformations_of("noise")
            if all(t in measured[m]["per_transformation"] for m in models)  # type: ignore[index]
        ),
        key=lambda t: -sum(mean(m, t, "drift_mean") or 0.0 for m in models),
    )
    lines = [
        md_row(["rule", *(f"{_row(m, comparison.chance)} drift / pass / calibrated pass" for m in models)]),
        "|---" * (1 + len(models)) + "|",
    ]
    for rule in rules:
        lines.append(
            md_row(
                [
                    heading(rule),
                    *(
                        f"{number(mean(m, rule, 'drift_mean'), 3)} / "
                        f"{share(mean(m, rule, 'pass_rate'))} / "
                        f"{share(mean(m, rule, 'calibrated_pass_rate'))}"
                        for m in models
                    ),
                ]
            )
        )
    recorded = all(
        v["unchanged_share"] is not None
        for m in models
        for by_dataset in (measured[m] or {})["per_transformation"].values()
        for v in by_dataset.values()
    )
    counted = (
        "over the texts the rule changed"
        if recorded
        else "over every transformed text: these cards' parts "
        "were scored before the scorer recorded which texts changed"
    )
    lines.append(
        f"\n(drift: 1 - cosine, {counted}; pass: drift <= {block['pass_drift']}; "
        f"calibrated pass: drift <= {block['calibrated_pass']} of the model's baseline drift between "
        "unrelated texts; each figure the mean over the datasets of the card's per-dataset value)"
    )
    return "\n".join(lines)


def pair_datasets(comparison: Comparison) -> str:
    """Per column, each pair of models on each dataset over its items (report/compare/per_dataset.py): on how many
    datasets it is separated and for whom, with the differences (a model against a chance row too, labelled)."""
    found = per_dataset_tables(comparison.per_dataset, ranked_label, lambda model: _row(model, comparison.chance))
    if not found:
        raise ContractError("table pair-datasets: no pair has per-item outcomes on both sides (outcomes.parquet)")
    return "\n".join(
        line.replace("### ", "**", 1) + "**" if line.startswith("### ") else line for line in found
    ).rstrip("\n")


def _card_of(comparison: Comparison, model: str) -> dict[str, Any]:
    scores = next(m for m in comparison.models if m.model == model)
    return scores.card or {}


#: How much of a text an example row quotes (the whole text is in items.parquet).
QUOTED_CHARS = 160


def noise_item_examples(comparison: Comparison) -> str:
    """Per Noise rule, the item whose embedding moved most (lowest cosine) among the explorer rows of the
    cards' items.parquet, with its original and transformed text quoted (escaped, cut at QUOTED_CHARS)."""
    rows = [
        r
        for m in comparison.models
        if m.model not in comparison.chance  # random vectors move every text
        for r in (m.items or [])
        if r["transformation"] in comparison.taxonomy.transformations_of("noise")
    ]
    if not rows:
        raise ContractError("table noise-item-examples: no card has explorer rows (items.parquet) for a Noise rule")
    lines = [md_row(["rule", "model", "dataset", "cosine", "original", "transformed"]), "|---" * 6 + "|"]
    for rule in comparison.taxonomy.transformations_of("noise"):
        mine = [r for r in rows if r["transformation"] == rule]
        if not mine:
            continue
        worst = min(mine, key=lambda r: (r["cosine"], r["model"], r["dataset"], r["item_id"], r["field"]))
        quote = [
            md_text(t if len(t) <= QUOTED_CHARS else t[:QUOTED_CHARS] + "...")
            for t in (worst["original_text"], worst["transformed_text"])
        ]
        lines.append(
            md_row(
                [heading(rule), _name(worst["model"]), md_text(worst["dataset"]), number(worst["cosine"], 3), *quote]
            )
        )
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
                raise ContractError(
                    f"table unit-times: the work unit {terminal(' + '.join(datasets))} of "
                    f"{terminal(model)} has no total time ({TIMING_TOTAL})"
                )
            rows.setdefault(datasets, {})[model] = part
    lines = [md_row(["unit", *map(md_text, models)]), "|---" * (1 + len(models)) + "|"]
    for datasets in sorted(rows):
        held = rows[datasets]
        lines.append(
            md_row(
                [
                    md_text(" + ".join(datasets)),
                    *(
                        _minutes(held[m].timings[TIMING_TOTAL]) + _cached([held[m]]) if m in held else "-"
                        for m in models
                    ),
                ]
            )
        )
    lines.append(
        md_row(
            [
                "in all",
                *(
                    f"{_minutes(sum(p.timings[TIMING_TOTAL] for p in parts[m]))} over {count(len(parts[m]), 'unit')}"
                    f"{_cached(parts[m])}"
                    for m in models
                ),
            ]
        )
    )
    return "\n".join(lines)


def comparison_of(folder: Path) -> Comparison:
    """The comparison of the cards in `folder` (`*/result_card.json`), as `hteb-score compare` makes it with
    its defaults (`make findings` writes the committed ones so: tests/score/report/test_committed_findings.py)."""
    return compare(load_folder(folder))


def parts_of(folder: Path) -> dict[str, list[ScorePart]]:
    """The committed work units of `folder`'s round, by model (`MODEL/*.hteb_part.json.gz`), models in name
    order: those in the tree and, for each model whose parts left it, those at the commit the round's
    `parts-at` names (report/site/parts_at.py); each part checked as `merge` checks it (read_part), and a
    model's parts as parts of one run: the same identity (model, revision, options) and each dataset in one of them."""
    found: dict[str, list[tuple[str, ScorePart]]] = {}
    for path in sorted(Path(folder).glob(f"*/*{PART_SUFFIX}")):
        found.setdefault(path.parent.name, []).append((str(path), read_part(path)))
    found.update(parts_left(Path(folder), in_tree=set(found)))
    if not found:
        raise HtebError(f"{folder}: no work units (MODEL/*.hteb_part.json.gz), here or at its round's parts-at")
    for held in found.values():
        _one_run(held)
    return {model: [part for _, part in found[model]] for model in sorted(found)}


def _one_run(held: Sequence[tuple[str, ScorePart]]) -> None:
    first, seen = held[0][1].identity.to_dict(), dict[str, str]()
    for name, part in held:
        differs = difference(first, part.identity.to_dict())
        if differs is not None:
            raise HtebError(f"{held[0][0]} and {name} differ in identity.{differs}: they are not work units of one run")
        for unit in part.units:
            if unit.dataset in seen:
                raise HtebError(f"{seen[unit.dataset]} and {name} both hold units.{unit.dataset}: a unit is timed once")
            seen[unit.dataset] = name


@dataclass(frozen=True)
class Table:
    """A generated table: what it is read from (a folder's cards or parts; with `folders` > 1, that many
    folders named in the marker, comma-separated) and how it is rendered."""

    read: Callable[[Any], Any]
    render: Callable[[Any], str]
    folders: int = 1


TABLES: Registry[Table] = Registry(
    "findings table",
    entries={
        "noise-models": Table(comparison_of, noise_models),
        "noise-effects": Table(comparison_of, noise_effects),
        "model-groups": Table(comparison_of, model_groups),
        "noise-subsets": Table(comparison_of, noise_subsets),
        "unit-times": Table(parts_of, unit_times),
        "noise-before-after": Table(cards_of, noise_before_after, folders=2),
        "noise-item-cosines": Table(comparison_of, noise_item_cosines),
        "pair-datasets": Table(comparison_of, pair_datasets),
        "noise-item-examples": Table(comparison_of, noise_item_examples),
        "pair-power": Table(comparison_of, lambda comparison: power_markdown(comparison.pairwise)),
        "sensitivity-models": Table(sensitivity_cards, sensitivity_models),
        "sensitivity-datasets": Table(sensitivity_cards, sensitivity_datasets),
        "sensitivity-top1": Table(sensitivity_cards, sensitivity_top1),
        "sensitivity-robustness": Table(sensitivity_and_noise, sensitivity_robustness, folders=2),
    },
)


#: what folders gave a reader (a comparison, parts), by (reader, the folders' paths)
Readings = dict[tuple[Callable[[Any], Any], tuple[Path, ...]], Any]


def update_tables(text: str, base: Path, read: Readings | None = None) -> str:
    """`text` with every marked table rendered anew from its folder's cards or parts (relative to `base`),
    each folder read once per reader; `read` keeps the readings for the next page (`hteb-score tables`
    gives findings.md and comparing.md one, so a comparison both draw on is bootstrapped once)."""
    read = {} if read is None else read

    def render(match: re.Match[str]) -> str:
        table = TABLES.get(match["name"])
        folders = tuple(base / f for f in match["folder"].split(","))
        if len(folders) != table.folders:
            raise ContractError(
                f"table {match['name']} is read from {table.folders} folder(s), comma-separated; "
                f"the marker names {len(folders)}"
            )
        key = (table.read, folders)
        if key not in read:
            read[key] = table.read(folders[0] if table.folders == 1 else list(folders))
        return match.group(1) + table.render(read[key]) + "\n" + match.group(5)

    updated, n = _MARKED.subn(render, text)
    if n == 0:
        raise ContractError("no generated table in it (<!-- hteb:table NAME CARDS --> ... <!-- /hteb:table -->)")
    return updated
