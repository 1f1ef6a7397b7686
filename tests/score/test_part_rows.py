"""A part's item rows hold values of the right type that can be: each inside what its column measures, each
row consistent with itself and naming a variant its unit scored (scoring/row_checks.py). Real parts of the
sample (scored_parts.py: STS pairs with order discordance, retrieval queries with their top 10), rows edited
with generated values as a careless or hostile hand would; the part as written passes, and a part that
breaks a rule is refused by `merge` in one line naming the unit, the block, the row and the rule, with
nothing written."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from fuzz import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.errors import HtebError
from hteb_score.scoring.part_checks import check_part
from hteb_score.scoring.row_checks import COSINE_EPS, DRIFT_RULES, RANGES
from hteb_score.scoring.sensitivity import hard_row, item_row
from refusal import assert_one_line, partials, run, snapshot
from scored_parts import scored_part, with_identity, write_part

DATASETS = ["STSBenchmark", "SciFact"]  # pairs (order discordance) and queries (top 10)


def _with_pairs(hard: bool) -> Any:
    """The two datasets' part with a minimal pair on a variant each unit scored, and (`hard`) its hard twin."""
    scored = scored_part(None, planned=DATASETS)
    units = []
    for unit in scored.units:
        pair = item_row("q1", unit.dataset, ("paraphrasing", "x"), 1339, "eng", 0.9, 0.7, 0.6)
        units.append(
            dataclasses.replace(unit, sensitivity=[pair], hard=[hard_row(pair, "style_change")] if hard else [])
        )
    paired = dataclasses.replace(scored, units=units)
    return with_identity(paired, dataset={**scored.identity.dataset, "hard_twins": {}}) if hard else paired


@pytest.fixture(scope="module")
def part() -> Any:
    """Checked in memory (check_part): its identity names a hard-twin revision by the key alone."""
    return _with_pairs(hard=True)


def _edited(part: Any, dataset: str, block: str, at: int, changes: dict[str, Any]) -> Any:
    """`part` with row `at` of `block` ("hard" for hard twins) of `dataset`'s unit changed."""
    units = []
    for unit in part.units:
        if unit.dataset == dataset:
            rows = [dict(row) for row in getattr(unit, block)]
            rows[at].update(changes)
            unit = dataclasses.replace(unit, **{block: rows})
        units.append(unit)
    return dataclasses.replace(part, units=units)


def _field(block: str) -> str:
    return {"hard": "hard_twins"}.get(block, block)


def test_the_parts_rows_as_written_pass(part):
    check_part(part, "part x")
    for unit in part.units:  # what the rules below read is there to read
        assert any(row["changed"] for row in unit.drift) and unit.explorer
    stsb, scifact = part.units
    assert any(row["order_discordance"] is not None for row in stsb.drift)
    assert any(row["top10_changed"] is not None for row in scifact.drift)


def _outside(low: float, high: float) -> st.SearchStrategy[float]:
    finite = {"allow_nan": False, "allow_infinity": False}
    return st.one_of(
        st.floats(max_value=low, exclude_max=True, **finite), st.floats(min_value=high, exclude_min=True, **finite)
    )


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_a_value_outside_what_its_column_measures_is_refused(part, data):
    block = data.draw(st.sampled_from(sorted(RANGES)))
    column = data.draw(st.sampled_from(sorted(RANGES[block])))
    (low, high), what = RANGES[block][column]
    unit = data.draw(st.sampled_from(part.units))
    attribute = {"hard_twins": "hard"}.get(block, block)
    at = data.draw(st.integers(0, len(getattr(unit, attribute)) - 1))
    value = data.draw(_outside(low, high))
    edited = _edited(part, unit.dataset, attribute, at, {column: value})
    with pytest.raises(HtebError) as refused:
        check_part(edited, "part x")
    assert str(refused.value) == (
        f"part x: unit {unit.dataset!r}: {block} row {at}: {column} is {value!r}, outside [{low:g}, {high:g}] ({what})"
    )


#: an unchanged text as its writer writes one (scoring/statistics.drift_row): nothing moved
UNCHANGED = {"changed": False, "edit_distance": 0.0, "drift": 0.0, "top10_changed": None, "order_discordance": None}

#: the rule's words -> a strategy of the changes to an UNCHANGED row that break it
BREAKS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "has edit_distance 0": st.floats(0.0, 1.0, exclude_min=True).map(lambda v: {"edit_distance": v}),
    "has drift 0": st.floats(COSINE_EPS, 2.0, exclude_min=True).map(lambda v: {"drift": v}),
    "keeps its top 10": st.just({"top10_changed": True}),
    "counted text": st.one_of(
        st.floats(0.0, 1.0).map(lambda v: {"order_discordance": v}),
        st.floats(0.0, 1.0).map(lambda v: {"order_discordance": v, "changed": True, "applicable": False}),
    ),
    "with the text's language": st.floats(0.0, 2.0).map(lambda v: {"language": None, "baseline_drift": v}),
}


def test_every_drift_rule_is_broken_below():
    assert len(BREAKS) == len(DRIFT_RULES)
    for words in BREAKS:
        assert sum(words in rule for rule, _, _ in DRIFT_RULES) == 1, words


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_a_drift_row_that_contradicts_itself_is_refused(part, data):
    unit = data.draw(st.sampled_from(part.units))
    at = data.draw(st.integers(0, len(unit.drift) - 1))
    check_part(_edited(part, unit.dataset, "drift", at, UNCHANGED), "part x")  # an unchanged text, as written
    words = data.draw(st.sampled_from(sorted(BREAKS)))
    changes = data.draw(BREAKS[words])
    with pytest.raises(HtebError) as refused:
        check_part(_edited(part, unit.dataset, "drift", at, {**UNCHANGED, **changes}), "part x")
    message = str(refused.value)
    assert message.startswith(f"part x: unit {unit.dataset!r}: drift row {at}: ") and words in message, message
    for column, value in changes.items():
        assert f"{column} {value!r}" in message, message


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_a_row_naming_a_variant_its_unit_did_not_score_is_refused(part, data):
    unit = data.draw(st.sampled_from(part.units))
    scored = {(r.transformation, r.seed) for r in unit.scores}
    block = data.draw(st.sampled_from(["drift", "explorer", "sensitivity", "hard"]))
    rows = getattr(unit, block)
    at = data.draw(st.integers(0, len(rows) - 1))
    name = "pair" if block in ("sensitivity", "hard") else "transformation"
    if block == "drift":  # a drift row names its transformation alone
        changes = {name: data.draw(st.sampled_from(["original", "typos"]) | st.text(max_size=8))}
        assume_new = changes[name] not in {t for t, _ in scored} or changes[name] == "original"
    else:
        seed = data.draw(st.none() | st.integers(-(2**63), 2**63 - 1))
        changes = {name: data.draw(st.sampled_from(sorted({t for t, _ in scored}))), "seed": seed}
        assume_new = (changes[name], seed) not in scored or changes[name] == "original"
    edited = _edited(part, unit.dataset, block, at, changes)
    if not assume_new:
        check_part(edited, "part x")
        return
    with pytest.raises(HtebError, match=rf"^part x: unit '{unit.dataset}': {_field(block)} row {at}: {name} "):
        check_part(edited, "part x")


@settings(max_examples=examples(30), deadline=None)
@given(data=st.data())
def test_an_explorer_row_that_contradicts_itself_is_refused(part, data):
    unit = data.draw(st.sampled_from(part.units))
    at = data.draw(st.integers(0, len(unit.explorer) - 1))
    row = unit.explorer[at]
    if data.draw(st.booleans()):
        changes = {"outcome_flipped": not bool(row["top10_changed"] or row["order_flipped"])}
        needle = (
            f"and only there; it says top10_changed {row['top10_changed']!r}, order_flipped {row['order_flipped']!r}"
        )
    else:
        cosine = data.draw(st.floats(-1.0, 1.0 - COSINE_EPS, exclude_max=True))
        changes = {"transformed_text": row["original_text"], "cosine": cosine}
        needle = "unchanged has cosine 1; it says original_text"
    with pytest.raises(HtebError) as refused:
        check_part(_edited(part, unit.dataset, "explorer", at, changes), "part x")
    assert str(refused.value).startswith(f"part x: unit {unit.dataset!r}: explorer row {at}: ")
    assert needle in str(refused.value)
    assert str(refused.value).endswith(", ".join(f"{c} {v!r}" for c, v in changes.items() if c != "transformed_text"))


@pytest.mark.parametrize(
    "block, changes, needle",
    [
        ("drift", {"drift": 2.5}, "drift row 0: drift is 2.5, outside [-1e-06, 2] (1 - cos)"),
        ("drift", {**UNCHANGED, "drift": 0.25}, "has drift 0; it says changed False, drift 0.25"),
        ("sensitivity", {"seed": 7}, "sensitivity row 0: pair 'paraphrasing' with seed 7 is not a transformed"),
    ],
)
def test_merge_refuses_such_a_part_in_one_line_and_writes_nothing(tmp_path, block, changes, needle):
    part = _with_pairs(hard=False)
    check_part(part, "part x")
    folder = write_part(_edited(part, "STSBenchmark", block, 0, changes), tmp_path / "part")
    out = tmp_path / "merged"
    code, _, err = run("merge", folder, "--out", out)
    assert_one_line(code, err, str(folder), "unit 'STSBenchmark'", needle)
    assert snapshot(out) == {} and partials(tmp_path) == []


def test_a_drift_of_an_unchanged_text_may_carry_a_cosines_float_error(part):
    """1 - cos of a vector with itself is 0 only up to float error; rounded to 6 decimals, it reads as -0.0 or 1e-6."""
    for drift in (-0.0, COSINE_EPS, -COSINE_EPS):
        check_part(_edited(part, "STSBenchmark", "drift", 0, {**UNCHANGED, "drift": drift}), "part x")
    assert math.isclose(RANGES["drift"]["drift"][0][0], -COSINE_EPS)
