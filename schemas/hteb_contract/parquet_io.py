"""The one reader and encoder of Parquet (issue 46): files of plain rows written with stable bytes, tables
and footers read back (from a path, an open file or verified bytes) with every failure one line naming the
file. tests/test_inputs.py fails when library code reads or encodes Parquet anywhere else."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from hteb_contract.errors import SourceError, first_line


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> None:
    """Rows to parquet with stable bytes (no pandas metadata, fixed writer settings), atomically.

    With `schema`, every file of a kind gets exactly those columns and types (see arrow.py);
    without, the types are inferred from the rows (the source copy, whose tables vary by dataset).
    """
    if schema is not None:
        table = pa.Table.from_pylist(rows, schema=schema)
    else:
        table = pa.Table.from_pylist(rows) if rows else pa.table({})
    write_table(path, table)


def write_table(path: Path, table: pa.Table) -> None:
    """An Arrow table to parquet with stable bytes (fixed writer settings, no stored schema), atomically."""
    from hteb_contract.common.atomic import atomic_write_bytes

    atomic_write_bytes(Path(path), table_bytes(table, write_statistics=False, store_schema=False))


def table_bytes(table: pa.Table, **settings: Any) -> bytes:
    """An Arrow table as the bytes of a zstd parquet file; `settings`: more of `pq.write_table`'s."""
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", **settings)
    return sink.getvalue().to_pybytes()


def read_parquet_rows(path: Path | bytes, what: str) -> tuple[pa.Schema, list[dict[str, Any]]]:
    """The Arrow schema and rows of a parquet file (or of its bytes); one that cannot be read or
    converted to Python values is a SourceError naming `what`."""
    table = read_parquet_table(path, what)
    return table.schema, table_rows(table, what)


def read_parquet_table(
    path: Path | bytes, what: str, columns: Sequence[str] | None = None, *, schema: pa.Schema | None = None
) -> pa.Table:
    """The Arrow table of a parquet file (or of its bytes; `columns`: only those; `schema`: exactly its
    columns, cast to its types); one that cannot be read, lacks a column or holds one that does not cast
    is a SourceError naming `what`.

    Read on the calling thread: Arrow's pool threads drop their hold on `bytes` (a Python buffer) after
    `read` returns, and one that does so while the interpreter exits aborts the process ("terminate called
    without an active exception", pyarrow 26) after a run that succeeded. One thread reads our files as fast.
    """
    source = pa.BufferReader(path) if isinstance(path, bytes) else path
    try:
        with pq.ParquetFile(source) as handle:  # not pq.read_table: the dataset layer costs 5 ms a file
            table = handle.read(None if columns is None else list(columns), use_threads=False)
        return table if schema is None else table.select(schema.names).cast(schema)
    except (pa.ArrowException, OSError, ValueError, OverflowError, KeyError) as err:
        raise SourceError(f"{what}: not a readable parquet file ({first_line(err)})") from None


def read_footer(path: Path | BinaryIO, what: str, error: Callable[[str], Exception] = SourceError) -> pq.FileMetaData:
    """A parquet file's footer (its row count, its schema), the rows unread; one that cannot be read is
    `error` naming `what`."""
    try:
        return pq.read_metadata(path)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as err:  # a footer's names are UTF-8 to pyarrow
        raise error(f"{what}: not a readable parquet file ({first_line(err)})") from None


def table_rows(table: pa.Table, what: str) -> list[dict[str, Any]]:
    """The rows of a table read from a parquet file; values Python cannot hold are a SourceError naming `what`."""
    try:
        return table.to_pylist()
    except (pa.ArrowException, OSError, ValueError, OverflowError) as err:
        raise SourceError(f"{what}: not a readable parquet file ({first_line(err)})") from None
