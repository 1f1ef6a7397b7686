"""The leaderboard page's data (`hteb-score leaderboard`): every view the page can show, computed here
from the committed result cards, so the page's script only looks values up and never does statistics.

A view is a scope (all datasets, the datasets with texts in one language, or one dataset) and a score
column (Original, an axis, a transformation). Per view and model: the mean score over the scope's
datasets, its delta from Original there, the point rank and, where the scope holds two datasets or
more, the rank interval and tie groups of `report.pairwise.rank_models` (Wilcoxon, Hodges-Lehmann,
Shaffer over the pairs) with the pairs' tests, for the two models a reader pins side by side. The model
facts (parameters, embedding dimension, maximum tokens, licence, seconds to embed 1,000 texts) come
from each card where it records them (`model.embedding_dim`, `encode.max_seq_length`, `timings`), else
from the facts file `make leaderboard` writes from tests/models.py's table; none is typed here. What each
dataset's figure of a transformation rests on (subsets scored of all, those left out and why) comes from
the cards' `coverage`, so the page and the CSV say where a figure averages fewer than all subsets.
A null model's card beside the real ones is a chance row (report/compare/chance.py): its scores and deltas are
shown, it takes no rank, interval or group (the pairs' tests keep it, as `hteb-score compare` does), and
needs no facts in the facts file. Given a folder of cards scored on a Sensitivity revision, the page also shows
each model's minimal-pair figures beside its robustness (report/site/sensitivity_board.py), never in a total.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.citations import joined_bibliography
from hteb_contract.errors import HtebError
from hteb_contract.field_values import NUMBER, FieldCheck
from hteb_contract.specs.datasets import dataset_specs
from hteb_contract.specs.transformations import transformation_spec

from hteb_score import CARD_FILE
from hteb_score.report.compare.chance import chance_rows
from hteb_score.report.compare.coverage_rows import coverage_rows
from hteb_score.report.formatting import column_label, heading
from hteb_score.report.compare.inputs import check_inputs, load_card
from hteb_score.report.compare.pairwise import ORIGINAL, rank_models
from hteb_score.report.provenance import made_from
from hteb_score.report.site.published import published_view
from hteb_score.report.site.sensitivity_board import sensitivity_view
from hteb_score.scoring.model_scores import ModelScores, joined_taxonomy

ALL = "all"
#: A model's page as the facts file may give it: an https address with nothing a page would read as markup.
PAGE_URL = re.compile(r"https://[A-Za-z0-9.-]+(/[^\s\"'<>\\`]*)?")
UNKNOWN_LANGUAGE = "und"
#: The facts a model's row shows, in the page's order, with their headings.
FACTS = {
    "parameters": "Params",
    "embedding_dim": "Dim.",
    "max_tokens": "Max tokens",
    "licence": "Licence",
    "seconds_per_1000": "s / 1,000 texts",
}


def _is_count(value: Any) -> bool:
    return NUMBER.check(value) and isinstance(value, int) and value > 0


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


#: What each key of a facts row must hold where it is not null (tests/models.py `facts` writes them): the page
#: and the CSV show a value as it is, so text, a list or true where a count belongs would be shown as a fact.
FACT_VALUES = {
    "model": FieldCheck(_is_name, "a model id (a non-empty string)"),
    "name": FieldCheck(_is_name, "a non-empty string"),
    "parameters": FieldCheck(_is_count, "a whole number above 0"),
    "embedding_dim": FieldCheck(_is_count, "a whole number above 0"),
    "max_tokens": FieldCheck(_is_count, "a whole number above 0"),
    "licence": FieldCheck(_is_name, "a non-empty string"),
    "seconds_per_1000": FieldCheck(lambda v: NUMBER.check(v) and v > 0, "a finite number above 0"),
    "cased": FieldCheck(lambda v: isinstance(v, bool), "true, false or null"),
    "page": FieldCheck(lambda v: isinstance(v, str) and bool(PAGE_URL.fullmatch(v)), "an https address"),
}


def read_facts(path: Path) -> dict[str, dict[str, Any]]:
    """The facts file (a JSON list of objects with `model`, the id the cards use): by model. A key it does not
    know (a misspelt fact would be shown as unknown), a value of the wrong kind and a model given twice (the
    last row would win) are one line each."""
    rows = json_input.read(path, HtebError)
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "model" in r for r in rows):
        raise HtebError(f'{path}: expected a list of objects, each with a "model"')
    lines: dict[str, int] = {}
    for line, row in enumerate(rows, start=1):
        where = f"{path}: row {line}" + (f" (model {row['model']!r})" if isinstance(row["model"], str) else "")
        for key, value in row.items():
            if key not in FACT_VALUES:
                raise HtebError(f"{where}: {key!r} is no fact the page shows (known: {', '.join(FACT_VALUES)})")
            if (value is not None or key == "model") and not FACT_VALUES[key].check(value):
                raise HtebError(f"{where}: {key} {reprlib.repr(value)} is not {FACT_VALUES[key].must}")
        if row["model"] in lines:
            raise HtebError(f"{where}: the model's facts are given in row {lines[row['model']]} too; give them once")
        lines[row["model"]] = line
    return {row["model"]: row for row in rows}


#: The CSV's columns of a Sensitivity row (a share from 0 to 1, its exact interval, items and reading).
SENSITIVITY_FIELDS = ("accuracy", "ci_low", "ci_high", "items", "reading")

#: How close to Original a rule's figure is, in points, for the page to call it unchanged: its precision.
IMMUNE_WITHIN = 0.01


def immune_datasets(
    model: ModelScores, columns: Sequence[str], datasets: Sequence[str], cased: bool | None
) -> dict[str, list[str]]:
    """Per rule that changes case alone (its row `needs: case`: random capitalisation), the datasets where its
    figure is the model's Original (within IMMUNE_WITHIN) for a model whose tokenizer lowercases (`cased` False):
    the rule changed (almost) none of that model's input (only texts whose capitals do not lowercase back
    differ), so the figure says nothing of robustness: immune by construction. The page marks a cell when every
    dataset in view is listed."""
    if cased is not False:
        return {}
    immune = {
        c: [d for d in datasets if abs(model.column(c)[d] - model.original[d]) < IMMUNE_WITHIN]
        for c in columns
        if c in model.transformations and transformation_spec(c).needs == "case"
    }
    return {c: found for c, found in immune.items() if found}


def card_facts(card: Mapping[str, Any], table: Mapping[str, Any]) -> dict[str, Any]:
    """A model's facts: the card's where it records them, else the facts table's (None: known to neither);
    `sources` says which each came from."""
    timings, encode = card.get("timings") or {}, card.get("encode") or {}
    encoded = timings.get("texts_encoded") or 0
    from_card = {
        "embedding_dim": card["model"].get("embedding_dim"),
        "max_tokens": encode.get("max_seq_length"),
        "seconds_per_1000": 1000 * timings["embed_s"] / encoded if encoded and "embed_s" in timings else None,
    }
    facts: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for key in FACTS:
        if from_card.get(key) is not None:
            facts[key], sources[key] = from_card[key], "card"
        elif table.get(key) is not None:
            facts[key], sources[key] = table[key], "tests/models.py"
        else:
            facts[key] = None
    return {**facts, "sources": sources}


def _coverage(
    models: Sequence[ModelScores], columns: Sequence[str], datasets: Sequence[str]
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per dataset and transformation column: what its figure rests on, one entry per seed and distinct
    statement, naming the models whose cards make it (cards made before coverage was recorded give none)."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    rows = [
        r
        for r in coverage_rows(((m.model, m.card) for m in models), every=True)
        if r.dataset in datasets and r.transformation in columns
    ]
    for row in sorted(rows, key=lambda r: (r.dataset, r.transformation)):  # stable: each column's seeds as found
        out.setdefault(row.dataset, {}).setdefault(row.transformation, []).append(
            {
                "seed": row.seed,
                "subsets_scored": row.subsets_scored,
                "subsets_total": row.subsets_total,
                "changed_share": row.changed_share,
                "flagged_unchanged": row.flagged_unchanged,
                "left_out": [{"subset": s, "reason": r} for s, r in zip(row.left_out, row.reasons)],
                "models": list(row.models),
            }
        )
    return out


def _views(
    models: Sequence[ModelScores], columns: Sequence[str], datasets: Sequence[str], chance: Mapping[str, str]
) -> dict[str, Any]:
    """Per column: each model's mean, delta from Original and point rank over `datasets`; with two
    datasets or more, intervals, groups and the pairs' tests too, as model against model ranks them
    (`rank_models`): a chance row has its mean and delta only, counts in no model's rank and sits in no group,
    and its pairs follow the models'."""
    out: dict[str, Any] = {}
    for column in columns:
        scores = {
            m.model: {d: (m.original if column == ORIGINAL else m.column(column))[d] for d in datasets} for m in models
        }
        tested = len(datasets) > 1
        ranking = rank_models(scores, column, chance=chance) if tested else None
        means = ranking.scores if ranking else {m: sum(v.values()) / len(v) for m, v in scores.items()}
        ranked = [m.model for m in models if m.model not in chance]
        ranks = ranking.ranks if ranking else {m: 1 + sum(means[o] > means[m] for o in ranked) for m in ranked}
        rows = {}
        for m in models:
            mean = means[m.model]
            original = sum(m.original[d] for d in datasets) / len(datasets)
            row: dict[str, Any] = {"score": mean, "delta": None if column == ORIGINAL else mean - original}
            if m.model not in chance:
                row["rank"] = ranks[m.model]
                if ranking is not None:
                    low, high = ranking.intervals[m.model]
                    row.update(rank_low=low, rank_high=high, group=ranking.letters[m.model])
            rows[m.model] = row
        view: dict[str, Any] = {"models": rows}
        if ranking is not None:
            view["groups"] = ranking.groups()
            view["pairs"] = [
                {
                    k: p.to_json()[k]
                    for k in (
                        "first",
                        "second",
                        "separated",
                        "winner",
                        "hl_shift",
                        "ci_low",
                        "ci_high",
                        "p_value",
                        "p_shaffer",
                        "n_datasets",
                    )
                }
                for p in ranking.all_pairs
            ]
        out[column] = view
    return out


def dataset_languages(models: Sequence[ModelScores], datasets: Sequence[str]) -> tuple[dict[str, list[str]], list[str]]:
    """Each dataset's languages as its cards' revision records them (`dataset.languages`), and the datasets no card
    records them for (cards scored before the field), whose languages this release's dataset table gives (`und`
    where it has no row). Cards that record other languages for one dataset are refused in one line."""
    recorded: dict[str, tuple[list[str], str]] = {}
    for m in models:
        for name, codes in ((m.card or {}).get("dataset", {}).get("languages") or {}).items():
            if name in recorded and recorded[name][0] != codes:
                raise HtebError(
                    f"{recorded[name][1]} and {m.source} record other languages for {name} "
                    f"({' '.join(recorded[name][0])} vs {' '.join(codes)}): cards of different revisions"
                )
            recorded.setdefault(name, (list(codes), m.source))
    specs = {s.name: s for s in dataset_specs()}
    from_table = [d for d in datasets if d not in recorded]
    languages = {
        d: recorded[d][0] if d in recorded else list(specs[d].languages) if d in specs else [UNKNOWN_LANGUAGE]
        for d in datasets
    }
    return languages, from_table


def leaderboard_data(
    folder: Path, facts: Mapping[str, Mapping[str, Any]], sensitivity: Path | None = None
) -> dict[str, Any]:
    """Everything the page shows, from the cards `folder/*/result_card.json` and the facts table, and the
    Sensitivity cards of a folder of cards scored on a Sensitivity revision where one is given."""
    paths = sorted(Path(folder).glob(f"*/{CARD_FILE}"))
    if not paths:
        raise HtebError(f"{folder}: no result cards (*/{CARD_FILE})")
    models = [load_card(p) for p in paths]
    # the checks compare makes of its inputs: one row per model id, one dataset revision and protocol, each
    # card's aggregates its own score records'; what they only warn of is said by the command (`notes`)
    notes = check_inputs(models, force=False)
    chance = chance_rows(models)
    models = sorted(models, key=lambda m: m.model in chance)  # chance rows last
    revisions = {m.card["dataset"]["label"] for m in models if m.card is not None}
    shared = sorted(set.intersection(*(set(m.original) for m in models)))
    if not shared:
        raise HtebError(f"{folder}: the cards share no dataset")
    columns = [ORIGINAL]
    axes: dict[str, list[str]] = {ORIGINAL: [ORIGINAL]}
    taxonomy = joined_taxonomy(models)
    for axis, rules in taxonomy.members.items():
        held = [t for t in rules if all(set(shared) <= set(m.transformations.get(t, {})) for m in models)]
        if held and all(set(shared) <= set(m.axes.get(axis, {})) for m in models):
            axes[axis] = [axis, *held]
            columns += [axis, *held]
    languages, from_table = dataset_languages(models, shared)
    scopes: dict[str, list[str]] = {ALL: shared}
    for language in sorted({code for codes in languages.values() for code in codes}):
        scopes[f"language:{language}"] = [d for d in shared if language in languages[d]]
    scopes.update({f"dataset:{d}": [d] for d in shared})
    computed: dict[tuple[str, ...], dict[str, Any]] = {}
    views = {}
    for scope, held_datasets in scopes.items():
        key = tuple(held_datasets)
        if key not in computed:
            computed[key] = _views(models, columns, held_datasets, chance)
        views[scope] = {"datasets": held_datasets, "columns": computed[key]}
    return {
        "revision": ", ".join(sorted(revisions)),
        "citation": joined_bibliography([m.card for m in models if m.card is not None]),
        "provenance": made_from([m.card for m in models if m.card is not None]),
        "axes": {a: {"label": "Original" if a == ORIGINAL else column_label(a), "columns": c} for a, c in axes.items()},
        "labels": {
            c: "Original" if c == ORIGINAL else heading(c) if c in taxonomy.transformations else column_label(c)
            for c in columns
        },
        "datasets": [
            {"name": d, "languages": languages[d], "task_type": models[0].task_types.get(d, "")} for d in shared
        ],
        "languages_from_table": from_table,
        "models": [
            {
                "model": m.model,
                "kind": "chance" if m.model in chance else "model",
                "label": chance.get(m.model),
                "facts": card_facts(m.card or {"model": {}}, facts.get(m.model, {})),
                "page": facts.get(m.model, {}).get("page"),
                "immune": immune_datasets(m, columns, shared, facts.get(m.model, {}).get("cased")),
                "scores": {c: {d: (m.original if c == ORIGINAL else m.column(c))[d] for d in shared} for c in columns},
            }
            for m in models
        ],
        "views": views,
        "notes": notes,
        "coverage": _coverage(models, columns, shared),
        "published": published_view(
            {
                m.model: computed[tuple(shared)][ORIGINAL]["models"][m.model]["score"]
                for m in models
                if m.model not in chance
            }
        ),
        "sensitivity": None if sensitivity is None else sensitivity_view(sensitivity, [m.model for m in models]),
    }


def axis_deltas(data: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per axis of the board other than Original, each model's delta over all the board's datasets."""
    columns = data["views"][ALL]["columns"]
    return {
        axis: {model: row["delta"] for model, row in columns[axis]["models"].items()}
        for axis in data["axes"]
        if axis != ORIGINAL
    }


def csv_rows(data: Mapping[str, Any]) -> list[list[str]]:
    """The page's CSV: one row per model, dataset and column (with the model's facts and, where its card
    records it, the subsets the figure rests on and those left out), then per model and column its mean
    over all datasets with its rank, interval and group; `kind` says whether the row is a model's or the
    chance row's (unranked), or a row of the paper's published tables (`published`, dataset `paper:english` or
    `paper:multilingual`: its scope); last, per model scored on a Sensitivity revision and minimal pair (column
    `sensitivity:PAIR`, dataset the Sensitivity revision's label), its accuracy as a share from 0 to 1 (not
    points, hence a column of its own) with its exact interval, item count and reading."""
    facts = list(FACTS)
    header = [
        "model",
        "kind",
        "dataset",
        "languages",
        "column",
        "score",
        "delta",
        "rank",
        "rank_low",
        "rank_high",
        "group",
        "subsets",
        "left_out",
        *facts,
        *SENSITIVITY_FIELDS,
    ]
    rows = [header]
    languages = {d["name"]: " ".join(d["languages"]) for d in data["datasets"]}

    def cell(value: Any) -> str:
        return "" if value is None else repr(value) if isinstance(value, float) else str(value)

    none = [""] * len(facts)
    for scope, table in data["published"]["scopes"].items():  # the paper's totals, kind `published`
        for row in table["rows"]:
            for column in data["published"]["columns"]:
                delta = None if column == "original" else row[column] - row["original"]
                rows.append(
                    [row["model"], "published", f"paper:{scope}", "", column, cell(row[column]), cell(delta)]
                    + [""] * 6
                    + none
                )
    for model in data["models"]:
        own = [cell(model["facts"][f]) for f in facts]
        for column, scores in model["scores"].items():
            view = data["views"][ALL]["columns"][column]["models"][model["model"]]
            rows.append(
                [
                    model["model"],
                    model["kind"],
                    ALL,
                    "",
                    column,
                    cell(view["score"]),
                    cell(view["delta"]),
                    cell(view.get("rank")),
                    cell(view.get("rank_low")),
                    cell(view.get("rank_high")),
                    cell(view.get("group")),
                    "",
                    "",
                    *own,
                ]
            )
            for dataset, value in scores.items():
                original = model["scores"][ORIGINAL][dataset]
                stated = [s for s in data["coverage"].get(dataset, {}).get(column, ()) if model["model"] in s["models"]]
                rows.append(
                    [
                        model["model"],
                        model["kind"],
                        dataset,
                        languages[dataset],
                        column,
                        cell(value),
                        "" if column == ORIGINAL else cell(value - original),
                        "",
                        "",
                        "",
                        "",
                        "; ".join(f"{s['subsets_scored']} of {s['subsets_total']}" for s in stated),
                        "; ".join(" ".join(e["subset"] for e in s["left_out"]) for s in stated),
                        *own,
                    ]
                )
    rows = [row + [""] * (len(header) - len(row)) for row in rows]
    if data["sensitivity"] is not None:
        view = data["sensitivity"]
        for model in view["models"]:
            for pair, figure in model["pairs"].items():
                ci = figure["ci"] or (None, None)
                blank = [""] * (len(header) - len(SENSITIVITY_FIELDS) - 6)
                rows.append(
                    [model["model"], model["kind"], view["revision"], "", f"sensitivity:{pair}", ""]
                    + blank
                    + [
                        cell(figure["accuracy"]),
                        cell(ci[0]),
                        cell(ci[1]),
                        str(figure["items"]),
                        figure["reading"] or "",
                    ]
                )
    return rows
