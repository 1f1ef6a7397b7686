"""The SQLite door (hteb_contract/common/sqlite_wal.py) on generated files: a table whose columns differ from
its user's (a column missing, one more, another type, another key) is refused when the file is opened, in one
line, and a file of the same columns opens; at each cache that opens a file through the door
(the scorer's embedding cache, the generator's call cache), such a table, bytes that are no database and a
database cut short are one line of HtebError before any use, never a sqlite3 traceback from a query."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest
from fuzz import examples
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hteb_contract.common.sqlite_wal import WrongSchema, open_wal
from hteb_contract.errors import HtebError
from hteb_generate.engine.cache import TABLES, CallCache
from hteb_score.encoding.cache import EMB, EmbeddingCache

NAMES = st.text(st.characters(min_codepoint=1, blacklist_categories=["Cs"]), min_size=1, max_size=8).filter(
    lambda name: '"' not in name
)
TYPES = st.sampled_from(["TEXT", "INTEGER", "BLOB", "REAL", "NUMERIC", ""])
HEADER = b"SQLite format 3\x00"


@st.composite
def columns(draw: st.DrawFn) -> list[tuple[str, str, bool]]:
    """Columns (name, type, NOT NULL) with distinct names, SQLite's names being case-blind."""
    found = draw(st.lists(st.tuples(NAMES, TYPES, st.booleans()), min_size=1, max_size=5))
    assume(len({name.casefold() for name, _, _ in found}) == len(found))
    return found


def _spelled(cols: list[tuple[str, str, bool]], key: int | None) -> str:
    return ", ".join(
        f'"{name}" {kind}'.rstrip() + (" NOT NULL" if notnull else "") + (" PRIMARY KEY" if at == key else "")
        for at, (name, kind, notnull) in enumerate(cols)
    )


def _made(path, table: str, spec: str) -> None:
    with sqlite3.connect(path) as db:
        db.execute(f'CREATE TABLE "{table}" ({spec})')
    db.close()


@settings(max_examples=examples(100), deadline=None)
@given(columns(), columns(), st.data())
def test_a_table_of_other_columns_is_refused_one_of_the_same_opens(tmp_path_factory, ours, theirs, data):
    folder = tmp_path_factory.mktemp("db")
    our_key = data.draw(st.none() | st.integers(0, len(ours) - 1))
    their_key = data.draw(st.none() | st.integers(0, len(theirs) - 1))
    spec = _spelled(ours, our_key)
    _made(folder / "same.sqlite", "t", spec)
    db = open_wal(folder / "same.sqlite", f"CREATE TABLE IF NOT EXISTS t ({spec})", expect={"t": spec})
    db.close()
    _made(folder / "other.sqlite", "t", _spelled(theirs, their_key))
    same = [(n, k.upper(), bool(nn), at == their_key) for at, (n, k, nn) in enumerate(theirs)] == [
        (n, k.upper(), bool(nn), at == our_key) for at, (n, k, nn) in enumerate(ours)
    ]
    if same:
        open_wal(folder / "other.sqlite", expect={"t": spec}).close()
        return
    with pytest.raises(WrongSchema) as refused:
        open_wal(folder / "other.sqlite", f"CREATE TABLE IF NOT EXISTS t ({spec})", expect={"t": spec})
    assert str(refused.value).startswith("its table t has the columns (") and "\n" not in str(refused.value)


def _emb_cache(folder):
    return EmbeddingCache(folder)


def _call_cache(folder):
    return CallCache(folder / "calls.sqlite")


#: Each cache: how it is opened on a folder, its file there and its tables.
CACHES = {
    "embedding cache": (_emb_cache, "embeddings.sqlite", {"emb": EMB}),
    "call cache": (_call_cache, "calls.sqlite", TABLES),
}


@st.composite
def altered(draw: st.DrawFn, tables: dict[str, str]) -> tuple[str, str]:
    """One of `tables`, with a column dropped, added, retyped or its key moved: (table, its new columns)."""
    table = draw(st.sampled_from(sorted(tables)))
    with sqlite3.connect(":memory:") as db:
        db.execute(f"CREATE TABLE t ({tables[table]})")
        cols = [(name, kind, notnull, pk) for _, name, kind, notnull, _, pk in db.execute("PRAGMA table_info(t)")]
    db.close()
    key = next((at for at, col in enumerate(cols) if col[3]), None)
    plain = [(name, kind, bool(notnull)) for name, kind, notnull, _ in cols]
    change = draw(st.sampled_from(["drop", "add", "retype", "rekey"]))
    if change == "drop":
        at = draw(st.integers(0, len(plain) - 1))
        assume(len(plain) > 1)
        plain.pop(at)
        key = None if key == at else (key if key is None or key < at else key - 1)
    elif change == "add":
        name = draw(NAMES)
        assume(name.casefold() not in {n.casefold() for n, _, _ in plain})
        plain.insert(draw(st.integers(0, len(plain))), (name, draw(TYPES), False))
        key = None if key is None else key + (plain[key][0] != cols[key][0])
    elif change == "retype":
        at = draw(st.integers(0, len(plain) - 1))
        kind = draw(TYPES.filter(lambda k: k != plain[at][1]))
        plain[at] = (plain[at][0], kind, plain[at][2])
    else:
        key = draw(st.none() | st.integers(0, len(plain) - 1).filter(lambda k: k != key))
    return table, _spelled(plain, key)


def _one_line_before_use(opener, folder) -> str:
    with pytest.raises(HtebError) as refused:
        opener(folder)
    assert "\n" not in str(refused.value) and type(refused.value) is HtebError
    return str(refused.value)


@pytest.mark.parametrize("kind", CACHES)
@settings(max_examples=examples(60), deadline=None)
@given(data=st.data())
def test_a_cache_whose_table_differs_is_one_line_when_opened(tmp_path_factory, kind, data):
    opener, name, tables = CACHES[kind]
    table, spec = data.draw(altered(tables))
    folder = tmp_path_factory.mktemp("cache")
    _made(folder / name, table, spec)
    message = _one_line_before_use(opener, folder)
    assert kind.split()[0] in message and str(folder) in message and f"its table {table} has the columns (" in message


@pytest.mark.parametrize("kind", CACHES)
@settings(max_examples=examples(60), deadline=None)
@given(garbage=st.binary(min_size=1, max_size=5000).filter(lambda b: not HEADER.startswith(b[:16])))
def test_bytes_that_are_no_database_are_one_line_when_opened(tmp_path_factory, kind, garbage):
    opener, name, _ = CACHES[kind]
    folder = tmp_path_factory.mktemp("cache")
    (folder / name).write_bytes(garbage)
    assert "is not a database" in _one_line_before_use(opener, folder)


@pytest.fixture(scope="module")
def full_caches(tmp_path_factory) -> dict[str, bytes]:
    """Each cache's file holding a few hundred rows (several pages), closed cleanly."""
    files = {}
    for kind, (opener, name, _) in CACHES.items():
        folder = tmp_path_factory.mktemp(kind.replace(" ", "-"))
        cache = opener(folder)
        if kind == "embedding cache":
            cache.put_many({f"k{i}": np.full(64, i, dtype=np.float32) for i in range(300)})
            cache._db.close()
        else:
            cache.put_many({f"k{i}": {"text": "x" * 200, "finish_reason": "stop"} for i in range(300)})
            cache.close()
        files[kind] = (folder / name).read_bytes()
    return files


@pytest.mark.parametrize("kind", CACHES)
@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_a_database_cut_short_is_one_line_when_opened(tmp_path_factory, full_caches, kind, data):
    opener, name, _ = CACHES[kind]
    whole = full_caches[kind]
    page = int.from_bytes(whole[16:18], "big")
    assert len(whole) > 4 * page
    cut = data.draw(st.integers(1, len(whole) // page - 1)) * page - data.draw(st.integers(0, page - 1))
    folder = tmp_path_factory.mktemp("cache")
    (folder / name).write_bytes(whole[:cut])
    _one_line_before_use(opener, folder)
