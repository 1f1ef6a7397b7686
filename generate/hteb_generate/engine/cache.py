"""Every LLM call cached on disk, so a killed run resumes where it stopped and a rerun is free.

SQLite in WAL mode with synchronous=FULL: a committed batch survives kill -9, an interrupted one
is simply absent. The key is the sha256 of (kind, model, model revision, full messages,
sampling parameters, seed) and of the engine's *setup* — everything that can change a model's answer.

The setup (`engine_plan.engine_setup`) is what the request does not say: the engine kind, the engine
options that move numbers (dtype, head dtype, tensor-parallel size, context, memory share), the torch,
vLLM and transformers versions, the GPU model (or "cpu") and VLLM_BATCH_INVARIANT. Answers made on
another setup are keyed apart: they are simply not hits, so a run resumed on other software or GPUs
makes its answers again there, and every answer a revision reads was made on the setup its manifest
records (a cache can hold several setups' answers side by side; nothing is refused or overwritten).

Caches written before setups were keyed hold their entries under keys without one. The first setup
that opens such a cache for a model (model, revision, engine kind) adopts them: its keys stay the old
ones, so an existing cache keeps working on the machine it was made on, and any other setup is keyed
apart from then on. The adopting setup is stored in the cache (table `legacy_setups`). A fresh cache
has no such entries: every setup is keyed.

Chat entries are of kind `chat/2`: the value holds the reply and its finish reason. Entries of the
first kind (`chat`, the reply's text alone) are never read as the new kind: their keys differ. A
request's `top_k` enters its key only when set (0, the whole vocabulary, keeps the keys it had).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.common.sqlite_wal import open_wal

from hteb_generate.engine.base import ChatRequest, ChatResult, Conversation, Engine

#: The cache's tables, by name: their columns (the file's own are checked against them when it is opened).
TABLES = {"calls": "key TEXT PRIMARY KEY, value TEXT NOT NULL", "legacy_setups": "scope TEXT PRIMARY KEY, setup TEXT"}
CHAT_KIND = "chat/2"  # {"text", "finish_reason"}; "chat" held the text alone


class CallCache:
    """A key -> JSON value table in one SQLite file."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = open_wal(path, "PRAGMA synchronous=FULL", expect=TABLES, isolation_level=None)
            with self.db:
                self.db.execute("BEGIN IMMEDIATE")  # one opener decides whether the cache predates setups
                tables = {row[0] for row in self.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                if "legacy_setups" not in tables:
                    self.db.execute(f"CREATE TABLE IF NOT EXISTS calls ({TABLES['calls']})")
                    self.db.execute(f"CREATE TABLE legacy_setups ({TABLES['legacy_setups']})")
                    if "calls" in tables:  # written before setups were keyed: its entries await their setup
                        self.db.execute("INSERT INTO legacy_setups (scope, setup) VALUES ('', NULL)")
        except (OSError, sqlite3.Error) as err:
            raise HtebError(f"cache {path} is not usable ({err})") from None

    def legacy_owner(self, scope: str, setup: dict[str, Any]) -> bool:
        """Whether `setup` owns the entries of `scope` (a model at a revision on an engine kind) written
        before setups were keyed: the first setup to ask for a scope of such a cache adopts them (and
        keeps their keys); a cache made since has none (False)."""
        text = json.dumps(setup, sort_keys=True)
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            if self.db.execute("SELECT 1 FROM legacy_setups WHERE scope = ''").fetchone() is None:
                return False
            row = self.db.execute("SELECT setup FROM legacy_setups WHERE scope = ?", (scope,)).fetchone()
            if row is None:
                self.db.execute("INSERT INTO legacy_setups (scope, setup) VALUES (?, ?)", (scope, text))
                return True
            return bool(row[0] == text)

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), 500):
            chunk = unique[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, value in self.db.execute(f"SELECT key, value FROM calls WHERE key IN ({marks})", chunk):
                found[key] = json.loads(value)
        return found

    def put_many(self, items: dict[str, Any]) -> None:
        """Store a batch in one transaction (all or nothing)."""
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")  # take the write lock first, under the busy wait
            self.db.executemany(
                "INSERT OR REPLACE INTO calls (key, value) VALUES (?, ?)",
                [(k, json.dumps(v, ensure_ascii=False)) for k, v in items.items()],
            )

    def close(self) -> None:
        self.db.close()


def _key(payload: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class CachedEngine(Engine):
    """Wraps an engine (or, lazily, the factory that loads it: a fully cached run never loads a model).

    `calls` counts requests sent to the model, `hits` requests answered without a call of their
    own (from the cache, or as a repeat of a request in the same batch): calls + hits = requests.
    Misses go to the model in chunks of `commit_every` (sorted by key, so a chunk's members do not
    depend on the caller's order), each committed as soon as it is answered; an engine may answer
    several chunks at once (`chat_results_many`), and a chunk is the same whoever answers it.
    """

    def __init__(
        self,
        loader: Any,
        cache: CallCache,
        *,
        model_id: str,
        revision: str,
        name: str,
        commit_every: int = 256,
        setup: dict[str, Any] | None = None,
    ) -> None:
        self._loader = loader
        self._inner: Engine | None = None
        self.cache, self.commit_every = cache, commit_every
        self.model_id, self.revision, self.name = model_id, revision, name
        #: what else changes an answer (engine_plan.engine_setup); None: keys without one (a test's engine)
        self.setup = setup
        keyed = setup is not None and not cache.legacy_owner(f"{model_id}@{revision}/{name}", setup)
        self._setup_key = {"setup": setup} if keyed else {}
        self.calls = self.hits = 0
        self.on_progress: Any = None  # called with the number of requests each step just answered
        #: the loaded engine's facts (Engine.facts), kept as it closes; None: no model was loaded
        self.found: list[dict[str, Any]] | None = None

    @property
    def inner(self) -> Engine:
        if self._inner is None:
            self._inner = self._loader() if callable(self._loader) else self._loader
        return self._inner

    def close(self) -> None:
        """Close the engine if it was loaded (the cache stays open for its owner)."""
        if self._inner is not None:
            try:
                self.found = self._inner.facts()
            finally:  # closed whatever its facts did
                self._inner.close()
                self._inner = None  # loaded again if asked again

    def _base(self, kind: str) -> dict[str, Any]:
        return {"kind": kind, "model": self.model_id, "revision": self.revision, **self._setup_key}

    def _cached(self, keys: list[str], run: Any) -> list[Any]:
        """Answers for `keys`: from the cache, else from `run(chunks)`, which yields (chunk index,
        values) as each chunk is done; each chunk is committed as soon as it is back."""
        found = self.cache.get_many(keys)
        missing = sorted({k for k in keys if k not in found})  # chunks depend on the set, not the order
        self.hits += len(keys) - len(missing)  # a repeat of a pending request is answered by its one call
        self._report(len(keys) - len(missing))  # from the cache, at once
        chunks = [missing[start : start + self.commit_every] for start in range(0, len(missing), self.commit_every)]
        for index, values in run(chunks) if chunks else ():  # a fully cached call loads no model
            fresh = dict(zip(chunks[index], values))
            self.cache.put_many(fresh)
            self.calls += len(fresh)
            found.update(fresh)
            self._report(len(fresh))
        return [found[k] for k in keys]

    def _report(self, answered: int) -> None:
        if self.on_progress is not None:
            self.on_progress(answered)

    def chat_results(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        by_key = {}
        keys = []
        for request in requests:
            fields = asdict(request)
            if not fields["top_k"]:  # the whole vocabulary: the key such a request always had
                del fields["top_k"]
            key = _key({**self._base(CHAT_KIND), **fields})
            by_key[key] = request
            keys.append(key)

        def run(chunks: list[list[str]]) -> Iterator[tuple[int, list[dict[str, Any]]]]:
            for index, results in self.inner.chat_results_many([[by_key[k] for k in c] for c in chunks]):
                yield index, [asdict(result) for result in results]

        return [ChatResult(**value) for value in self._cached(keys, run)]

    def next_token_logprobs(
        self, conversations: Sequence[Conversation], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        by_key = {}
        keys = []
        for conversation in conversations:
            key = _key({**self._base("logprobs"), "messages": conversation, "candidates": list(candidates)})
            by_key[key] = conversation
            keys.append(key)
        return self._cached(
            keys,
            lambda chunks: self.inner.next_token_logprobs_many([[by_key[k] for k in c] for c in chunks], candidates),
        )


@dataclass(frozen=True)
class Engines:
    """The run's engines by role (`engine_plan.engine_slots` decides them): the judge is the generator
    itself when both are one model, None without a judge."""

    generator: CachedEngine
    judge: CachedEngine | None

    def distinct(self) -> list[CachedEngine]:
        """Each engine once (what the call counters sum over)."""
        if self.judge is None or self.judge is self.generator:
            return [self.generator]
        return [self.generator, self.judge]
