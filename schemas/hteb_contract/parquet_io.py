"""Parquet files of plain rows: written with stable bytes, read back (from a path or verified bytes) with
every failure a SourceError naming the file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

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

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", write_statistics=False, store_schema=False)
    atomic_write_bytes(Path(path), sink.getvalue().to_pybytes())


def read_parquet_rows(path: Path | bytes, what: str) -> tuple[pa.Schema, list[dict[str, Any]]]:
    """The Arrow schema and rows of a parquet file (or of its bytes); one that cannot be read or
    converted to Python values is a SourceError naming `what`."""
    table = read_parquet_table(path, what)
    return table.schema, table_rows(table, what)


def read_parquet_table(path: Path | bytes, what: str, columns: Sequence[str] | None = None) -> pa.Table:
    """The Arrow table of a parquet file (or of its bytes; `columns`: only those); one that cannot be read is a
    SourceError naming `what`."""
    source = pa.BufferReader(path) if isinstance(path, bytes) else path
    try:
        with pq.ParquetFile(source) as handle:  # not pq.read_table: the dataset layer costs 5 ms a file
            return handle.read(None if columns is None else list(columns))
    except (pa.ArrowException, OSError, ValueError, OverflowError) as err:
        raise SourceError(f"{what}: not a readable parquet file ({first_line(err)})") from None


def table_rows(table: pa.Table, what: str) -> list[dict[str, Any]]:
    """The rows of a table read from a parquet file; values Python cannot hold are a SourceError naming `what`."""
    try:
        return table.to_pylist()
    except (pa.ArrowException, OSError, ValueError, OverflowError) as err:
        raise SourceError(f"{what}: not a readable parquet file ({first_line(err)})") from None
