"""The inputs of a comparison: result cards and plain scores tables (mteb result folders: mteb_interop/results.py),
all read into `ModelScores`.

Missing axis and HTEB scores are derived with `hteb_score.scoring.aggregate` (axis = mean of its
transformations; HTEB = mean of the three axes, only where all three are known), so a paper's
tables and our own cards are compared the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from hteb_contract.common import csv_input, json_input
from hteb_contract.errors import ContractError, HtebError
from hteb_contract.common.registry import Registry
from hteb_contract.parquet_io import read_parquet_table, table_rows
from hteb_contract.specs.datasets import dataset_specs
from hteb_contract.tasks import task_type
from hteb_contract.taxonomy import INSTALLED, recorded_in
from hteb_contract.validation import validate
from hteb_score.encoding.backends import precision_suffix
from hteb_score.mteb_interop.results import load_mteb_results
from hteb_score.report.card.card_checks import check_card, check_items
from hteb_score.evaluators.outcomes import LABEL_MEASURES, MEASURES, Outcomes
from hteb_score.report.card.outputs import ITEMS_FILE, ITEMS_SCHEMA, OUTCOMES_FILE, OUTCOMES_SCHEMA
from hteb_score.scoring.aggregate import aggregate, check_transformation
from hteb_score.scoring.model_scores import HTEB, ModelScores, joined_taxonomy
from hteb_score.scoring.part_checks import checked_score
from hteb_score.scoring.score_record import POINTS, ScoreRecord

TABLE_REQUIRED = ("model", "dataset", "original")
#: What every input of a comparison must share: ModelScores attribute (and table column) -> its name in messages.
MUST_AGREE = {"revision": "dataset revisions", "protocol": "evaluation protocols"}


def selection_suffix(selection: dict) -> str:
    """How a card's row is told apart from the same model's unfiltered run: " [judge>=3]",
    " [preset minimal]"; empty for a run of everything. A filtered and an unfiltered card of one
    model are two rows of the leaderboard, so the shift the filter causes is read off them."""
    parts = []
    if selection.get("preset") not in (None, "full"):
        parts.append(f"preset {selection['preset']}")
    if selection.get("min_judge") is not None:
        parts.append(f"judge>={selection['min_judge']:g}")
    return f" [{', '.join(parts)}]" if parts else ""


def load_card(path: Path) -> ModelScores:
    """A result card (validated against the card schema, its records and mteb files checked:
    card_checks.py) as ModelScores, from its per-dataset aggregates."""
    card = _read_json(path)
    validate("result_card", card, what=str(path))
    check_card(card, Path(path))
    name = card["model"]["model_id"] + selection_suffix(card.get("selection") or {}) + precision_suffix(card["encode"])
    taxonomy = recorded_in(card)
    scores = ModelScores(name, str(path), card["dataset"]["revision"], taxonomy, card=card, protocol=card["protocol"])
    for record in card["scores"]:
        scores.task_types[record["dataset"]] = record["task_type"]
    for row in card["aggregates"]["per_dataset"]:
        dataset = row["dataset"]
        scores.original[dataset] = float(row["original"])
        for t, entry in row["transformations"].items():
            check_transformation(t, taxonomy, where=str(path))
            scores.transformations.setdefault(t, {})[dataset] = float(entry["mean"])
    scores.fill_derived()
    statistics = card.get("statistics") or {}
    scores.drift = statistics.get("drift") or None
    scores.items = _read_items(Path(path).parent / ITEMS_FILE)
    if scores.items is not None:
        check_items(scores.items, card, Path(path).parent / ITEMS_FILE)
    scores.outcomes = read_outcomes(Path(path).parent / OUTCOMES_FILE)
    return scores


def load_folder(folder: Path) -> list[ModelScores]:
    """The cards of `folder` (`*/result_card.json`), each as `load_card` reads it, in the order of the shell's
    glob in C collation (the Makefile's: "random-seed-1/" before "random/"); none is one line."""
    cards = sorted(Path(folder).glob("*/result_card.json"), key=str)
    if not cards:
        raise HtebError(f"{folder}: no result cards (*/result_card.json)")
    return [load_card(path) for path in cards]


#: The columns a writer leaves null (outputs.py): an outcome's other kind of value and an original's seed; an
#: item's verdict its measure does not make (top-10 or pair order) and the judge's scores of an unrated item.
OUTCOMES_NULLABLE = ("seed", "gold", "predicted", "gold_label", "predicted_label")
ITEMS_NULLABLE = ("top10_changed", "order_flipped", "quality", "fluency")


def read_outcomes(path: Path) -> dict[tuple[str, str, int | None], Outcomes] | None:
    """Per variant, the per-item outcomes of the outcomes.parquet beside a card (None where there is none);
    damaged: one line."""
    if not path.is_file():
        return None
    columns = _read_typed(path, OUTCOMES_SCHEMA, OUTCOMES_NULLABLE).to_pydict()
    rows: dict[tuple[str, str, int | None], list[int]] = {}
    for at, variant in enumerate(zip(columns["dataset"], columns["transformation"], columns["seed"])):
        rows.setdefault(variant, []).append(at)
    out = {}
    for variant, positions in rows.items():
        measure = columns["measure"][positions[0]]
        labels = measure in LABEL_MEASURES
        gold, predicted = ("gold_label", "predicted_label") if labels else ("gold", "predicted")
        if (
            measure not in MEASURES
            or any(columns["measure"][i] != measure for i in positions)
            or any(columns[predicted][i] is None for i in positions)
        ):
            raise HtebError(
                f"{path}: {variant[0]}/{variant[1]}: its rows name no one known measure, or lack "
                "a prediction; the file is damaged"
            )
        out[variant] = Outcomes(
            measure, *(tuple(columns[c][i] for i in positions) for c in ("subset", "item_id", gold, predicted))
        )
    return out


def _read_items(path: Path) -> list[dict[str, Any]] | None:
    """The explorer's rows of the items.parquet beside a card (None where there is none); damaged: one line."""
    if not path.is_file():
        return None
    return table_rows(_read_typed(path, ITEMS_SCHEMA, ITEMS_NULLABLE), str(path))


def _kind(kind: pa.DataType) -> pa.DataType:
    """A column type up to its offsets' width: pandas and other writers store text as large_string, the same
    values as string."""
    return pa.string() if pa.types.is_large_string(kind) else kind


def _read_typed(path: Path, schema: pa.Schema, nullable: Collection[str]) -> pa.Table:
    """A parquet file written beside a card: `schema`'s columns of exactly its types (a cast would read text
    "0.5" as a number) and no null outside `nullable`; any other file (another file copied over it) is one line
    naming the column, never a KeyError or a wrong figure later."""
    table = read_parquet_table(path, str(path))
    for field in schema:
        if field.name not in table.column_names:
            raise HtebError(f"{path}: no column {field.name!r}; the file is damaged or another file")
        column = table.column(field.name)
        if _kind(column.type) != _kind(field.type):
            raise HtebError(f"{path}: column {field.name!r} is {column.type}, not {field.type}; the file is damaged")
        if column.null_count and field.name not in nullable:
            raise HtebError(f"{path}: column {field.name!r} holds {column.null_count} null(s); the file is damaged")
    return table.select(schema.names).cast(schema)


def _read_json(path: Path) -> Any:
    return json_input.read(Path(path), HtebError)


def _read_csv_rows(path: Path) -> list[dict[str, Any]]:
    return list(csv_input.read(Path(path), HtebError))


def _read_json_rows(path: Path) -> list[dict[str, Any]]:
    rows = _read_json(path)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ContractError(f"{path}: a JSON scores table must be a list of row objects")
    return rows


#: Scores-table readers by file suffix.
TABLE_READERS: Registry[Callable[[Path], list[dict[str, Any]]]] = Registry(
    "table format", entries={".csv": _read_csv_rows, ".json": _read_json_rows}
)


def load_scores_table(path: Path) -> list[ModelScores]:
    """A plain per-dataset scores table (CSV or JSON; columns in `hteb-score compare --help`) as one ModelScores per model."""
    path = Path(path)
    try:
        reader = TABLE_READERS.get(path.suffix.lower())
    except HtebError as err:
        raise HtebError(f"{path}: {err}") from None
    rows = reader(path)
    if not rows:
        raise ContractError(f"{path}: the scores table has no rows")
    columns = set().union(*(r.keys() for r in rows))
    missing = [c for c in TABLE_REQUIRED if c not in columns]
    if missing:
        raise ContractError(f"{path}: missing column(s) {', '.join(missing)}; required: {', '.join(TABLE_REQUIRED)}")
    axes, names = INSTALLED.members, INSTALLED.transformations  # a table names this release's columns
    score_columns = [c for c in (HTEB, *axes, *names) if c in columns]
    if not score_columns:
        raise ContractError(
            f"{path}: no HTEB score column; give at least one of {HTEB}, {', '.join(axes)} or a transformation ({', '.join(names)})"
        )
    known_types = {s.name: s.task_type for s in dataset_specs()}
    models: dict[str, ModelScores] = {}
    for line, row in enumerate(rows, start=1):
        name, dataset = str(row.get("model") or "").strip(), str(row.get("dataset") or "").strip()
        if not name or not dataset:
            raise ContractError(f"{path}: row {line} has an empty model or dataset")
        scores = models.setdefault(
            name,
            ModelScores(name, str(path), _text(row.get("revision")), INSTALLED, protocol=_text(row.get("protocol"))),
        )
        if dataset in scores.original:
            raise ContractError(f"{path}: row {line}: model {name!r} has dataset {dataset!r} twice")
        where = f"{path}: row {line}"
        named = _task_type(row, dataset, known_types.get(dataset), where)
        if named:
            scores.task_types[dataset] = named
        kind = named or known_types.get(dataset)  # the range its scores lie in
        original = checked_score(row.get("original"), kind, f"{where}: column 'original'", scale=POINTS, text=True)
        if original is None:
            raise ContractError(f"{where}: empty 'original' score")
        scores.original[dataset] = original
        for attribute, what in MUST_AGREE.items():
            given = _text(row.get(attribute))
            if given != getattr(scores, attribute):
                raise ContractError(
                    f"{path}: model {name!r} has rows on different {what} ({getattr(scores, attribute)} vs {given})"
                )
        for column in score_columns:
            value = checked_score(row.get(column), kind, f"{where}: column {column!r}", scale=POINTS, text=True)
            if value is None:
                continue
            if column == HTEB:
                scores.hteb[dataset] = value
            elif column in axes:
                scores.axes.setdefault(column, {})[dataset] = value
            else:
                scores.transformations.setdefault(column, {})[dataset] = value
    for scores in models.values():
        scores.fill_derived()
    return list(models.values())


def _text(value: Any) -> str | None:
    text = "" if value is None else str(value).strip()
    return text or None


def _task_type(row: dict[str, Any], dataset: str, known: str | None, where: str) -> str | None:
    """The task type a row names (None: none): a known one and, for a dataset HTEB's dataset table holds (of
    type `known`), that one, as its scores are held to its metric's range."""
    given = _text(row.get("task_type"))
    if given is None:
        return None
    try:
        task_type(given)
    except HtebError as err:
        raise ContractError(f"{where}: {err}") from None
    if known is not None and given != known:
        raise ContractError(f"{where}: task_type {given!r}, but {dataset} is of task type {known!r}")
    return given


def load_inputs(cards: Sequence[Path], tables: Sequence[Path], mteb_results: Sequence[Path] = ()) -> list[ModelScores]:
    """The models of result cards, then of scores tables, then of mteb result folders (their tasks
    named as the cards name the datasets), in the order given."""
    models = [load_card(path) for path in cards]
    for table in tables:
        models.extend(load_scores_table(table))
    mteb_tasks = {d: t for m in models if m.card for d, t in m.card["evaluation"].get("mteb_tasks", {}).items()}
    for folder in mteb_results:
        models.extend(load_mteb_results(folder, mteb_tasks))
    return models


def _disagreement(models: Sequence[ModelScores], attribute: str, what: str) -> str | None:
    """Why the inputs' `attribute` values make their scores incomparable, or None: values differ,
    or some inputs name one and others none (the check cannot be made for those)."""
    values = sorted({getattr(m, attribute) for m in models if getattr(m, attribute) is not None})
    if len(values) > 1:
        which = "; ".join(
            f"{value}: {', '.join(m.model for m in models if getattr(m, attribute) == value)}" for value in values
        )
        return f"the inputs were scored on different {what} ({which})"
    unnamed = [m.model for m in models if getattr(m, attribute) is None]
    if values and unnamed:
        return (
            f"{', '.join(unnamed)} state(s) no {what[:-1]}, so it cannot be checked against the others' ({values[0]})"
        )
    return None


def _first_difference(stated: Any, derived: Any, where: str) -> str | None:
    """The first place where two JSON values differ (numbers within float noise), or None."""
    if isinstance(stated, dict) and isinstance(derived, dict):
        for key in sorted(set(stated) | set(derived), key=str):
            if key not in stated or key not in derived:
                return f"{where}/{key}: {'missing' if key not in stated else 'not derived'}"
            found = _first_difference(stated[key], derived[key], f"{where}/{key}")
            if found:
                return found
        return None
    if isinstance(stated, list) and isinstance(derived, list):
        if len(stated) != len(derived):
            return f"{where}: {len(stated)} entries, the score records give {len(derived)}"
        return next(
            (
                found
                for i, (a, b) in enumerate(zip(stated, derived))
                if (found := _first_difference(a, b, f"{where}/{i}"))
            ),
            None,
        )
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (stated, derived))
    if numbers and math.isclose(stated, derived, rel_tol=1e-9, abs_tol=1e-9):
        return None
    return None if stated == derived else f"{where}: the card says {stated!r}, its score records give {derived!r}"


#: Aggregate fields a later hteb-score added (the paired headline): a card made before them lacks them, and is
#: checked on the fields it has (a comparison derives its figures from the per-dataset rows, not from these).
ADDED_LATER = ("axis_pairs", "datasets", "original_all", "hteb_datasets")


def aggregates_problem(model: ModelScores) -> str | None:
    """Why a card's aggregates are not those of its own score records (edited by hand, or by a
    writer that contradicts itself), or None: a comparison ranks by the aggregates."""
    if model.card is None:
        return None
    stated = model.card["aggregates"]
    derived = {
        k: v
        for k, v in aggregate([ScoreRecord.from_json(row) for row in model.card["scores"]], model.taxonomy).items()
        if k in stated or k not in ADDED_LATER
    }
    found = _first_difference(stated, derived, "aggregates")
    return None if found is None else f"{model.source}: {found}"


def coverage_problems(models: Sequence[ModelScores]) -> list[str]:
    """Axes whose column averages different transformations for different models (all eight
    against paraphrasing only): said, since the column then compares unlike things."""
    problems = []
    for axis, members in joined_taxonomy(models).members.items():
        covered = {m.model: tuple(t for t in members if m.transformations.get(t)) for m in models}
        kinds = {c for c in covered.values() if c}
        if len(kinds) > 1:
            which = "; ".join(f"{m}: {', '.join(c) or 'none'}" for m, c in covered.items())
            problems.append(
                f"axis {axis} averages different transformations per model ({which}); its column "
                "compares unlike selections"
            )
    return problems


def check_inputs(models: Sequence[ModelScores], *, force: bool) -> list[str]:
    """Refuse duplicate models, cards whose aggregates are not their score records', and inputs of
    different (or partly unknown) dataset revisions or protocols unless forced; return the warnings
    (forcing, unchecked inputs and differing selections among them)."""
    if not models:
        raise HtebError("nothing to compare: give result cards, --scores-table and/or --mteb-results")
    seen: dict[str, str] = {}
    for m in models:
        if m.model in seen:
            raise HtebError(f"model {m.model!r} appears twice ({seen[m.model]} and {m.source})")
        seen[m.model] = m.source
    warnings = []
    for m in models:
        problem = aggregates_problem(m)
        if problem is not None and not force:
            raise HtebError(
                f"{problem}: a card's aggregates must be its score records' - pass --force to compare the card as it is"
            )
        if problem is not None:
            warnings.append(f"FORCED: {problem}; the card's aggregates are compared as they are")
    warnings.extend(coverage_problems(models))
    for attribute, what in MUST_AGREE.items():
        problem = _disagreement(models, attribute, what)
        if problem is not None and not force:
            raise HtebError(f"{problem}; their scores are not comparable - pass --force to compare anyway")
        if problem is not None:
            warnings.append(f"FORCED: {problem}; scores are not strictly comparable")
        elif all(getattr(m, attribute) is None for m in models):
            warnings.append(f"no input names its {what[:-1]}: whether the scores are comparable was not checked")
    if len(models) < 2:
        warnings.append("only one model: rankings, Kendall tau and reliability need at least two (three) models")
    return warnings
