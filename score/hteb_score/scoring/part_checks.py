"""A part's content checked as a revision's is, before anything is built from it: a part is a file
from someone else's machine (a colleague's run, a repository, a resumed run folder), and the card
trusts every figure in it. Each unit must hold what its dataset's scoring wrote: score records (a
unit without one would vanish from every aggregate unflagged), every record, result, drift row and
flag of its own dataset and of a variant its run planned, each record equal to the evaluator result
it derives from (the main score and each subset's), and every figure inside its metric's range.
A refusal names the part, the dataset and the field."""

from __future__ import annotations

import math
import reprlib
from collections.abc import Mapping
from typing import Any

from hteb_contract.errors import ContractError, HtebError
from hteb_contract.field_values import NUMBER
from hteb_contract.tasks import TASK_TYPES, task_type

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


def _check_pair_row(row: Mapping[str, Any], scored: set[str], where: str) -> None:
    """A minimal-pair row names a rule the unit scored, and its cosines are numbers from -1 to 1."""
    if row["pair"] not in scored:
        raise HtebError(f"{where} holds pair {row['pair']!r}, which the unit did not score")
    for column in ("kept_cosine", "changed_cosine"):
        value = row[column]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not -1.0 - 1e-6 <= value <= 1.0 + 1e-6:
            raise HtebError(f"{where} {column} {value!r} is not a cosine (a number from -1 to 1)")


def _check_sensitivity(unit: Any, where: str) -> None:
    """A unit's minimal-pair and hard-twin rows name a rule it scored, their cosines are numbers from -1 to 1, a
    hard-twin row names its twin's transformation, and the top-1 outcomes are both true or false (a retrieval
    query) or both absent."""
    scored = {r.transformation for r in unit.scores}
    for block, rows in (("sensitivity", unit.sensitivity), ("hard_twins", unit.hard)):
        for row in rows:
            _check_pair_row(row, scored, f"{where}: {block}")
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
