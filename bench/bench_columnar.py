"""Item checks record by record (the old path) against the columnar checks (the new), in one run,
on a whole revision. On demand, not a test (it reads a full-size revision):

    python bench/bench_columnar.py [--store file:///work/main/.hteb/store] [--revision noise-1339]

Every path first runs once on the revision's first dataset (what a process pays once, such as the
pandas that pyarrow imports for its first Python scalar, is no path's cost), then old and new are
timed, each on a freshly opened revision (opening, the sha256 of every file, is left out: the same
for both; `open_s` gives it): (a) `verify`'s content check (`Revision.check_content`); (b) the
scorer's read, what `hteb-score` takes from the revision: `read_revision` reads each dataset's source
copy and variants, checked before the model loads, and the scoring loop (`DatasetGroups`) reads the
variants again; old: each variant's records built and checked one by one, as `revision_variants` got
them; new: `Revision.item_columns` (the second read decodes only the columns it gives, of files the
first cleared, their bytes hashed again); each pass is also given alone; (c) the generator's write of
every items file into a temporary folder (the store is only read; `write_paths`): old, each file's
records checked one by one; new, what the generator now hands over, the noise rules' item tables
(`noise.noise_tables` of the revision's own sources), checked as one and encoded
(`write_item_tables`); the record path (`write_items`, what an LLM run's records take) beside them,
and the new path's parts (the columnar checks, parquet encoding).
Prints one JSON object: per path the records, wall and CPU seconds (this process's, steadier than
wall time on a shared machine) and their ratios; for verify and write the floor, the CPU seconds a
path spends whatever its checks cost (verify: each source copy read and checked, every items file
hashed and decoded; write: encoding), and the most ratio it leaves.
The old path is the per-record code the new one keeps for wording (`Revision._records_one_by_one`;
the writer's loop as it was), run on every row; the three writers' files are compared byte for byte.

One run on noise-1339 (418,960 records, 75 items files; 2 cores, the background scoring paused),
wall s (CPU s) old -> new:

    verify  18.79 (18.89) -> 0.83 (0.91): 22.6x wall, 20.7x CPU; floor 0.49 CPU s (at most 38.3x)
    read    33.47 (33.67) -> 1.22 (1.30): 27.5x wall, 25.8x CPU
            first pass 16.63 -> 0.98 (17.0x), second 16.83 -> 0.24 (70.7x)
    write   20.15 (20.10) -> 0.84 (0.80): 24.0x wall, 25.2x CPU; floor (encoding) 0.59 CPU s
            record path (an LLM run's records) 2.21 s (9.1x); new parts: checks 0.13, encoding 0.59

Beyond its floor, verify spends the columnar checks (one table per dataset), the source texts as
sorted columns, and the memory a process that has not yet held a revision's Arrow buffers faults
in; the write spends little beyond encoding because the rules build their columns directly (a
record per text and reading its 30 attributes back cost 1.4 s of the record path's 2.2).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable, Sequence, Sized
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from hteb_contract import revision as rev
from hteb_contract.arrow import arrow_schema
from hteb_contract.columnar import suspect_rows
from hteb_contract.errors import ContractError, IntegrityError
from hteb_contract.item_columns import ItemColumns
from hteb_contract.records import ItemRecord
from hteb_contract.parquet_io import write_parquet, write_table
from hteb_contract.source_values import CORPUS_TABLE
from hteb_contract.stores import open_store
from hteb_contract.validation import validate


def _files(revision: rev.Revision) -> list[tuple[str, str, int]]:
    return [
        (name, transformation, seed) for name in revision.selected for transformation, seed in revision.variants(name)
    ]


def verify_old(revision: rev.Revision) -> int:
    """check_content as it was: every file's records built and checked one by one, then the missing texts."""
    records = 0
    for name, transformation, seed in _files(revision):
        rel = rev.items_path(name, transformation, seed)
        texts = revision._texts_of(name)
        found = {
            r.ref
            for r in revision._records_one_by_one(revision._read_items(rel), name, transformation, seed, rel, texts)
        }
        if any(ref not in found for ref in texts):
            raise IntegrityError(f"{rel}: a source text has no record")
        records += len(found)
    return records


def verify_new(revision: rev.Revision) -> int:
    return revision.check_content().records


def records_old(revision: rev.Revision, name: str, transformation: str, seed: int) -> list[ItemRecord]:
    """What `revision_variants` got of a variant before: every record built and checked one by one."""
    rel = rev.items_path(name, transformation, seed)
    return revision._records_one_by_one(
        revision._read_items(rel), name, transformation, seed, rel, revision._texts_of(name)
    )


def columns_new(revision: rev.Revision, name: str, transformation: str, seed: int) -> ItemColumns:
    return revision.item_columns(name, transformation, seed)


def scorer_read(revision: rev.Revision, read: Callable[[rev.Revision, str, str, int], Sized]) -> list[Any]:
    """The scorer's inputs from the revision, as `hteb-score` takes them: `read_revision` reads every
    dataset's source copy and variants (checked before the model loads), then the scoring loop
    (`DatasetGroups`) reads them again, dataset by dataset. [wall, CPU, records] of each pass."""

    def one_pass() -> int:
        records = 0
        for name in revision.selected:
            revision.source(name)
            records += sum(len(read(revision, name, *variant)) for variant in revision.variants(name))
        return records

    return [_timed(one_pass), _timed(one_pass)]


def io_only(revision: rev.Revision) -> int:
    """What every path reads whatever it checks: each source copy (read and checked as a SourceDataset)
    and the bytes of each items file, hashed against the manifest and decoded (every column)."""
    rows = 0
    for name, transformation, seed in _files(revision):
        revision.source(name)
        rows += revision._read_items(rev.items_path(name, transformation, seed)).num_rows
    return rows


def write_old(root: Path, name: str, transformation: str, seed: int, records: list[ItemRecord]) -> None:
    """write_items as it was: each record checked (its file, the JSON Schema, its attempts), then rows to parquet."""
    what = f"{name}/{rev.split_name(transformation, seed)}"
    rows = []
    for index, record in enumerate(sorted(records, key=lambda r: r.ref)):
        if (record.dataset, record.transformation, record.seed) != (name, transformation, seed):
            raise ContractError(f"{what} item {index}: belongs to another dataset/transformation/seed")
        if record.split == CORPUS_TABLE:
            raise ContractError(f"{what} item {index}: a {record.split} text in the items file")
        row = record.to_row()
        validate("item", row, what=f"{what} item {index}")
        contradiction = record.contradiction()
        if contradiction is not None:
            raise ContractError(f"{what} item {index}: the record contradicts its own attempts: {contradiction}")
        rows.append(row)
    write_parquet(root / rev.items_path(name, transformation, seed), rows, schema=arrow_schema("item"))


def warm(revision: rev.Revision) -> None:
    """Every path run once on a small revision before any is timed: what a process pays once (imports,
    such as the pandas that pyarrow loads on its first Python scalar, schema compiles) is no path's cost."""
    verify_old(revision)
    verify_new(revision)
    io_only(revision)
    for read in (records_old, columns_new):
        scorer_read(revision, read)


def _timed(run: Callable[[], Any]) -> tuple[float, float, Any]:
    """(wall seconds, CPU seconds of this process, the result) of a call."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = run()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _figures(records: int, old: Sequence[float], new: Sequence[float]) -> dict[str, Any]:
    """One path's figures from its (wall, CPU) seconds, old and new."""
    return {
        "records": records,
        "old_s": round(old[0], 3),
        "new_s": round(new[0], 3),
        "ratio": round(old[0] / new[0], 1),
        "old_cpu_s": round(old[1], 3),
        "new_cpu_s": round(new[1], 3),
        "cpu_ratio": round(old[1] / new[1], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default="file:///work/main/.hteb/store")
    parser.add_argument("--revision", default="noise-1339")
    args = parser.parse_args()
    store = open_store(args.store)

    def fresh() -> rev.Revision:
        return store.fetch(args.revision)

    open_s = _timed(fresh)[0]  # the manifest, layout and sha256 of every file: the same in both paths
    warm(store.fetch(args.revision, datasets=fresh().dataset_names()[:1]))
    out: dict[str, Any] = {"store": args.store, "revision": args.revision, "open_s": round(open_s, 3)}
    (*old_s, old_n), (*new_s, new_n), (*io_s, _) = (
        _timed(partial(path, fresh()))  # opened outside the timing
        for path in (verify_old, verify_new, io_only)
    )
    assert old_n == new_n, (old_n, new_n)
    out["verify"] = {**_figures(new_n, old_s, new_s), **_bound(old_s, io_s)}
    old_passes, new_passes = scorer_read(fresh(), records_old), scorer_read(fresh(), columns_new)
    assert [n for *_, n in old_passes] == [n for *_, n in new_passes], (old_passes, new_passes)
    out["read"] = {
        **_figures(new_passes[0][2], *(np.sum([p[:2] for p in ps], axis=0) for ps in (old_passes, new_passes))),
        "first_pass": _figures(new_passes[0][2], old_passes[0][:2], new_passes[0][:2]),
        "second_pass": _figures(new_passes[1][2], old_passes[1][:2], new_passes[1][:2]),
    }
    out["write"] = write_paths(fresh())
    print(json.dumps(out, indent=1))


def write_paths(revision: rev.Revision) -> dict[str, Any]:
    """The generator's write of every items file of a rule-made revision, into a temporary folder:
    old, each file's records checked one by one (`write_old`); new, what the generator now hands
    over, each rule's item table (`noise.noise_tables` of the revision's own sources), checked as one
    and encoded (`write_item_tables`, as `write_revision` calls it). Both are given what they write
    (records, tables: made before the timing). The record path (`write_items`: records to a table,
    the columnar checks per file) is what an LLM run's records take; the new path's parts (checks,
    encoding) and the hand-over (a record per text, against a table per file) are timed alone."""
    from hteb_generate.transform.noise import noise_tables

    files, records = _files(revision), 0
    seeds = {seed for _, _, seed in files}
    tables = {}
    for name in revision.selected:
        for seed in seeds:
            rules = [t for t, s in revision.variants(name) if s == seed]
            tables.update(
                {
                    (name, rule, seed): table
                    for rule, table in noise_tables(seed, name, revision.source(name), rules).items()
                }
            )
    old_s, record_s = np.zeros(2), np.zeros(2)
    with tempfile.TemporaryDirectory() as tmp:
        old_root, new_root, record_root = Path(tmp) / "old", Path(tmp) / "new", Path(tmp) / "records"
        for name, transformation, seed in files:  # one file's records in memory at a time
            items = revision.items(name, transformation, seed)
            records += len(items)
            old_s += _timed(lambda: write_old(old_root, name, transformation, seed, items))[:2]
            record_s += _timed(lambda: rev.write_items(record_root, name, transformation, seed, items))[:2]
        *new_s, paths = _timed(lambda: rev.write_item_tables(new_root, tables))
        for path in paths:
            rel = path.relative_to(new_root)
            assert (old_root / rel).read_bytes() == path.read_bytes() == (record_root / rel).read_bytes(), rel
        checks = _timed(lambda: suspect_rows(pa.concat_tables(tables.values())))
        encode = _timed(lambda: [write_table(Path(tmp) / "parts.parquet", table) for table in tables.values()])
    return {
        **_figures(records, old_s, new_s),
        **_bound(old_s, encode),
        "records_path": _figures(records, old_s, record_s),
        "parts_cpu_s": {"checks": round(checks[1], 3), "encode": round(encode[1], 3)},
    }


def _bound(old: Sequence[float], floor: Sequence[float]) -> dict[str, Any]:
    """The CPU seconds every new path spends whatever else it saves (`floor`), and the most the
    ratio can then be: old CPU / floor CPU."""
    return {"floor_cpu_s": round(floor[1], 3), "floor_cpu_ratio": round(old[1] / floor[1], 1)}


if __name__ == "__main__":
    main()
