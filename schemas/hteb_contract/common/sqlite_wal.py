"""Opening one SQLite file (WAL) that several runs share: the generator's call cache and the
scorer's embedding cache, where two shells on the default cache are a normal way to work."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Literal

#: How long a run waits for another run that holds the file.
LOCK_WAIT_S = 60.0


def open_wal(
    path: Path, *statements: str, isolation_level: Literal["DEFERRED"] | None = "DEFERRED"
) -> sqlite3.Connection:
    """A connection in WAL mode with `statements` (CREATE TABLE IF NOT EXISTS ...) run.

    Switching a new file to WAL, or creating a table while another connection does the same, can
    be refused at once as "database is locked" without SQLite's busy wait; the set-up is
    idempotent, so it is tried again until LOCK_WAIT_S has passed. Raises sqlite3.Error."""
    db = sqlite3.connect(path, isolation_level=isolation_level, timeout=LOCK_WAIT_S)
    deadline = time.monotonic() + LOCK_WAIT_S
    pause = 0.01
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
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
