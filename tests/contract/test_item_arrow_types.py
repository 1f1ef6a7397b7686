"""Items files written by other tools (issue 35 item 4): string columns stored as `large_string`,
dictionary-encoded or in large lists (what polars and some `datasets` versions write) hold the same
values and are read as the item schema's strings; a text that is not valid UTF-8, which Parquet's
reader lets through, is refused in one line by `verify` and by the reader the scorer uses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision
from hteb_score.cli import main
from revision_factory import install, reseal

ITEMS = "data/STSBenchmark/paraphrasing_1337.parquet"


def _large(kind: pa.DataType) -> pa.DataType:
    """The type polars writes for `kind`: large strings and large lists, nested alike."""
    if pa.types.is_string(kind):
        return pa.large_string()
    if pa.types.is_list(kind):
        return pa.large_list(_large(kind.value_type))
    if pa.types.is_struct(kind):
        return pa.struct([kind.field(i).with_type(_large(kind.field(i).type)) for i in range(kind.num_fields)])
    return kind


def _rewrite(root: Path, change) -> None:
    """The items file rewritten with each column changed by `change(name, column)`, then resealed."""
    table = pq.read_table(root / ITEMS)
    columns = {name: change(name, table.column(name)) for name in table.column_names}
    pq.write_table(pa.table(columns), root / ITEMS)
    reseal(root)


def _copy(base: Path, tmp_path: Path) -> Path:
    root = tmp_path / "rev"
    shutil.copytree(base, root)
    return root


def _verify(root: Path, tmp_path: Path) -> int:
    install(tmp_path / "store", root)
    return main(["verify", "--store", str(tmp_path / "store"), "--revision", "bad"])


def _texts(root: Path) -> tuple:
    revision = Revision.open(root)
    columns = revision.item_columns("STSBenchmark", "paraphrasing", 1337)
    return (columns, revision.items("STSBenchmark", "paraphrasing", 1337))


def _dictionary(name: str, column: pa.ChunkedArray) -> pa.ChunkedArray:
    return column.dictionary_encode() if pa.types.is_string(column.type) else column


def _large_columns(name: str, column: pa.ChunkedArray) -> pa.ChunkedArray:
    return column.cast(_large(column.type))


@pytest.mark.parametrize("change", [_large_columns, _dictionary], ids=["large", "dictionary"])
def test_equivalent_string_types_are_read_as_strings(bad_revision, tmp_path, capsys, change):
    expected = _texts(bad_revision)
    root = _copy(bad_revision, tmp_path)
    _rewrite(root, change)
    written = pq.read_schema(root / ITEMS)
    assert not written.field("original_text").type.equals(pa.string())  # the file really holds the other type
    assert _verify(root, tmp_path) == 0, capsys.readouterr().err
    assert "2 of 2 datasets verified" in capsys.readouterr().out
    assert _texts(root) == expected  # the scorer's columns and the records: the same texts


def test_a_type_that_is_not_equivalent_is_refused(bad_revision, tmp_path, capsys):
    root = _copy(bad_revision, tmp_path)
    _rewrite(root, lambda name, column: column.cast(pa.large_binary()) if name == "item_id" else column)
    assert _verify(root, tmp_path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and ITEMS in err, err


def _invalid(name: str, column: pa.ChunkedArray) -> pa.ChunkedArray:
    """The second transformed text's bytes replaced by ones no UTF-8 text holds."""
    if name != "transformed_text":
        return column
    values = [text.encode() for text in column.to_pylist()]
    values[1] = b"caf\xe9 \xff"
    return pa.chunked_array([pa.array(values, pa.binary()).view(pa.string())])


def test_text_that_is_not_utf8_is_refused(bad_revision, tmp_path, capsys):
    root = _copy(bad_revision, tmp_path)
    _rewrite(root, _invalid)
    assert _verify(root, tmp_path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{ITEMS}: column 'transformed_text' row 2 holds text that is not valid UTF-8" in err
    for read in (
        lambda r: r.item_columns("STSBenchmark", "paraphrasing", 1337),
        lambda r: r.items("STSBenchmark", "paraphrasing", 1337),
    ):
        with pytest.raises(HtebError, match="not valid UTF-8"):
            read(Revision.open(root))


def test_nested_text_that_is_not_utf8_is_refused(bad_revision, tmp_path, capsys):
    def bad_attempt(name: str, column: pa.ChunkedArray) -> pa.ChunkedArray:
        if name != "attempts":
            return column
        flat = column.combine_chunks()
        outputs = flat.values.field("output")
        data = [None if text is None else text.encode() for text in outputs.to_pylist()]
        data[0] = b"\xc3\x28"
        fields = [flat.values.field(i) for i in range(flat.values.type.num_fields)]
        index = flat.values.type.get_field_index("output")
        fields[index] = pa.array(data, pa.binary()).view(pa.string())
        values = pa.StructArray.from_arrays(fields, fields=list(flat.values.type))
        return pa.chunked_array([pa.ListArray.from_arrays(flat.offsets, values)])

    root = _copy(bad_revision, tmp_path)
    _rewrite(root, bad_attempt)
    assert _verify(root, tmp_path) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "column 'attempts' holds text that is not valid UTF-8" in err, err
