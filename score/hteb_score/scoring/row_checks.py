"""A part's item rows (drift rows, explorer rows, minimal pairs and hard twins) checked against what each
column measures and against each other, after their types (part_checks.check_part_shape): a drift is a
cosine distance, an edit distance and an order discordance are shares, a judge scores 1 to 5; a text
the transformation left unchanged has drift 0, edit distance 0 and its top 10; a row names a variant
its unit scored. A part edited by hand into values of the right type that cannot be would otherwise
enter every drift figure, the explorer and the sensitivity tables unflagged. A refusal names the
unit, the block, the row and the rule."""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hteb_contract.errors import HtebError
from hteb_score.scoring.selection import JUDGE_SCALE

#: how far a cosine of unit vectors in floating point may lie beyond [-1, 1] (so a drift beyond [0, 2])
COSINE_EPS = 1e-6
DISTANCE = (-COSINE_EPS, 2.0 + COSINE_EPS)  # 1 - cos
COSINE = (-1.0 - COSINE_EPS, 1.0 + COSINE_EPS)
SHARE = (0.0, 1.0)

#: block -> numeric column -> the closed range its values (null aside) lie in, and what it is
RANGES: dict[str, dict[str, tuple[tuple[float, float], str]]] = {
    "drift": {
        "drift": (DISTANCE, "1 - cos"),
        "edit_distance": (SHARE, "word edits / words of the longer text"),
        "quality": (JUDGE_SCALE, "the judge's scale"),
        "baseline_drift": (DISTANCE, "a mean of 1 - cos"),
        "order_discordance": (SHARE, "a share of pairs"),
    },
    "sensitivity": {
        "kept_cosine": (COSINE, "a cosine"),
        "changed_cosine": (COSINE, "a cosine"),
        "baseline_drift": (DISTANCE, "a mean of 1 - cos"),
    },
    "explorer": {
        "cosine": (COSINE, "a cosine"),
        "quality": (JUDGE_SCALE, "the judge's scale"),
        "fluency": (JUDGE_SCALE, "the judge's scale"),
    },
}
RANGES["hard_twins"] = RANGES["sensitivity"]


class Rows:
    """A block's rows as columns, read once: numbers as floats (null: NaN), a flag's rows by identity."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        self.rows = rows
        self._read: dict[tuple[str, object], np.ndarray] = {}

    def number(self, column: str) -> np.ndarray:
        key = (column, float)
        if key not in self._read:
            self._read[key] = np.array([row.get(column) for row in self.rows], dtype=float)
        return self._read[key]

    def are(self, column: str, value: object) -> np.ndarray:
        """Rows whose `column` is `value` (True, False or None: a row without the column reads as None)."""
        key = (column, value)
        if key not in self._read:
            self._read[key] = np.fromiter((row.get(column) is value for row in self.rows), bool, len(self.rows))
        return self._read[key]

    def given(self, column: str) -> np.ndarray:
        return ~self.are(column, None)

    def same(self, first: str, second: str) -> np.ndarray:
        """Rows that hold `first` and `second`, equal."""
        return np.fromiter((first in row and row[first] == row.get(second) for row in self.rows), bool, len(self.rows))


#: what a drift row's columns say of each other: (the rule, the columns it reads, the rows that break it)
DRIFT_RULES: tuple[tuple[str, tuple[str, ...], Callable[[Rows], np.ndarray]], ...] = (
    (
        "a text the transformation left unchanged has edit_distance 0",
        ("changed", "edit_distance"),
        lambda r: r.are("changed", False) & (r.number("edit_distance") != 0),
    ),
    (
        "a text the transformation left unchanged has drift 0",
        ("changed", "drift"),
        lambda r: r.are("changed", False) & (np.abs(r.number("drift")) > COSINE_EPS),
    ),
    (
        "a text the transformation left unchanged keeps its top 10",
        ("changed", "top10_changed"),
        lambda r: r.are("changed", False) & r.are("top10_changed", True),
    ),
    (
        "order_discordance is given only for a counted text (changed and applicable)",
        ("changed", "applicable", "order_discordance"),
        lambda r: (r.are("changed", False) | r.are("applicable", False)) & r.given("order_discordance"),
    ),
    (
        "baseline_drift is given only with the text's language",
        ("language", "baseline_drift"),
        lambda r: r.are("language", None) & r.given("baseline_drift"),
    ),
)

#: what a minimal-pair or hard-twin row's columns say of each other
PAIR_RULES: tuple[tuple[str, tuple[str, ...], Callable[[Rows], np.ndarray]], ...] = (DRIFT_RULES[-1],)

#: what an explorer row's columns say of each other (scoring/item_measures.py `_explorer`)
EXPLORER_RULES: tuple[tuple[str, tuple[str, ...], Callable[[Rows], np.ndarray]], ...] = (
    (
        "outcome_flipped is true where top10_changed or order_flipped is, and only there",
        ("top10_changed", "order_flipped", "outcome_flipped"),
        lambda r: (
            r.given("outcome_flipped")
            & (r.are("outcome_flipped", True) != (r.are("top10_changed", True) | r.are("order_flipped", True)))
        ),
    ),
    (
        "a text the transformation left unchanged has cosine 1",
        ("original_text", "transformed_text", "cosine"),
        lambda r: r.same("original_text", "transformed_text") & (r.number("cosine") < 1.0 - COSINE_EPS),
    ),
)

RULES = {"drift": DRIFT_RULES, "sensitivity": PAIR_RULES, "hard_twins": PAIR_RULES, "explorer": EXPLORER_RULES}


def check_block(block: str, rows: Sequence[Mapping[str, Any]], where: str) -> None:
    """Rows of `block` (a key of RANGES and RULES; named `where` in an error): each numeric value in its column's
    range, each row by its block's rules."""
    if not rows:
        return
    columns = Rows(rows)
    for column, ((low, high), what) in RANGES[block].items():
        values = columns.number(column)
        outside = ~np.isnan(values) & ((values < low) | (values > high))
        if outside.any():
            at = int(np.argmax(outside))
            raise HtebError(
                f"{where}: {block} row {at}: {column} is {reprlib.repr(rows[at][column])}, outside "
                f"[{low:g}, {high:g}] ({what})"
            )
    for rule, named, broken in RULES[block]:
        found = broken(columns)
        if found.any():
            at = int(np.argmax(found))
            said = ", ".join(f"{c} {reprlib.repr(rows[at].get(c))}" for c in named)
            raise HtebError(f"{where}: {block} row {at}: {rule}; it says {said}")


def check_rows(unit: Any, where: str) -> None:
    """`unit`'s (a parts.UnitResult, named `where` in an error) item rows: `check_block`, and each naming a
    transformed variant the unit scored (a drift row its transformation; the others their seed too)."""
    variants = {(r.transformation, r.seed) for r in unit.scores if r.transformation != "original"}
    transformations = {name for name, _ in variants}
    for block, rows in (
        ("drift", unit.drift),
        ("sensitivity", unit.sensitivity),
        ("hard_twins", unit.hard),
        ("explorer", unit.explorer),
    ):
        check_block(block, rows, where)
    if not {row["transformation"] for row in unit.drift} <= transformations:
        at = next(i for i, row in enumerate(unit.drift) if row["transformation"] not in transformations)
        raise HtebError(
            f"{where}: drift row {at}: transformation {unit.drift[at]['transformation']!r} is not a transformed "
            "variant the unit scored"
        )
    for block, rows, name in (
        ("sensitivity", unit.sensitivity, "pair"),
        ("hard_twins", unit.hard, "pair"),
        ("explorer", unit.explorer, "transformation"),
    ):
        for at, row in enumerate(rows):
            # an explorer row of a part written before it named its variant is not checked
            if name in row and (row[name], row.get("seed")) not in variants:
                raise HtebError(
                    f"{where}: {block} row {at}: {name} {row[name]!r} with seed {row.get('seed')!r} is not a "
                    "transformed variant the unit scored"
                )
