"""The CSV door (hteb_contract/common/csv_input.py) on generated tables: what `csv.writer` writes reads back
cell for cell, with comment lines, a byte-order mark and blank lines around it; a header naming a column
twice, a row of more or fewer cells than the header and bytes that are not UTF-8 are each one line of the
caller's error kind naming the file, never a table read silently wrong."""

from __future__ import annotations

import csv
import io

import pytest
from fuzz import examples
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from hteb_contract.common import csv_input
from hteb_contract.errors import HtebError

CELLS = st.text(st.characters(blacklist_categories=["Cs"]), max_size=8)
NAMES = st.lists(st.text(st.characters(blacklist_categories=["Cs"]), min_size=1, max_size=6), min_size=1, max_size=5)


def _written(header: list[str], rows: list[list[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)  # a cell may start with '#'
    writer.writerows([header, *rows])
    return out.getvalue()


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[str], list[list[str]]]:
    header = draw(NAMES.filter(lambda names: len(set(names)) == len(names)))
    rows = draw(st.lists(st.lists(CELLS, min_size=len(header), max_size=len(header)), max_size=5))
    return header, rows


@settings(max_examples=examples(200), deadline=None)
@given(tables(), st.booleans(), st.booleans())
@example((["0"], [["\n#"]]), False, False)  # a cell's line that starts with '#' is no comment
def test_a_written_table_reads_back_cell_for_cell(table, bom, comment):
    header, rows = table
    text = ("\ufeff" if bom else "") + ("# typed in\n" if comment else "") + _written(header, rows) + "\n"
    assert csv_input.rows(text, "t.csv") == [dict(zip(header, row)) for row in rows]


@settings(max_examples=examples(200), deadline=None)
@given(tables(), st.data())
def test_a_column_named_twice_is_one_line(table, data):
    header, rows = table
    twice = data.draw(st.sampled_from(header))
    with pytest.raises(HtebError) as refused:
        csv_input.rows(_written([*header, twice], [[*row, ""] for row in rows]), "t.csv", HtebError)
    assert str(refused.value) == f"t.csv: not a readable CSV table (the column {twice!r} is named twice)"


@settings(max_examples=examples(200), deadline=None)
@given(tables(), st.data())
def test_a_row_of_more_or_fewer_cells_than_the_header_is_one_line(table, data):
    header, rows = table
    assume(rows)
    at = data.draw(st.integers(0, len(rows) - 1))
    cells = data.draw(st.lists(CELLS, min_size=1, max_size=len(header) + 2).filter(lambda c: len(c) != len(header)))
    with pytest.raises(HtebError) as refused:
        csv_input.rows(_written(header, [*rows[:at], cells, *rows[at + 1 :]]), "t.csv", HtebError)
    assert str(refused.value).startswith(f"t.csv: not a readable CSV table (row {at + 1}: {len(cells)} cells")


def test_a_file_that_is_not_utf8_or_missing_is_one_line(tmp_path):
    bad = tmp_path / "t.csv"
    bad.write_bytes(b"model,score\n\xff,1\n")
    with pytest.raises(HtebError, match=r"t.csv: not a readable CSV table \("):
        csv_input.read(bad, HtebError)
    with pytest.raises(HtebError, match=r"gone.csv: no such file$"):
        csv_input.read(tmp_path / "gone.csv", HtebError)
