"""Opening one SQLite file (WAL) that several runs share: the generator's call cache and the
scorer's embedding cache, where two shells on the default cache are a normal way to work.

A file is checked before it is used: one that is not empty and does not begin as an SQLite database
does is refused (SQLite itself would take a file of one byte for an empty database and write over
it), one that is not a regular file too (a FIFO would block the opener), one cut short fails the
switch to WAL; one whose tables are not the caller's (another program's file at that path, a
cache edited by hand) is refused by `expect`, column for column, rather than failing a query
hours later with "no such column"."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from hteb_contract.common.atomic import open_regular
from hteb_contract.common.escape import visible

#: How long a run waits for another run that holds the file.
LOCK_WAIT_S = 60.0

#: How every SQLite database file begins.
HEADER = b"SQLite format 3\x00"

#: A column as PRAGMA table_info describes it: name, declared type, NOT NULL, default, primary key.
Column = tuple[str, str, int, object, int]


class WrongSchema(sqlite3.DatabaseError):
    """A table of the file whose columns are not the ones its user reads and writes."""


def open_wal(
    path: Path,
    *statements: str,
    expect: Mapping[str, str] | None = None,
    isolation_level: Literal["DEFERRED"] | None = "DEFERRED",
) -> sqlite3.Connection:
    """A connection in WAL mode with `statements` (CREATE TABLE IF NOT EXISTS ...) run.

    `expect` maps a table's name to its columns as CREATE TABLE spells them ("key TEXT PRIMARY KEY,
    dim INTEGER"): each such table the file already holds must have exactly those columns, checked
    before `statements` run (WrongSchema, one line, otherwise).

    Switching a new file to WAL, or creating a table while another connection does the same, can
    be refused at once as "database is locked" without SQLite's busy wait; the set-up is
    idempotent, so it is tried again until LOCK_WAIT_S has passed. Raises sqlite3.Error, or OSError
    for a path that is not a regular file."""
    _check_header(Path(path))
    db = sqlite3.connect(path, isolation_level=isolation_level, timeout=LOCK_WAIT_S)
    deadline = time.monotonic() + LOCK_WAIT_S
    pause = 0.01
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            for table, columns in (expect or {}).items():
                _check_table(db, table, columns)
            for statement in statements:
                db.execute(statement)
            db.commit()
            return db
        except sqlite3.Error as err:
            locked = isinstance(err, sqlite3.OperationalError) and "locked" in str(err)
            if not locked or time.monotonic() > deadline:
                db.close()  # any refusal: no connection is left open behind it
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.5)


def _check_header(path: Path) -> None:
    """sqlite3.DatabaseError unless the file at `path` is absent, empty or begins as a database does."""
    try:
        with open_regular(path, follow_links=True) as handle:
            head = handle.read(len(HEADER))
    except FileNotFoundError:
        return
    if head and head != HEADER:
        raise sqlite3.DatabaseError("file is not a database")


def _columns(db: sqlite3.Connection, table: str) -> list[Column]:
    return [
        (name, kind.upper(), notnull, default, pk)
        for _, name, kind, notnull, default, pk in db.execute("SELECT * FROM pragma_table_info(?)", (table,))
    ]


def _check_table(db: sqlite3.Connection, table: str, columns: str) -> None:
    """WrongSchema unless `table` is absent from `db` or has the columns `columns` declares."""
    have = _columns(db, table)
    if not have:
        return
    with sqlite3.connect(":memory:") as model:
        model.execute(f'CREATE TABLE "{table}" ({columns})')
        want = _columns(model, table)
    model.close()
    if have != want:
        raise WrongSchema(f"its table {table} has the columns ({_spelled(have)}), not ({_spelled(want)})")


def _spelled(columns: list[Column]) -> str:
    """Columns as CREATE TABLE spells them, every character that would act on a terminal escaped."""
    return ", ".join(
        visible(f"{name} {kind}".strip() + (" NOT NULL" if notnull else "") + (" PRIMARY KEY" if pk else ""))
        for name, kind, notnull, _, pk in columns
    )
