"""The columnar check of item tables against the per-record JSON Schema check, its oracle.

Real records (the bundled sample store's LLM records, rule-made records of shared/data) are
written as item tables, `hteb.item/3` and `hteb.item/2` (the layout an older release wrote); one
field of one row is then broken at random. The columnar verdict (suspect rows, each checked in
turn by the per-record path, as the revision reader and writer do) must refuse exactly the
tables the per-record path refuses, with the same words, and never leave a bad row unsuspected.
"""

from __future__ import annotations

import copy
import math
import shutil
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest
from json_paths import edited, value_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract import revision as rev
from hteb_contract.arrow import arrow_schema
from hteb_contract.columnar import UnsupportedSchema, _bad, suspect_rows
from hteb_contract.errors import ContractError, IntegrityError
from hteb_contract.item_columns import ItemColumns
from hteb_contract.item_table import records_table, table_records
from hteb_contract.records import ITEM_V2, RULE, ItemRecord
from hteb_contract.parquet_io import read_parquet_table
from hteb_contract.sources import read_source_dir
from hteb_contract.stores import open_store
from hteb_generate.sources.source_loading import sample_dataset
from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from revision_factory import item_record

SETTINGS = settings(
    max_examples=examples(250), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)

# Values the schema's rules and Arrow's disagree on most easily: regex dialects ($ before a newline,
# Unicode word characters), bounds, NaN and infinities, enum and const neighbours, empty strings.
STRINGS = [
    "",
    " ",
    "eng\n",
    "éng",
    "ENG",
    "tést",
    "test\n",
    "a" * 64,
    "0" * 64,
    "0" * 63 + "\n",
    "sentence1[0]",
    "sentence1[٣]",
    "x y",
    "rule",
    "STS",
    "Retrieval",
    "identical",
    "empty",
    "hteb.item/2",
    "hteb.item/3",
    "hteb.item/4",
    "strip_quotes",
    "Strip",
    "stop",
]
NUMBERS = [0, 1, 5, -1, 0.0, 0.5, 1.0, 1.5, 5.0, 5.5, -0.0, math.nan, math.inf, -math.inf, 2**62, -(2**63)]


def _v2(row: dict) -> dict:
    """The row as hteb.item/2 wrote it: a rule-made record with invented decoding settings and revision ''."""
    old = copy.deepcopy(row)
    old["schema_version"] = ITEM_V2
    if old["prompt_set"] == RULE:
        old["sampling"] = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1}
    old["generator_revision"] = old["generator_revision"] or ""
    return old


@pytest.fixture(scope="module")
def rows(shared_data) -> list[dict]:
    """Real item rows, both versions: the sample store's LLM records and rule-made records of shared/data."""
    sample = open_store(f"file://{SAMPLE_STORE}").fetch(SAMPLE_REVISION)
    records = [
        record
        for name in sample.dataset_names()
        for variant in sample.variants(name)
        for record in sample.items(name, *variant)
    ][:60]
    for name in ("SemRel2024", "SummEval", "SciFact", "STS12"):
        dataset = sample_dataset(read_source_dir(shared_data / name), 2)
        for index, ref in enumerate(list(dataset.iter_texts())[:4]):
            errors = ("identical",) if index % 2 else ()
            records.append(item_record(dataset, ref, "translation", 1337, ref.text.upper(), errors=errors))
    current = [record.to_row() for record in records]
    return current + [_v2(row) for row in current]


def _at(row, path):
    for key in path:
        if (
            not isinstance(row, (dict, list))
            or (isinstance(row, list) and key >= len(row))
            or (isinstance(row, dict) and key not in row)
        ):
            return None
        row = row[key]
    return row


def _replacements(value, elsewhere):
    """Values an Arrow column of `value`'s type can hold: of its JSON type, null, and what other rows
    hold at the same place (a string where a rule-made row has null, an object where it has none)."""
    return _same_type(value) | st.sampled_from(elsewhere)


def _same_type(value):
    if isinstance(value, bool):
        return st.sampled_from([True, False, None])
    if isinstance(value, (int, float)) or value is None:
        return st.sampled_from([*NUMBERS, None]) | st.floats(allow_nan=True) | st.integers(-(2**63), 2**63 - 1)
    if isinstance(value, str):
        return st.sampled_from([*STRINGS, None]) | st.text(max_size=6)
    if isinstance(value, list):
        doubled = [*value, value[0]] if value else []
        return st.sampled_from([[], doubled, value[1:], value[::-1], None])
    return st.sampled_from([None])


def _table(rows: list[dict]) -> pa.Table | None:
    """The rows as an item table; None when a value has no place in its column's Arrow type."""
    try:
        return pa.Table.from_pylist(rows, schema=arrow_schema("item"))
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None


def _per_record(table: pa.Table) -> tuple[list[bool], str | None]:
    """The oracle: each row through `ItemRecord.from_row` (the item JSON Schema, then the attempts);
    which rows it refuses, and the refusal of the first."""
    refused, first = [], None
    for index, row in enumerate(table.to_pylist()):
        try:
            ItemRecord.from_row(row, what=f"row {index}")
            refused.append(False)
        except ContractError as err:
            refused.append(True)
            first = first or str(err)
    return refused, first


def _columnar(table: pa.Table) -> str | None:
    """The columnar verdict: the suspect rows, in order, checked by the per-record path until one is refused."""
    for index in np.flatnonzero(suspect_rows(table)):
        try:
            ItemRecord.from_row(table.slice(int(index), 1).to_pylist()[0], what=f"row {index}")
        except ContractError as err:
            return str(err)
    return None


def test_real_records_pass_and_read_back_as_from_row_reads_them(rows):
    table = _table(rows)
    assert not suspect_rows(table).any()
    assert table_records(table) == [ItemRecord.from_row(row, what="row") for row in rows]
    current = [ItemRecord.from_row(row, what="row") for row in rows if row["schema_version"] != ITEM_V2]
    assert records_table(current).equals(_table([record.to_row() for record in current]))


@SETTINGS
@given(st.data())
def test_good_tables_are_cleared(rows, data):
    chosen = data.draw(st.lists(st.sampled_from(rows), min_size=1, max_size=12))
    table = _table(chosen)
    assert _per_record(table) == ([False] * len(chosen), None)
    assert _columnar(table) is None and not suspect_rows(table).any()
    assert table_records(table) == [ItemRecord.from_row(row, what="row") for row in chosen]


@SETTINGS
@given(st.data())
def test_one_broken_field_is_refused_as_the_per_record_path_refuses_it(rows, data):
    chosen = data.draw(st.lists(st.sampled_from(rows), min_size=1, max_size=6))
    at = data.draw(st.integers(0, len(chosen) - 1))
    kinds = [[row for row in rows if (row["prompt_set"] == RULE) == rule] for rule in (True, False)]
    row = chosen[at] = data.draw(st.sampled_from(kinds[0]) | st.sampled_from(kinds[1]))  # rule-made as often as not
    for _ in range(data.draw(st.integers(1, 2))):
        path = data.draw(st.sampled_from([(key,) for key in row]) | st.sampled_from(list(value_paths(row))))
        current = row
        for key in path:
            current = current[key]
        elsewhere = [_at(other, path) for other in rows]
        row = edited(row, path, data.draw(_replacements(current, elsewhere)))
    table = _table([*chosen[:at], row, *chosen[at + 1 :]])
    if table is None:
        return  # not a value an item file can hold (the column types are checked before any row)
    refused, first = _per_record(table)
    suspect = suspect_rows(table)
    assert not any(r and not s for r, s in zip(refused, suspect)), "a row the JSON Schema refuses went unsuspected"
    assert _columnar(table) == first


def _unsampled(row):
    """Sampling where it is due removed, or (item/3) given to a rule-made record, which has none."""
    due = row["prompt_set"] != RULE or row["schema_version"] == ITEM_V2
    return {**row, "sampling": None if due else {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1}}


def _misrevised(row):
    """generator_revision null where item/2 wants a string, named for a rule (item/3), or '' for an LLM (item/3)."""
    if row["schema_version"] == ITEM_V2:
        return {**row, "generator_revision": None}
    return {**row, "generator_revision": "main" if row["prompt_set"] == RULE else ""}


@pytest.mark.parametrize(
    "edit, words",
    [
        (_unsampled, "sampling"),
        (_misrevised, "generator_revision"),
        (lambda r: {**r, "judge": {**r["judge"], "quality": math.nan}}, "not a finite number"),
        (lambda r: {**r, "errors": [*r["errors"], *r["errors"]] or ["identical", "identical"]}, "errors"),
        (lambda r: {**r, "fallback": not r["fallback"]}, "contradicts its own attempts"),
        (lambda r: {**r, "source_language": "EN"}, "source_language"),
        (lambda r: {**r, "schema_version": "hteb.item/9"}, "is not supported"),
        (lambda r: {**r, "attempts": []}, "attempts"),
    ],
)
@pytest.mark.parametrize("rule", [True, False], ids=["rule-made", "llm"])
@pytest.mark.parametrize("version", ["hteb.item/3", ITEM_V2])
def test_each_kind_of_break_is_refused_in_the_per_record_words(rows, edit, words, version, rule):
    good = [row for row in rows if row["schema_version"] == version and (row["prompt_set"] == RULE) == rule]
    bad = edit(good[3])
    table = _table([*good[:3], bad, *good[4:]])
    first = _per_record(table)[1]
    assert first is not None and words in first and first.startswith("row 3")
    assert _columnar(table) == first


def _outcome(check) -> str | None:
    """What a check did: None (passed), its refusal, or the exception it raised on a value no JSON holds."""
    try:
        check()
    except ContractError as err:
        return str(err)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as err:
        return f"raised {type(err).__name__}"
    return None


def _record_by_record(records) -> None:
    """The oracle of the writer: each record in ref order through the per-record checks."""
    for index, record in enumerate(sorted(records, key=lambda r: r.ref)):
        rev.check_row(record.to_row(), index, "D/paraphrasing_1", ("D", "paraphrasing", 1), False)


@SETTINGS
@given(st.data())
def test_the_writer_refuses_as_record_by_record(tmp_path_factory, rows, data):
    """write_items over records broken in one attribute, values Arrow would convert included (a bool as
    a number, a numpy integer, bytes as a string): same verdict and words as the per-record checks."""
    base = [ItemRecord.from_row(row, what="row") for row in rows if row["schema_version"] != ITEM_V2]
    base = [
        replace(record, dataset="D", transformation="paraphrasing", seed=1, item_id=str(index))
        for index, record in enumerate(base)
    ]
    chosen = data.draw(st.lists(st.sampled_from(base), min_size=1, max_size=5, unique_by=lambda r: r.item_id))
    at = data.draw(st.integers(0, len(chosen) - 1))
    name = data.draw(
        st.sampled_from(
            [
                "seed",
                "dataset",
                "split",
                "fallback",
                "errors",
                "transformed_text",
                "subset",
                "target_language",
                "generator_revision",
                "prompt_hash",
            ]
        )
    )
    value = data.draw(
        st.sampled_from(
            [
                None,
                True,
                1.0,
                np.int64(1),
                b"test",
                "",
                "test",
                "corpus",
                ("identical",),
                ["identical", "identical"],
                "eng",
                2.5,
                "x\n",
            ]
        )
    )
    chosen[at] = replace(chosen[at], **{name: value})
    root = tmp_path_factory.mktemp("write")
    expected = _outcome(lambda: _record_by_record(chosen))
    assert _outcome(lambda: rev.write_items(root, "D", "paraphrasing", 1, chosen)) == expected
    if expected is None:
        written = read_parquet_table((root / rev.items_path("D", "paraphrasing", 1)).read_bytes(), "x")
        assert written.equals(
            pa.Table.from_pylist([r.to_row() for r in sorted(chosen, key=lambda r: r.ref)], schema=arrow_schema("item"))
        )


@SETTINGS
@given(st.data())
def test_the_table_writer_refuses_as_row_by_row(tmp_path_factory, rows, data):
    """write_item_table over a table (rows in any order) with one row broken, or put in another
    file, or written in an older version: same verdict and words as each row checked in ref order."""
    base = [
        {**row, "dataset": "D", "transformation": "paraphrasing", "seed": 1, "item_id": str(index)}
        for index, row in enumerate(rows)
        if row["schema_version"] != ITEM_V2
    ]
    chosen = data.draw(st.lists(st.sampled_from(base), min_size=1, max_size=6, unique_by=lambda r: r["item_id"]))
    at = data.draw(st.integers(0, len(chosen) - 1))
    name = data.draw(
        st.sampled_from(
            [
                "seed",
                "dataset",
                "split",
                "fallback",
                "errors",
                "transformed_text",
                "subset",
                "target_language",
                "schema_version",
                "prompt_hash",
            ]
        )
    )
    elsewhere = [_at(other, (name,)) for other in rows]
    chosen[at] = {**chosen[at], name: data.draw(_replacements(chosen[at][name], elsewhere))}
    table = _table(chosen)
    if table is None:
        return  # not a value an item table can hold
    ordered = sorted(table.to_pylist(), key=_ref_order)
    root = tmp_path_factory.mktemp("write")

    def row_by_row():
        for index, row in enumerate(ordered):
            rev.check_row(row, index, "D/paraphrasing_1", ("D", "paraphrasing", 1), False)

    expected = _outcome(row_by_row)
    assert _outcome(lambda: rev.write_item_table(root, "D", "paraphrasing", 1, table)) == expected
    if expected is None:
        written = read_parquet_table((root / rev.items_path("D", "paraphrasing", 1)).read_bytes(), "x")
        assert written.equals(_table(ordered))


def test_a_table_of_another_schema_is_refused_in_one_line(tmp_path, rows):
    table = _table([row for row in rows if row["schema_version"] != ITEM_V2][:3]).drop_columns(["judge"])
    with pytest.raises(ContractError, match="^D/paraphrasing_1: not an item table"):
        rev.write_item_table(tmp_path, "D", "paraphrasing", 1, table)
    assert not any(tmp_path.iterdir())


def test_tables_checked_together_are_refused_for_their_own_file_and_none_is_written(tmp_path, rows):
    """write_item_tables checks every table as one: a broken row of the second file is refused in that
    file's words and row number (its place in its own file), and no file is written."""
    base = [row for row in rows if row["schema_version"] != ITEM_V2][:4]
    first = _table([{**row, "dataset": "D", "transformation": "paraphrasing", "seed": 1} for row in base])
    broken = [{**row, "dataset": "D", "transformation": "paraphrasing", "seed": 2} for row in base]
    at = sorted(range(len(broken)), key=lambda i: _ref_order(broken[i]))[2]
    broken[at] = {**broken[at], "fallback": not broken[at]["fallback"]}
    tables = {("D", "paraphrasing", 1): first, ("D", "paraphrasing", 2): _table(broken)}
    with pytest.raises(ContractError, match=r"^D/paraphrasing_2 item 2: .*contradicts its own attempts"):
        rev.write_item_tables(tmp_path, tables)
    assert not any(tmp_path.iterdir())
    tables[("D", "paraphrasing", 2)] = _table([{**row, "seed": 2} for row in first.to_pylist()])
    paths = rev.write_item_tables(tmp_path, tables)
    assert [p.name for p in paths] == ["paraphrasing_1.parquet", "paraphrasing_2.parquet"]


def test_a_revision_reads_the_same_records_either_way():
    """Every items file of the bundled sample revision: the columnar read (`items`) gives the records the
    record-by-record read gives, the scorer's read (`item_columns`) their columns, the first time (checked)
    and the next (a file already cleared), and `check_content` counts them all."""
    sample = open_store(f"file://{SAMPLE_STORE}").fetch(SAMPLE_REVISION)
    total = 0
    for name in sample.dataset_names():
        for transformation, seed in sample.variants(name):
            rel = rev.items_path(name, transformation, seed)
            texts = sample._texts_of(name)
            table = sample._read_items(rel)
            assert sample._sound(table, name, transformation, seed)
            one_by_one = sample._records_one_by_one(table, name, transformation, seed, rel, texts)
            assert sample.items(name, transformation, seed) == one_by_one
            columns = ItemColumns.from_records(one_by_one, name, transformation, seed)
            assert sample.item_columns(name, transformation, seed) == columns
            assert rel in sample._cleared and sample.item_columns(name, transformation, seed) == columns
            total += len(one_by_one)
    assert sample.check_content().records == total


def test_files_checked_together_get_each_its_own_verdict():
    """verify checks a dataset's files as one table: a broken row (a kept text that is not its attempt's
    output) or a second record for a text marks its own file only, as checking each file alone does."""
    sample = open_store(f"file://{SAMPLE_STORE}").fetch(SAMPLE_REVISION)
    variants = sample.variants("STSBenchmark")
    tables = [sample._read_items(rev.items_path("STSBenchmark", *variant)) for variant in variants]
    texts = tables[1].column("transformed_text").to_pylist()
    tables[1] = tables[1].set_column(
        tables[1].schema.get_field_index("transformed_text"),
        "transformed_text",
        pa.array([texts[0] + " x", *texts[1:]], pa.string()),
    )
    tables[2] = pa.concat_tables([tables[2], tables[2].slice(0, 1)])
    files = [(table, *variant) for table, variant in zip(tables, variants)]
    verdicts = sample._sound_files(files, "STSBenchmark", corpus=False)
    assert verdicts == [sample._sound(table, "STSBenchmark", *variant) for table, variant in zip(tables, variants)]
    assert verdicts[:3] == [True, False, False] and all(verdicts[3:])


def test_a_cleared_file_changed_before_it_is_read_again_is_refused(tmp_path):
    """The scorer reads a file twice; the second read skips the checks of the bytes the first cleared,
    so bytes that changed in between (another file's, valid parquet) are refused, not scored."""
    sample = open_store(f"file://{SAMPLE_STORE}").fetch(SAMPLE_REVISION)
    shutil.copytree(sample.root, tmp_path / "rev")
    revision = rev.Revision.open(tmp_path / "rev", datasets=["STSBenchmark"])
    (first, seed), (second, other) = revision.variants("STSBenchmark")[:2]
    assert len(revision.item_columns("STSBenchmark", first, seed)) > 0
    path = tmp_path / "rev" / rev.items_path("STSBenchmark", first, seed)
    path.write_bytes((tmp_path / "rev" / rev.items_path("STSBenchmark", second, other)).read_bytes())
    with pytest.raises(IntegrityError, match="changed after it was verified"):
        revision.item_columns("STSBenchmark", first, seed)


@pytest.mark.parametrize(
    "spec",
    [
        {"oneOf": [{"type": "string"}]},
        {"type": "string", "format": "date-time"},
        {"if": {"properties": {"split": {"pattern": "^t"}}}},
        {"$ref": "https://elsewhere/schema.json"},
    ],
)
def test_a_keyword_the_compiler_does_not_check_exactly_is_an_error_not_a_rule_skipped(spec):
    """A schema edit the columnar check cannot follow fails loudly here, so the two never drift apart."""
    with pytest.raises(UnsupportedSchema):
        _bad(spec, {"properties": {}}, pa.table({"split": ["test"]}) if "if" in spec else pa.array(["test"]))


def _ref_order(row: dict) -> tuple:
    """A row's place in ref order as the writer sorts (Arrow: a null after every value)."""
    return tuple((row[name] is None, row[name] or "") for name in ("split", "item_id", "field"))
