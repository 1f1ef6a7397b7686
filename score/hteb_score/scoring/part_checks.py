"""A part's content checked as a revision's is, before anything is built from it: a part is a file
from someone else's machine (a colleague's run, a repository, a resumed run folder), and the card
trusts every figure in it. Each unit must hold what its dataset's scoring wrote: score records (a
unit without one would vanish from every aggregate unflagged), every record, result, drift row and
flag of its own dataset and of a variant its run planned, each record equal to the evaluator result
it derives from (the main score and each subset's), every figure inside its metric's range, and
its item rows consistent with what they measure and with each other (row_checks.py). A refusal
names the part, the dataset and the field."""

from __future__ import annotations

import copy
import math
import reprlib
import sys
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import jsonschema
from jsonschema import Draft202012Validator, validators

from hteb_contract.errors import ContractError, HtebError
from hteb_contract.field_values import NUMBER
from hteb_contract.tasks import TASK_TYPES, task_type
from hteb_contract.validation import schema
from hteb_score.evaluators.outcomes import LABEL_MEASURES, MEASURES
from hteb_score.scoring.row_checks import check_rows

#: metrics that may be negative (correlations); every other main metric is a rate, in [0, 1]
SIGNED = ("spearman", "pearson")


def metric_range(metric: str) -> tuple[float, float]:
    """The values `metric` can take on the evaluators' 0-1 scale."""
    return (-1.0, 1.0) if any(word in metric for word in SIGNED) else (0.0, 1.0)


def score_range(kind: str | None) -> tuple[float, float]:
    """The range a main score of task type `kind` lies in on the 0-1 scale, the one a card's records are held
    to; of no known type, the widest of any type's."""
    kinds = [task_type(kind)] if kind else [row for _, row in TASK_TYPES.items()]
    ranges = [metric_range(k.metric) for k in kinds]
    return min(low for low, _ in ranges), max(high for _, high in ranges)


def checked_score(value: Any, kind: str | None, where: str, *, scale: float = 1.0, text: bool = False) -> float | None:
    """`value` as a score of task type `kind` on `scale` (None: none given), stated by someone else (a scores
    table, an mteb result): a finite number, not true or false, inside its metric's range; with `text`, text
    that reads as a number too (a table's cell). Anything else is one line naming `where`, never a figure of
    370 points."""
    if value is None or (text and isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value) if text and isinstance(value, str) else value
    except ValueError:
        number = None
    if isinstance(number, bool) or not isinstance(number, (int, float)):
        raise ContractError(f"{where} is not a number: {reprlib.repr(value)}")
    if not NUMBER.check(number):  # NaN, an infinity, an integer beyond a float
        raise ContractError(f"{where} is not finite: {reprlib.repr(value)}")
    low, high = (bound * scale for bound in score_range(kind))
    if not low <= number <= high:
        of = f"{kind}'s {task_type(kind).metric}" if kind else "any task type's score"
        raise ContractError(f"{where} is {reprlib.repr(value)}, outside {of} range [{low:g}, {high:g}]")
    return float(number)


#: The longest a run may say it took, in seconds (a year): a time beyond it, like a negative one, was written by hand.
LONGEST_S = 365 * 24 * 3600.0


def check_timings(timings: Any, where: str) -> None:
    """A part's or a card's `timings`: each a finite number of seconds (or a count), none negative, none beyond
    `LONGEST_S`; the one check of a stated time, whoever wrote it."""
    if not isinstance(timings, dict):
        raise HtebError(f"{where}: timings is {type(timings).__name__}, not an object")
    for key, value in timings.items():
        if not NUMBER.check(value):  # the contract's finite number: no bool, no text, no int beyond a float
            raise HtebError(f"{where}: timings.{key} is {reprlib.repr(value)}, not {NUMBER.must}")
        if not 0 <= value <= LONGEST_S:
            raise HtebError(
                f"{where}: timings.{key} is {reprlib.repr(value)}, outside [0, {LONGEST_S:.0f}] (a year in seconds)"
            )


def check_part(part: Any, name: str) -> None:
    """Every unit of `part` (a parts.ScorePart, called `name` in an error: parts.py imports this module)
    consistent with itself and its run's plan (its timings are checked where they are read, parts.read_part)."""
    planned = part.identity.planned
    for unit in part.units:
        where = f"{name}: unit {unit.dataset!r}"
        if unit.dataset not in planned:
            raise HtebError(f"{name}: dataset {unit.dataset} is not one of its run's planned datasets")
        if unit.task.get("name") != unit.dataset:
            raise HtebError(f"{where}: task.name is {unit.task.get('name')!r}; the unit was renamed")
        _check_unit(unit, where, part.identity.transformations, part.identity.seeds)
        if unit.hard and "hard_twins" not in part.identity.dataset:
            raise HtebError(f"{where}: hard_twins rows, but its identity names no --hard-twins-from revision")


def _check_unit(unit: Any, where: str, transformations: list[str] | None, seeds: list[int] | None) -> None:
    if not unit.scores:
        raise HtebError(f"{where}: no score records (scores is empty)")
    for field, datasets in (
        ("scores", {r.dataset for r in unit.scores}),
        ("results", {v[0] for v in unit.results}),
        ("drift", {row["dataset"] for row in unit.drift}),
        ("explorer", {row["dataset"] for row in unit.explorer}),
        ("flags", {f.dataset for f in unit.flags} - {None}),
    ):
        other = sorted(datasets - {unit.dataset})
        if other:
            raise HtebError(f"{where}: {field} hold dataset {other[0]!r}; the unit was renamed or spliced")
    _check_sensitivity(unit, where)
    for record in unit.scores:
        if record.task_type != unit.task.get("task_type"):
            raise HtebError(
                f"{where}: scores: task_type {record.task_type!r}, the unit's task is {unit.task.get('task_type')!r}"
            )
        if record.transformation != "original" and (
            (transformations is not None and record.transformation not in transformations)
            or (seeds is not None and record.seed not in seeds)
        ):
            raise HtebError(
                f"{where}: scores: variant {record.transformation}/{record.seed} is not one its run "
                "planned (transformations, seeds)"
            )
        _in_range(
            record.value,
            record.metric,
            f"{where}: scores: {record.transformation}/{record.seed} {record.subset} {record.metric}",
        )
        result = unit.results.get(record.variant)
        if result is None:
            if record.value is not None:  # an unscorable variant is written as null, with no result
                raise HtebError(
                    f"{where}: scores: {record.transformation}/{record.seed} has a value but no "
                    "evaluator result (results)"
                )
            continue
        derived = result.value if record.subset == "all" else result.subsets.get(record.subset, math.nan)
        if record.metric != result.main_metric or not _same(record.value, derived):
            raise HtebError(
                f"{where}: scores: {record.transformation}/{record.seed} {record.subset} says "
                f"{record.metric} {record.value}, its evaluator result (results) {result.main_metric} "
                f"{derived}"
            )
    recorded = {r.variant for r in unit.scores}
    for variant, result in unit.results.items():
        if variant not in recorded:
            raise HtebError(f"{where}: results: {variant[1]}/{variant[2]} has no score record")
        for subset, value in result.subsets.items():
            _in_range(value, result.main_metric, f"{where}: results: {variant[1]}/{variant[2]} {subset}")
        if result.outcomes is not None:
            _check_outcomes(result, f"{where}: results: {variant[1]}/{variant[2]}")
    check_rows(unit, where)


def _check_outcomes(result: Any, what: str) -> None:
    """A variant's per-item outcomes give each subset's main score (to the 5 decimals ranking metrics are
    rounded to): items that say otherwise were edited or belong to another run."""
    try:
        from_items = {subset: float(values[0]) for subset, values in result.outcomes.scores().items()}
    except (KeyError, ValueError, TypeError) as error:
        raise HtebError(f"{what}: outcomes cannot be read ({error})") from None
    for subset, value in result.subsets.items():
        derived = from_items.get(subset)
        if value is not None and (derived is None or not abs(derived - value) <= OUTCOME_TOLERANCE):
            raise HtebError(
                f"{what}: outcomes give {result.main_metric} {derived} for subset {subset!r}, its result says {value}"
            )


#: how far a subset's score recomputed from its items may lie from the evaluator's (ranking means are rounded to 5 d.p.)
OUTCOME_TOLERANCE = 1e-5


def _in_range(value: float | None, metric: str, what: str) -> None:
    low, high = metric_range(metric)
    if value is not None and math.isfinite(value) and not low <= value <= high:
        raise HtebError(f"{what} is {value}, outside {metric}'s range [{low:g}, {high:g}]")


def _same(a: float | None, b: float | None) -> bool:
    """Equal figures: both undefined, both NaN, or the same number (as JSON read them back)."""
    if a is None or b is None:
        return a is None and b is None
    return a == b or (math.isnan(a) and math.isnan(b))


def _check_sensitivity(unit: Any, where: str) -> None:
    """A unit's hard-twin rows name their twin's transformation, and its minimal pairs' top-1 outcomes are both
    true or false (a retrieval query) or both absent (their cosines and variants: row_checks)."""
    for row in unit.hard:
        if not isinstance(row["twin"], str) or not row["twin"]:
            raise HtebError(f"{where}: hard_twins twin {row['twin']!r} is not a transformation's name")
    for row in unit.sensitivity:
        tops = (row["twin_keeps_top1"], row["changed_keeps_top1"])
        if tops != (None, None) and not all(isinstance(top, bool) for top in tops):
            raise HtebError(
                f"{where}: sensitivity twin_keeps_top1, changed_keeps_top1 are {tops!r}, not both true or false "
                "(a retrieval query) or both null"
            )


# A part's shape: every field of the type and shape its writer (parts.ScorePart.to_json) writes, checked where a
# part is read (parts.parse_part), before any field is used, so a part edited or damaged by hand is one line
# naming the part and the field, never a traceback from whichever reader met it first. The blocks a card copies
# from a part (its identity's model, encoding, data, selection and axes; each unit's settings, score records,
# flags, error-policy counts, coverage and corpus robustness) are held to the result card's own schema
# (schemas/result_card.v1), so a part that passes makes a valid card. The columns of drift rows, minimal pairs,
# hard twins and per-item outcomes (most of a part: a million values in a large one) are checked column by
# column (`COLUMNS`, `_check_columns`), each the type its writer gives it and all of one length.

#: a score as a part writes it (parts._number): a finite number, or a non-finite one by its name
_SCORE = {"type": ["number", "string"], "pattern": "^(nan|-?inf)$"}
_TEXT = {"type": "string"}
_TEXTS = {"type": "array", "items": _TEXT}
_UNIQUE_TEXTS = {**_TEXTS, "uniqueItems": True}
_INTEGER = {"type": "integer"}

#: block -> column -> the JSON types of its values (parts.DRIFT_COLUMNS, sensitivity.COLUMNS and HARD_COLUMNS;
#: a column of a block written before it was recorded is absent and read as nulls; the first column is required)
COLUMNS: dict[str, dict[str, tuple[str, ...]]] = {
    "drift": {
        "drift": ("number",),
        "transformation": ("string",),
        "quality": ("number", "null"),
        "edit_distance": ("number",),
        "changed": ("boolean",),
        "applicable": ("boolean",),
        "language": ("string", "null"),
        "baseline_drift": ("number", "null"),
        "top10_changed": ("boolean", "null"),
        "order_discordance": ("number", "null"),
    },
    "sensitivity": {
        "pair": ("string",),
        "item": ("string",),
        "seed": ("integer", "null"),
        "language": ("string", "null"),
        "kept_cosine": ("number",),
        "changed_cosine": ("number",),
        "baseline_drift": ("number", "null"),
        "twin_keeps_top1": ("boolean", "null"),
        "changed_keeps_top1": ("boolean", "null"),
    },
}
COLUMNS["hard_twins"] = {**{c: k for c, k in COLUMNS["sensitivity"].items() if "top1" not in c}, "twin": ("string",)}
#: an evaluator result's per-item outcomes (evaluators/outcomes.py): labels for a measure of labels, no gold for
#: the mean of the items' own scores, numbers otherwise (a rank measure's predictions: ranks, cosines before them)
OUTCOME_COLUMNS = ("subset", "item", "gold", "predicted")


def outcome_columns(measure: str) -> dict[str, tuple[str, ...]]:
    """The JSON types of each column of `measure`'s outcomes, as Outcomes.of writes them."""
    labels = measure in LABEL_MEASURES
    gold = ("string",) if labels else ("null",) if measure == "mean" else ("number",)
    return {
        "subset": ("string",),
        "item": ("string",),
        "gold": gold,
        "predicted": ("string",) if labels else ("number",),
    }


#: the largest integer a 64-bit column holds (a seed, a count: the outputs' parquet columns are int64)
_INT64 = 2**63


def _integer(_: Any, value: Any) -> bool:
    """An integer as the writer writes one: not true or false, not 2.0, within 64 bits."""
    return type(value) is int and -_INT64 <= value < _INT64


def _number(_: Any, value: Any) -> bool:
    """A number: not true or false, and (an integer) one a float holds (the JSON reader refuses NaN, infinities and
    floats beyond a float)."""
    return type(value) is float or (type(value) is int and abs(value) <= sys.float_info.max)


_STRICT = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _integer, "number": _number}),
)


def _card(*path: str) -> dict[str, Any]:
    """The result card schema's block at `path` (a copy: the part's schema adds to some)."""
    block: Any = schema("result_card")
    for key in path:
        block = block[key]
    return copy.deepcopy(block)


def _nullable(block: dict[str, Any]) -> dict[str, Any]:
    return {**block, "type": [block["type"], "null"]}


def _columns(block: str, rows: int = 0) -> dict[str, Any]:
    """A block of columns: an object of arrays, the first required and of at least `rows` values (the values:
    `_check_columns`)."""
    first, *others = COLUMNS[block]
    return {
        "type": "object",
        "required": [first],
        "properties": {first: {"type": "array", "minItems": rows}, **{name: {"type": "array"} for name in others}},
    }


def part_schema() -> dict[str, Any]:
    """The JSON Schema of a part as `ScorePart.to_json` writes it (its columns' values aside: `COLUMNS`), with the
    task types and outcome measures known now."""
    score = _card("properties", "scores", "items")
    score["properties"]["value"] = {**_SCORE, "type": ["number", "string", "null"]}
    selection = _card("properties", "selection")
    identity = {
        "type": "object",
        "required": [
            "dataset",
            "protocol",
            "model",
            "encode",
            "on_error",
            "selection",
            "transformations",
            "seeds",
            "corpus_robustness",
            "planned",
            "hteb_score_version",
            "package_versions",
        ],
        "properties": {
            "dataset": _card("properties", "dataset"),
            "protocol": _card("properties", "protocol"),
            "model": _card("properties", "model"),
            "encode": _card("properties", "encode"),
            "on_error": _card("properties", "on_error"),
            "selection": {**selection, "required": ["preset", "min_judge"]},
            "transformations": {**_UNIQUE_TEXTS, "type": ["array", "null"]},
            "seeds": {"type": ["array", "null"], "items": _INTEGER, "uniqueItems": True},
            "corpus_robustness": {"type": "boolean"},
            "planned": {**_UNIQUE_TEXTS, "minItems": 1},
            "hteb_score_version": _TEXT,
            "package_versions": _card("properties", "package_versions"),
            "chosen": selection,
            "taxonomy": _card("properties", "taxonomy"),
        },
    }
    task = {
        "type": "object",
        "required": ["name", "task_type", "eval_split", "languages"],
        "properties": {
            **{key: _TEXT for key in ("name", "eval_split", "train_split", "mteb_task", "hf_path", "hf_revision")},
            "task_type": {"enum": TASK_TYPES.names()},
            "languages": _TEXTS,
            "subsets": {"type": "object", "additionalProperties": _TEXTS},
        },
    }
    outcomes = {
        "type": ["object", "null"],
        "required": ["measure", *OUTCOME_COLUMNS],
        "properties": {"measure": {"enum": MEASURES.names()}, **{c: {"type": "array"} for c in OUTCOME_COLUMNS}},
    }
    result = {
        "type": "object",
        "required": ["dataset", "transformation", "seed", "main_metric", "value", "subsets", "details"],
        "properties": {
            "dataset": _TEXT,
            "transformation": _TEXT,
            "seed": {"type": ["integer", "null"]},
            "main_metric": _TEXT,
            "value": {**_SCORE, "type": ["number", "string", "null"]},
            "subsets": {"type": "object", "additionalProperties": {**_SCORE, "type": ["number", "string", "null"]}},
            "details": {"type": "object", "additionalProperties": {"type": "object", "additionalProperties": _SCORE}},
            "outcomes": outcomes,
        },
    }
    explorer = {
        "type": "object",
        "required": ["dataset"],
        "properties": {
            **{k: _TEXT for k in ("dataset", "transformation", "split", "item_id", "field")},
            **{k: _TEXT for k in ("original_text", "transformed_text")},
            "seed": {"type": ["integer", "null"]},
            "cosine": {"type": "number"},
            **{k: {"type": ["boolean", "null"]} for k in ("top10_changed", "order_flipped")},
            **{k: {"type": "boolean"} for k in ("moved_most", "outcome_flipped", "with_errors")},
            **{k: {"type": ["number", "null"]} for k in ("quality", "fluency")},
        },
    }
    unit = {
        "type": "object",
        "required": [
            "dataset",
            "task",
            "settings",
            "scores",
            "results",
            "drift",
            "error_policy",
            "flags",
            "corpus_robustness",
        ],
        "properties": {
            "dataset": _TEXT,
            "task": task,
            "settings": _nullable(_card("properties", "evaluation", "properties", "datasets", "additionalProperties")),
            "scores": {"type": "array", "items": score},
            "results": {"type": "array", "items": result},
            "drift": _columns("drift"),
            "error_policy": _card("properties", "error_policy"),
            "flags": _card("properties", "flags"),
            "corpus_robustness": _nullable(
                _card("properties", "corpus_robustness", "properties", "datasets", "additionalProperties")
            ),
            # written only where there are some (a part written before them has none)
            "coverage": {**_card("properties", "coverage"), "minItems": 1},
            "explorer": {"type": "array", "items": explorer},
            "sensitivity": _columns("sensitivity", rows=1),
            "hard_twins": _columns("hard_twins", rows=1),
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "required": ["format", "identity", "units", "timings"],
        "properties": {
            "identity": identity,
            "units": {"type": "array", "minItems": 1, "items": unit},
            "timings": {"type": "object"},  # each value: check_timings
        },
    }


def _validator() -> Any:
    return _validator_of(tuple(TASK_TYPES.names()), tuple(MEASURES.names()))


@cache
def _validator_of(task_types: tuple[str, ...], measures: tuple[str, ...]) -> Any:
    """The validator of `part_schema` for these task types and measures: a task type added later is seen."""
    spec = part_schema()
    _STRICT.check_schema(spec)
    return _STRICT(spec)


def _field(path: Iterable[Any]) -> str:
    """A path into a part as one reads it: units[0].scores[3].value."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out or "(top level)"


def _words(error: jsonschema.ValidationError) -> str:
    """The schema's refusal on one line, the offending value abbreviated."""
    shown = reprlib.repr(error.instance)
    if error.validator == "type":
        kinds = [error.validator_value] if isinstance(error.validator_value, str) else error.validator_value
        return _not_of(error.instance, kinds)
    if error.validator == "pattern" and error.validator_value == _SCORE["pattern"]:
        return f"{shown} is not a number or the name of one that is not finite ('nan', 'inf', '-inf')"
    message = error.message
    if message.startswith(repr(error.instance)):
        message = shown + message[len(repr(error.instance)) :]
    return message if len(message) <= 200 else message[:197] + "..."


def check_part_shape(data: Mapping[str, Any], where: str) -> None:
    """A part's JSON (format and timings already checked) of the shape its writer writes: `part_schema`, then each
    block of columns (`COLUMNS`, `outcome_columns`). Anything else is one line naming `where` and the field."""
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        raise HtebError(f"{where}: damaged part: {_field(error.absolute_path)}: {_words(error)}")
    for at, unit in enumerate(data["units"]):
        for block in COLUMNS:
            if block in unit:
                _check_columns(unit[block], COLUMNS[block], f"units[{at}].{block}", where)
        for row, result in enumerate(unit["results"]):
            outcomes = result.get("outcomes")
            if outcomes is not None:
                kinds = outcome_columns(outcomes["measure"])
                _check_columns(outcomes, kinds, f"units[{at}].results[{row}].outcomes", where)


#: Python's types of each JSON type a column may hold (a bool is no number: its type is bool, not int)
_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (float, int),
    "integer": (int,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _check_columns(block: Mapping[str, Any], kinds: Mapping[str, tuple[str, ...]], field: str, where: str) -> None:
    """Each column of `block` that `kinds` names holds values of its kinds, as many as the first column."""
    first = next(iter(kinds))
    n = len(block[first])
    for column, allowed in kinds.items():
        values = block.get(column)
        if values is None:
            continue
        if len(values) != n:
            raise HtebError(
                f"{where}: damaged part: {field}.{column} holds {len(values)} values, {field}.{first} {n}: "
                "the columns of one block are of one length"
            )
        types = {t for kind in allowed for t in _TYPES[kind]}
        check = _integer if "integer" in allowed else _number if "number" in allowed else None

        def fits(value: Any) -> bool:
            return type(value) in types and (type(value) is not int or check is None or check(None, value))

        found = set(map(type, values))  # a column's types first: a million values seldom hold an int to bound
        if found <= types and (int not in found or all(map(fits, values))):
            continue
        at = next(i for i, v in enumerate(values) if not fits(v))
        raise HtebError(f"{where}: damaged part: {field}.{column}[{at}]: {_not_of(values[at], allowed)}")


def _not_of(value: Any, kinds: Iterable[str]) -> str:
    """Why `value` is none of the JSON types `kinds`, as one reads it (an integer too large to be read as one)."""
    kinds = list(kinds)
    if type(value) is int and ("number" in kinds or "integer" in kinds):
        limit = "a float" if "number" in kinds else "64 bits"
        return f"{reprlib.repr(value)} is an integer beyond {limit}"
    return f"{reprlib.repr(value)} is not of type {' or '.join(map(repr, kinds))}"
