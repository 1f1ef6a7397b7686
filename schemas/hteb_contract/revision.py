"""A dataset revision on disk: what it holds, how it is sealed, how it is opened and verified.

Layout (also what `datasets.load_dataset(repo, config, revision=...)` reads on the Hub)::

    README.md                          dataset card: Hub metadata and configs (hteb_contract.card)
    eval.yaml                          the benchmark's task ids for Hub evaluation results (hub_eval.py)
    manifest.json                      hteb_contract/json/manifest.v2.schema.json; sha256 of every other file
    data/<Dataset>/<transformation>_<seed>.parquet   item records (hteb_contract/json/item.v3.schema.json)
    corpus/<Dataset>/<transformation>_<seed>.parquet perturbed corpus documents (opt-in, retrieval only; same schema)
    source/<Dataset>/dataset.json      the untouched source: metadata ...
    source/<Dataset>/<table>.parquet   ... and its tables (test, train, corpus, queries, qrels, ...)

A revision is untrusted input when read: paths are checked to stay inside the folder, every
file is checked against the manifest's sha256, and data is read only as parquet and JSON. A
hash only says the files are the ones sealed, not that what was sealed is sound, so the reader
also checks content: the layout the manifest declares (`load_manifest`), each source copy
(`Revision.source`) and, in one pass per items file, every record (`Revision.items`): the item
schema (finite numbers), the file it sits in, a text of the source, one record per text.
`Revision.check_content` runs those checks over every file of the opened datasets (`verify`).
Each items file is checked with Arrow compute (`columnar`, and a lookup of each record's source
text; `check_content` checks a dataset's files as one table);
only a file those checks cannot clear is checked record by record, which words the refusal, so
a refusal reads the same whichever path found it. The writer does the same, given records
(`write_items`, an LLM's) or item tables made in bulk (`write_item_tables`, the noise rules').
`Revision.item_columns` gives the scorer what it uses of the same records, checked the same way,
without a record per row; a file cleared once is read again (the scorer reads each dataset twice)
without its checks, its bytes hashed against the manifest as on every read.

Corpus records (`hteb-generate --corpus-noise`) are a part of their own: a retrieval dataset's
corpus titles and texts under a noise rule, read only by `Revision.corpus_items` (the scorer's
`--corpus-robustness`), never mixed into the items a variant is scored on. The manifest's
`corpus_perturbed` says whether a revision has them; a revision without the key has none.

Manifest fields added after the first revisions were published carry a stated default
(`MANIFEST_DEFAULTS`): a revision that lacks one means that default, so a field a later writer adds
never makes an older revision differ from its regeneration (`hteb_contract.reproduction`).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hteb_contract.arrow import arrow_schema
from hteb_contract.card import SourceLicense, SourceTables, front_matter
from hteb_contract.atomic import (
    atomic_write_json,
    atomic_write_text,
    canonical_json,
    file_kind,
    open_regular,
    parse_json_object,
    sha256_bytes,
    sha256_file,
)
from hteb_contract.columnar import suspect_rows
from hteb_contract.errors import ContractError, IntegrityError, SourceError, first_line
from hteb_contract.item_columns import COLUMNS, ItemColumns
from hteb_contract.item_table import NotPlain, records_table, table_records
from hteb_contract.records import ItemRecord
from hteb_contract.sources import (
    CORPUS_TABLE,
    DatasetInfo,
    SourceDataset,
    read_parquet_table,
    read_source_parquet,
    table_rows,
    write_parquet,
    write_source_parquet,
    write_table,
)
from hteb_contract.tasks import TextRef
from hteb_contract.hub_eval import revision_eval_yaml
from hteb_contract.taxonomy import AXIS_OF, TRANSFORMATIONS
from hteb_contract.validation import SCHEMA_VERSIONS, validate

#: Reports progress over an iterable (description, total) and yields its items: `tqdm`'s shape,
#: `lambda items, desc, total: tqdm(items, desc=desc, total=total)`. The contract prints nothing itself.
Progress = Callable[[Iterable[Any], str, int], Iterable[Any]]


def quiet(items: Iterable[Any], desc: str, total: int) -> Iterable[Any]:
    """The default `Progress`: no report."""
    return items


#: Manifest fields a later writer added, and what a revision made before them means by lacking one.
#: A new content field of the manifest joins this table, or the committed sample is regenerated with it
#: (tests/generate/test_sample_reproduces.py fails until one of the two is done).
MANIFEST_DEFAULTS: dict[str, Any] = {
    "corpus_perturbed": False,  # --corpus-noise: a revision made before it holds no perturbed corpus
}


def with_defaults(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """`manifest` with every absent field of `MANIFEST_DEFAULTS` set to its default."""
    return {**MANIFEST_DEFAULTS, **manifest}


MANIFEST = "manifest.json"
CARD = "README.md"
EVAL = "eval.yaml"  # the benchmark's task ids, which Hub evaluation results attach to (hteb_contract.hub_eval)
#: Task types whose corpus a revision may hold perturbed (what the scorer's corpus robustness reads).
CORPUS_TASK_TYPES = ("Retrieval",)
#: Top-level folder -> what its files hold; `data` and `corpus` files are named <transformation>_<seed>.parquet.
PARTS = {"data": "item records", "source": "source copy", "corpus": "perturbed corpus records"}
_SPLIT = re.compile(r"^(?P<transformation>[a-z][a-z_]*?)_(?P<seed>-?\d+)$")


def split_name(transformation: str, seed: int) -> str:
    """The Hub split name of one (transformation, seed): `paraphrasing_1337` (matches ^\\w+$)."""
    return f"{transformation}_{seed}"


def parse_split(name: str) -> tuple[str, int]:
    """(transformation, seed) of a split name `paraphrasing_1337`; another name is a SourceError."""
    variant = _variant_of(f"{name}.parquet")
    if variant is None:
        raise SourceError(f"{name!r} is not a split name <transformation>_<seed> (e.g. paraphrasing_1337)")
    return variant


def items_path(dataset: str, transformation: str, seed: int) -> str:
    return f"data/{dataset}/{split_name(transformation, seed)}.parquet"


def corpus_path(dataset: str, transformation: str, seed: int) -> str:
    return f"corpus/{dataset}/{split_name(transformation, seed)}.parquet"


def write_items(root: Path, dataset: str, transformation: str, seed: int, records: Sequence[ItemRecord], *,
                corpus: bool = False) -> Path:
    """Validate item records (`corpus`: perturbed corpus records) against the contract, then write
    them (sorted, stable bytes): `write_item_table` of their table. A value JSON would not hold as
    its column's type (`NotPlain`) makes no table: every record is then checked alone, which words
    the refusal."""
    ordered = sorted(records, key=lambda r: r.ref)
    try:
        table = records_table(ordered)
    except (NotPlain, pa.ArrowException, TypeError, ValueError, OverflowError, AttributeError):
        what = _file_what(dataset, transformation, seed, corpus)
        rows = []
        for index, record in enumerate(ordered):
            rows.append(record.to_row())
            _check_row(rows[-1], index, what, (dataset, transformation, seed), corpus)
        path = Path(root) / (corpus_path if corpus else items_path)(dataset, transformation, seed)
        write_parquet(path, rows, schema=arrow_schema("item"))
        return path
    return write_item_table(root, dataset, transformation, seed, table, corpus=corpus)


def write_item_table(root: Path, dataset: str, transformation: str, seed: int, table: pa.Table, *,
                     corpus: bool = False) -> Path:
    """Validate an item table (`item_table.records_table`'s schema; `corpus`: perturbed corpus
    records) against the contract, then write it sorted by ref (stable bytes): `write_item_tables`
    of one."""
    return write_item_tables(root, {(dataset, transformation, seed): table}, corpus=corpus)[0]


#: The most rows `write_item_tables` checks as one table (memory stays bounded on a full-size revision).
CHECK_ROWS = 1_000_000


def write_item_tables(root: Path, tables: Mapping[Variant, pa.Table], *, corpus: bool = False,
                      progress: Progress = quiet, desc: str = "writing item tables") -> list[Path]:
    """Validate item tables, one per (dataset, transformation, seed) (`corpus`: perturbed corpus
    records), against the contract, then write each sorted by ref (stable bytes); a refusal writes none.

    Why tables: a generator that makes its texts in bulk (the noise rules) hands over columns, not a
    record per text. The tables are checked together with Arrow compute (`columnar`: every check is a
    row's own, so a file costs its rows, not some 200 Arrow calls); the rows those checks cannot clear
    (none, in sound files) are checked one by one, in order, which words the refusal (`_check_row`).
    `progress` reports each file written (as `desc`), once all are checked."""
    ordered: dict[Variant, pa.Table] = {}
    for (dataset, transformation, seed), table in tables.items():
        if not table.schema.equals(arrow_schema("item")):
            raise ContractError(f"{_file_what(dataset, transformation, seed, corpus)}: not an item table "
                                f"(its Arrow schema is not hteb_contract.arrow's item schema)")
        if not _sorted_by_ref(table):
            table = table.take(pc.sort_indices(table, [(name, "ascending") for name in _REF]))
        ordered[(dataset, transformation, seed)] = table
    batch: list[Variant] = []
    for variant in [*ordered, None]:
        if batch and (variant is None or sum(ordered[v].num_rows for v in batch) + ordered[variant].num_rows
                      > CHECK_ROWS):
            _check_tables({v: ordered[v] for v in batch}, corpus)
            batch = []
        if variant is not None:
            batch.append(variant)
    paths = []
    for (dataset, transformation, seed), table in progress(ordered.items(), desc, len(ordered)):
        paths.append(Path(root) / (corpus_path if corpus else items_path)(dataset, transformation, seed))
        write_table(paths[-1], table)
    return paths


def _check_tables(tables: Mapping[Variant, pa.Table], corpus: bool) -> None:
    """Sorted item tables checked as one; the first broken rule is a ContractError worded for its row."""
    together = pa.concat_tables(tables.values())
    bad = suspect_rows(together)
    start = 0
    for (dataset, transformation, seed), table in tables.items():
        mine = bad[start:start + table.num_rows]
        mine |= ~(_equals(table, dataset=dataset, transformation=transformation, seed=seed,
                          schema_version=SCHEMA_VERSIONS["item"])
                  & (_mask(pc.equal(table.column("split"), CORPUS_TABLE)) == corpus))
        suspects = np.flatnonzero(mine).tolist()
        if suspects:
            what = _file_what(dataset, transformation, seed, corpus)
            for index, row in zip(suspects, table.take(suspects).to_pylist()):
                _check_row(row, index, what, (dataset, transformation, seed), corpus)
        start += table.num_rows


def _file_what(dataset: str, transformation: str, seed: int, corpus: bool) -> str:
    return f"{'corpus of ' if corpus else ''}{dataset}/{split_name(transformation, seed)}"


def _sorted_by_ref(table: pa.Table) -> bool:
    """Whether the rows are in ref order (split, item id, field; code point order, as Python sorts
    `ItemRecord.ref`), each pair of neighbours compared with Arrow compute."""
    if table.num_rows < 2:
        return True
    after, before = table.slice(1), table.slice(0, table.num_rows - 1)
    ordered = np.zeros(table.num_rows - 1, dtype=bool)
    tied = np.ones(table.num_rows - 1, dtype=bool)
    for name in _REF:
        left, right = before.column(name), after.column(name)
        ordered |= tied & _mask(pc.less(left, right))
        tied &= _mask(pc.equal(left, right))
    return bool((ordered | tied).all())


def _check_row(row: Mapping[str, Any], index: int, what: str, where: tuple[str, str, int], corpus: bool) -> None:
    """One item row against its file and the contract; the first broken rule is a ContractError."""
    if (row.get("dataset"), row.get("transformation"), row.get("seed")) != where:
        raise ContractError(f"{what} item {index}: belongs to another dataset/transformation/seed")
    if (row.get("split") == CORPUS_TABLE) != corpus:
        raise ContractError(f"{what} item {index}: a {row.get('split')} text in the "
                            f"{'corpus' if corpus else 'items'} file")
    if row.get("schema_version") != SCHEMA_VERSIONS["item"]:
        raise ContractError(f"{what} item {index}: schema_version {row.get('schema_version')!r}; a revision is "
                            f"written in {SCHEMA_VERSIONS['item']}")
    ItemRecord.from_row(row, what=f"{what} item {index}")  # the item schema, then the record against its attempts


_REF = ("split", "item_id", "field")
#: A source text's column (`sources.TEXT_COLUMNS`) -> the item column that repeats it.
_ITEM_COLUMN = {"table": "split", "item_id": "item_id", "field": "field", "text": "original_text",
                "language": "source_language", "subset": "subset"}
_KEY = "ref key"


def _ref_key(table: pa.Table) -> pa.ChunkedArray:
    """split, item id and field of each row joined by a unit separator: a lookup key for a row's
    source text (two refs may share one only if a part holds the separator; callers compare the parts)."""
    return pc.binary_join_element_wise(*(table.column(name) for name in _REF), "\x1f")


def _mask(values: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A boolean Arrow result as a numpy mask, null read as False."""
    return pc.fill_null(values, False).to_numpy(zero_copy_only=False).astype(bool, copy=False)


def _equals(table: pa.Table, **values: Any) -> np.ndarray:
    """Rows whose columns hold the given values."""
    found = np.ones(table.num_rows, dtype=bool)
    for name, value in values.items():
        found &= _mask(pc.equal(table.column(name), value))
    return found


def manifest_source(info: DatasetInfo, *, origin: str, sample: int | None) -> dict[str, Any]:
    """The manifest's entry for one source dataset: names, pin, languages, subsets and what was transformed."""
    return {"name": info.name, "task_type": info.task_type, "mteb_task": info.mteb_task, "hf_path": info.hf_path,
            "hf_revision": info.hf_revision, "origin": origin, "languages": list(info.languages),
            "subsets": {name: list(codes) for name, codes in info.subsets.items()},
            "transformed_fields": info.transformed_fields(), "sample": sample}


#: (dataset, transformation, seed): what one items (or corpus) file holds.
Variant = tuple[str, str, int]


def write_revision(root: Path, sources: Iterable[SourceDataset], records: Iterable[ItemRecord],
                   manifest_fields: Mapping[str, Any], card_body: str, *,
                   tables: Mapping[Variant, pa.Table] | None = None,
                   corpus_tables: Mapping[Variant, pa.Table] | None = None, licenses: Sequence[SourceLicense] = (),
                   progress: Progress = quiet) -> dict[str, Any]:
    """Write a whole revision into the empty folder `root` and seal it; returns the manifest.

    The source copy of each dataset, one items file per (dataset, transformation, seed): the
    `records`' in the order first met, then each of `tables` (item tables made in bulk, as the noise
    rules make them: `write_item_table`); one corpus file per entry of `corpus_tables` (the manifest
    must then say `corpus_perturbed`); the dataset card (front matter from `hteb_contract.card` with
    the sources' `licenses`, then `card_body`), the manifest; `progress` reports each stage (sources,
    items and corpus files, sealing).
    """
    root, sources = Path(root), list(sources)
    tables, corpus_tables = dict(tables or {}), dict(corpus_tables or {})
    if root.exists() and any(root.iterdir()):
        raise ContractError(f"{root}: a revision is written into an empty folder")
    for dataset in progress(sources, "writing sources", len(sources)):
        write_source_parquet(dataset, root / "source" / dataset.name)
    records = list(records)
    grouped: dict[Variant, list[ItemRecord]] = {}
    for record in records:
        grouped.setdefault((record.dataset, record.transformation, record.seed), []).append(record)
    twice = sorted(set(grouped) & set(tables))
    if twice:
        raise ContractError(f"{'/'.join(map(str, twice[0]))}: given both as records and as a table")
    groups = [*grouped, *tables]
    if grouped:  # no bar for a stage that has nothing to do
        for (name, transformation, seed), group in progress(grouped.items(), "checking and writing items",
                                                            len(grouped)):
            write_items(root, name, transformation, seed, group)
    if tables:
        write_item_tables(root, tables, progress=progress, desc="checking and writing the rules' items")
    variants: dict[str, list[tuple[str, int]]] = {}
    for name, transformation, seed in groups:
        variants.setdefault(name, []).append((transformation, seed))
    corpus_variants: dict[str, list[tuple[str, int]]] = {}
    if corpus_tables:
        write_item_tables(root, corpus_tables, corpus=True, progress=progress, desc="writing the corpus")
    for name, transformation, seed in corpus_tables:
        corpus_variants.setdefault(name, []).append((transformation, seed))
    languages = {code for s in sources for code in s.info.languages} | {r.target_language for r in records
                                                                         if r.target_language}
    for table in tables.values():
        languages |= set(pc.unique(pc.drop_null(table.column("target_language"))).to_pylist())
    head = front_matter(manifest_fields.get("label", ""), [source_tables(s) for s in sources], variants,
                        corpus_variants, languages=languages,
                        rows=len(records) + sum(table.num_rows for table in tables.values()), licenses=licenses,
                        hub_sources=[s["hf_path"] for s in manifest_fields.get("sources", ())
                                     if str(s.get("origin", "")).startswith("hf://")])
    atomic_write_text(root / CARD, head + card_body)
    atomic_write_text(root / EVAL, revision_eval_yaml(manifest_fields, variants))
    return seal(root, manifest_fields, progress)


def source_tables(dataset: SourceDataset) -> SourceTables:
    """What the card says of a source copy (its `-original` configs)."""
    info = dataset.info
    return SourceTables(info.name, info.task_type, info.eval_split, info.train_split, tuple(dataset.tables))


def file_entries(root: Path, progress: Progress = quiet) -> list[dict[str, Any]]:
    """sha256, size and row count of every file of a revision folder except the manifest; a file
    that is not a regular one (a link, a FIFO) is an IntegrityError: it is not sealed."""
    root = Path(root)
    entries = []
    paths = sorted(disk_files(root, links=False, where=f"{root}"), key=PurePosixPath)
    for rel in progress(paths, "sealing (sha256)", len(paths)):
        path = root / rel
        if rel == MANIFEST:
            continue
        rows = _row_count(path, rel) if path.suffix == ".parquet" else None
        entries.append({"path": rel, "sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": rows})
    return entries


def _row_count(path: Path, rel: str) -> int:
    try:
        return pq.read_metadata(path).num_rows
    except (pa.ArrowException, OSError) as err:
        raise IntegrityError(f"{rel}: not a readable parquet file ({first_line(err)}); not sealed") from None


def content_hash(files: Iterable[Mapping[str, Any]]) -> str:
    """The revision's identity: sha256 over the sorted (path, sha256) pairs of its files.

    It covers every byte of every file but manifest.json (the item records, the source copy, the
    dataset card), so identical data published twice is the same revision, and one ParaPLUIE value
    rounded the other way is another one. A label never moves to another identity; whether a
    regeneration *reproduces* a revision (same texts, judge numbers within a tolerance) is a
    separate question, answered by `hteb_contract.reproduction.compare_revisions`.
    """
    pairs = sorted((f["path"], f["sha256"]) for f in files)
    return sha256_bytes(canonical_json(pairs))


def seal(root: Path, manifest_fields: Mapping[str, Any], progress: Progress = quiet) -> dict[str, Any]:
    """Hash every file, write manifest.json (validated) and return it. The last step of making a revision."""
    files = file_entries(root, progress)
    manifest = {
        "schema_version": SCHEMA_VERSIONS["manifest"],
        **manifest_fields,
        "files": files,
        "content_hash": content_hash(files),
    }
    manifest.setdefault("created", dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    validate("manifest", manifest, what=f"{root}/{MANIFEST}")
    atomic_write_json(Path(root) / MANIFEST, manifest)
    return manifest


def safe_relpath(path: str) -> PurePosixPath:
    """Refuse a manifest path that could escape the revision folder."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or "\\" in path or any(part in ("..", "") for part in pure.parts):
        raise IntegrityError(f"manifest lists an unsafe path {path!r} (absolute or escaping the revision)")
    return pure


def load_manifest(root: Path, *, links: bool = False) -> dict[str, Any]:
    """The manifest of a revision folder, checked against the schema, its own content hash, the
    taxonomy and the layout it declares (`links`: the folder's files may be symbolic links, as a Hub
    snapshot's are)."""
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise IntegrityError(f"{root}: no {MANIFEST} (not an HTEB revision)")
    try:
        with open_regular(path, follow_links=links) as handle:
            raw = handle.read()
    except OSError as err:
        raise IntegrityError(f"{path}: cannot be read ({err.strerror})") from None
    manifest = parse_json_object(raw, str(path), IntegrityError)
    label = manifest.get("label")
    validate("manifest", manifest, what=f"revision {label!r} ({path})" if isinstance(label, str) else str(path))
    seen: set[str] = set()
    for entry in manifest["files"]:
        safe_relpath(entry["path"])
        if entry["path"] in seen:
            raise IntegrityError(f"{path}: file {entry['path']} is listed twice")
        seen.add(entry["path"])
    unknown = [t for t in manifest["transformations"] if t not in AXIS_OF]
    if unknown:
        raise IntegrityError(f"{path}: transformation {unknown[0]!r} is not in the taxonomy "
                             f"({', '.join(TRANSFORMATIONS)})")
    if content_hash(manifest["files"]) != manifest["content_hash"]:
        raise IntegrityError(f"{path}: content_hash does not match the listed files (manifest edited?)")
    _check_layout(manifest, where=str(path))
    return manifest


def _variant_of(filename: str) -> tuple[str, int] | None:
    """(transformation, seed) of an items file name `paraphrasing_1337.parquet`; None for any other name,
    `paraphrasing_01337.parquet` included (only one file may hold a variant)."""
    match = _SPLIT.match(filename[: -len(".parquet")]) if filename.endswith(".parquet") else None
    variant = (match["transformation"], int(match["seed"])) if match else None
    return variant if variant and filename == f"{split_name(*variant)}.parquet" else None


def _check_layout(manifest: Mapping[str, Any], *, where: str) -> None:
    """What the reader relies on: each dataset declared once with its dataset.json, and every data
    file `data/<dataset>/<transformation>_<seed>.parquet` of a declared dataset, transformation and seed."""
    names = [s["name"] for s in manifest["sources"]]
    if len(set(names)) != len(names):
        raise IntegrityError(f"{where}: dataset {next(n for n in names if names.count(n) > 1)!r} is declared twice")
    transformations, seeds = set(manifest["transformations"]), set(manifest["seeds"])
    task_types = {s["name"]: s["task_type"] for s in manifest["sources"]}
    listed = set()
    for entry in manifest["files"]:
        parts = PurePosixPath(entry["path"]).parts
        if parts[0] not in PARTS:
            continue
        if len(parts) != 3 or parts[1] not in names:
            raise IntegrityError(f"{where}: file {entry['path']} is not in the folder of a declared dataset "
                                 f"({', '.join(names)})")
        variant = _variant_of(parts[2])
        if parts[0] != "source" and (variant is None or variant[0] not in transformations or variant[1] not in seeds):
            raise IntegrityError(f"{where}: file {entry['path']} is not named <transformation>_<seed>.parquet after "
                                 f"a declared transformation and seed")
        if parts[0] == "corpus" and not manifest.get("corpus_perturbed"):
            raise IntegrityError(f"{where}: file {entry['path']} holds perturbed corpus records, but the manifest "
                                 "does not say corpus_perturbed")
        if parts[0] == "corpus" and task_types[parts[1]] not in CORPUS_TASK_TYPES:
            raise IntegrityError(f"{where}: file {entry['path']}: a {task_types[parts[1]]} dataset has no perturbed "
                                 f"corpus (only {', '.join(CORPUS_TASK_TYPES)})")
        listed.add(entry["path"])
    missing = [n for n in names if f"source/{n}/dataset.json" not in listed]
    if missing:
        raise IntegrityError(f"{where}: dataset {missing[0]} has no source/{missing[0]}/dataset.json")


def _parquet_rows(path: Path, *, links: bool, what: str) -> int:
    """The row count a parquet file's footer gives; an unreadable footer is an IntegrityError naming `what`."""
    try:
        with open_regular(path, follow_links=links) as handle:
            return pq.read_metadata(handle).num_rows
    except (pa.ArrowException, OSError, UnicodeDecodeError) as err:  # a footer's names are UTF-8 to pyarrow
        raise IntegrityError(f"{what}: not a readable parquet file ({first_line(err)})") from None


def disk_files(root: Path, *, links: bool, where: str) -> set[str]:
    """The files under a revision folder (names starting with '.' aside, as `seal` leaves them out),
    found without opening any: a FIFO, device, socket or (unless `links`) symbolic link is an
    IntegrityError, so that nothing outside the folder is read and no read can block."""
    found, folders = set(), [Path(root)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                rel = Path(entry.path).relative_to(root).as_posix()
                if entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) or (links and entry.is_symlink() and entry.is_file()):
                    found.add(rel)
                else:
                    kind = file_kind(entry.stat(follow_symlinks=False).st_mode)
                    raise IntegrityError(f"{where}: {rel} is {kind}, not a regular file")
    return found


def _brief(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_columns(found: pa.Schema, what: str) -> None:
    """The file's columns are exactly the item schema's, with its Arrow types (arrow.py): a seed
    stored as 1337.0 passes the JSON Schema as an integer, not this."""
    expected = arrow_schema("item")
    for column in expected:
        index = found.get_field_index(column.name)
        if index < 0:
            raise IntegrityError(f"{what}: column {column.name!r} is missing")
        if not found.field(index).type.equals(column.type):
            raise IntegrityError(f"{what}: column {column.name!r} is {found.field(index).type}; the item schema "
                                 f"stores {column.type}")
    extra = [name for name in found.names if expected.get_field_index(name) < 0]
    if extra:
        raise IntegrityError(f"{what}: column {extra[0]!r} is not in the item schema")


@dataclass(frozen=True)
class Checked:
    """What `Revision.check_content` checked."""

    datasets: tuple[str, ...]
    files: int  # files whose sha256 matched the manifest when the revision was opened
    item_files: int
    records: int


@dataclass
class Revision:
    """An opened, verified revision folder; only the datasets it was opened for can be read."""

    root: Path
    manifest: dict[str, Any]
    revision_id: str  # Hub commit sha, or the content hash in a local store
    selected: tuple[str, ...] = ()  # the datasets whose files were verified by `open`
    links: bool = False  # files may be symbolic links (a Hub snapshot's are)
    _sources: dict[str, SourceDataset] = field(default_factory=dict, repr=False, compare=False)
    _texts: dict[str, dict[tuple[str, str, str], TextRef]] = field(default_factory=dict, repr=False, compare=False)
    _corpus_texts: dict[str, dict[tuple[str, str, str], TextRef]] = field(default_factory=dict, repr=False,
                                                                         compare=False)
    #: (dataset, corpus) -> its `_text_table`, built once per dataset and part
    _text_tables: dict[tuple[str, bool], pa.Table] = field(default_factory=dict, repr=False, compare=False)
    #: items and corpus files `_sound` cleared: read again (the scorer reads each dataset twice), their bytes
    #: are hashed against the manifest as ever, so they are the bytes cleared, and the checks are not run again
    _cleared: set[str] = field(default_factory=set, repr=False, compare=False)

    @classmethod
    def open(cls, root: Path, *, datasets: Iterable[str] | None = None, revision_id: str | None = None,
             links: bool = False) -> Revision:
        """Open and verify a revision: the folder holds the manifest's files and no other, each a
        regular file (`links`: or a symbolic link to one, as in a Hub snapshot), and every file of the
        selected datasets (all when None) matches its size, sha256 and row count. Anything else is an
        IntegrityError; no file but a regular one is ever opened."""
        root = Path(root)
        manifest = load_manifest(root, links=links)
        known = [s["name"] for s in manifest["sources"]]
        wanted = known if datasets is None else list(dict.fromkeys(datasets))
        unknown = [name for name in wanted if name not in known]
        if unknown:
            raise SourceError(f"revision {manifest['label']} has no dataset {unknown[0]!r}; it has: {', '.join(known)}")
        revision = cls(root, manifest, revision_id or manifest["content_hash"], tuple(n for n in known if n in wanted),
                       links)
        where = f"revision {manifest['label']}"
        on_disk = disk_files(root, links=links, where=where)
        unlisted = sorted(on_disk - {entry["path"] for entry in manifest["files"]} - {MANIFEST})
        if unlisted:
            raise IntegrityError(f"{where}: file {unlisted[0]} is in the folder but not listed in {MANIFEST}")
        for entry in revision.verified_files():
            if entry["path"] not in on_disk:
                raise IntegrityError(f"{where}: file {entry['path']} is missing")
            path = root.joinpath(*safe_relpath(entry["path"]).parts)
            if path.stat().st_size != entry["bytes"] or sha256_file(path, follow_links=links) != entry["sha256"]:
                raise IntegrityError(f"{where}: file {entry['path']} is corrupted (sha256 mismatch)")
            if path.suffix == ".parquet":
                rows = _parquet_rows(path, links=links, what=f"{where}: {entry['path']}")
                if rows != entry["rows"]:
                    raise IntegrityError(f"{where}: {MANIFEST} gives {entry['rows']} rows for {entry['path']}; "
                                         f"the file has {rows}")
        return revision

    @property
    def label(self) -> str:
        return self.manifest["label"]

    def dataset_names(self) -> list[str]:
        return [s["name"] for s in self.manifest["sources"]]

    def verified_files(self) -> list[dict[str, Any]]:
        """The manifest entries `open` checked: the shared files and those of the selected datasets."""
        return list(self._verified.values())

    @cached_property
    def _verified(self) -> dict[str, dict[str, Any]]:
        """Path -> manifest entry of each file `open` checked (the datasets selected are fixed when it opens)."""
        return {e["path"]: e for e in self.manifest["files"] if _dataset_of(e["path"]) in {*self.selected, None}}

    def read_verified(self, rel: str) -> bytes:
        """The bytes of a verified file, hashed as they are read: what is parsed is what matches the
        manifest, even when the file was replaced after `open` checked it."""
        entry = self._verified.get(rel)
        where = f"revision {self.label}: file {rel}"
        if entry is None:
            raise IntegrityError(f"{where} is not a verified file of this revision")
        try:
            with open_regular(self.root.joinpath(*safe_relpath(rel).parts), follow_links=self.links) as handle:
                data = handle.read()
        except OSError as err:
            raise IntegrityError(f"{where} cannot be read ({err.strerror})") from None
        if len(data) != entry["bytes"] or sha256_bytes(data) != entry["sha256"]:
            raise IntegrityError(f"{where} changed after it was verified (sha256 mismatch); nothing of it is used")
        return data

    def _read_path(self, path: Path) -> bytes:
        return self.read_verified(Path(path).relative_to(self.root).as_posix())

    def _require(self, name: str) -> dict[str, Any]:
        """The manifest entry of a dataset this revision was opened for (its files were verified)."""
        if name not in self.dataset_names():
            raise SourceError(f"revision {self.label} has no dataset {name!r}; it has: "
                              f"{', '.join(self.dataset_names())}")
        if name not in self.selected:
            raise SourceError(f"revision {self.label} was opened for {', '.join(self.selected)}; the files of {name} "
                              f"were not verified")
        return next(s for s in self.manifest["sources"] if s["name"] == name)

    def source(self, name: str) -> SourceDataset:
        """The source copy of a dataset; its dataset.json must name the dataset its folder and the manifest name."""
        entry = self._require(name)
        if name not in self._sources:  # read once: the items' checks and the scorer both need it
            dataset = read_source_parquet(self.root / "source" / name, read_bytes=self._read_path)
            info = dataset.info
            stated_by_copy = {"name": info.name, "task_type": info.task_type, "languages": sorted(info.languages),
                              "subsets": {n: list(codes) for n, codes in info.subsets.items()}}
            for key, stated in stated_by_copy.items():
                declared = sorted(entry[key]) if key == "languages" else entry[key]
                if stated != declared:
                    raise IntegrityError(f"revision {self.label}: source/{name}/dataset.json gives {key} "
                                         f"{_brief(stated)}; the manifest says {_brief(declared)}")
            self._sources[name] = dataset
        return self._sources[name]

    def _texts_of(self, name: str) -> dict[tuple[str, str, str], TextRef]:
        """(split, item id, field) -> the source text, for each text HTEB transforms (read once)."""
        if name not in self._texts:
            self._texts[name] = {(t.table, t.item_id, t.field): t for t in self.source(name).iter_texts()}
        return self._texts[name]

    def _corpus_texts_of(self, name: str) -> dict[tuple[str, str, str], TextRef]:
        """(corpus, document id, field) -> the source's corpus title or text (read once)."""
        if name not in self._corpus_texts:
            self._corpus_texts[name] = {(t.table, t.item_id, t.field): t for t in self.source(name).iter_corpus_texts()}
        return self._corpus_texts[name]

    def variants(self, name: str) -> list[tuple[str, int]]:
        """(transformation, seed) pairs present for a dataset, in manifest order."""
        return list(self._variants["data"].get(name, ()))

    def corpus_variants(self, name: str) -> list[tuple[str, int]]:
        """(transformation, seed) pairs whose perturbed corpus a dataset has, in manifest order."""
        return list(self._variants["corpus"].get(name, ()))

    @property
    def corpus_perturbed(self) -> bool:
        return bool(with_defaults(self.manifest)["corpus_perturbed"])

    @cached_property
    def _variants(self) -> dict[str, dict[str, list[tuple[str, int]]]]:
        """Part (`data`, `corpus`) -> dataset -> its (transformation, seed) pairs."""
        found: dict[str, dict[str, set[tuple[str, int]]]] = {"data": {}, "corpus": {}}
        for entry in self.manifest["files"]:
            parts = PurePosixPath(entry["path"]).parts
            variant = _variant_of(parts[2]) if len(parts) == 3 and parts[0] in found else None
            if variant is not None:
                found[parts[0]].setdefault(parts[1], set()).add(variant)
        order = {t: i for i, t in enumerate(self.manifest["transformations"])}
        return {part: {name: sorted(pairs, key=lambda v: (order.get(v[0], len(order)), v[0], v[1]))
                       for name, pairs in datasets.items()} for part, datasets in found.items()}

    def items(self, name: str, transformation: str, seed: int) -> list[ItemRecord]:
        """Item records of one (dataset, transformation, seed), checked in one pass: each against the
        item schema, the file it sits in and the source text it transforms; one record per text."""
        self._require(name)
        if (transformation, seed) not in self.variants(name):
            raise SourceError(f"revision {self.label} has no {transformation} seed {seed} for {name}")
        return self._records(name, transformation, seed, items_path(name, transformation, seed), corpus=False)

    def item_columns(self, name: str, transformation: str, seed: int) -> ItemColumns:
        """What a scoring run reads of the records `items` gives (`ItemColumns`), checked as `items`
        checks them, without building a record per row."""
        self._require(name)
        if (transformation, seed) not in self.variants(name):
            raise SourceError(f"revision {self.label} has no {transformation} seed {seed} for {name}")
        rel = items_path(name, transformation, seed)
        if rel in self._cleared:  # cleared before: only the columns read are decoded
            return ItemColumns.from_table(self._read_items(rel, COLUMNS), name, transformation, seed)
        table = self._read_items(rel)
        if self._sound(table, name, transformation, seed):
            self._cleared.add(rel)
            return ItemColumns.from_table(table, name, transformation, seed)
        records = self._records_one_by_one(table, name, transformation, seed, rel, self._texts_of(name))
        return ItemColumns.from_records(records, name, transformation, seed)

    def corpus_items(self, name: str, transformation: str, seed: int) -> list[ItemRecord]:
        """The perturbed corpus records of one (dataset, transformation, seed), checked as `items`
        checks its records, against the source's corpus titles and texts."""
        self._require(name)
        if (transformation, seed) not in self.corpus_variants(name):
            raise SourceError(f"revision {self.label} has no perturbed corpus {transformation} seed {seed} for {name}")
        return self._records(name, transformation, seed, corpus_path(name, transformation, seed), corpus=True)

    def _records(self, name: str, transformation: str, seed: int, rel: str, *, corpus: bool) -> list[ItemRecord]:
        table = self._read_items(rel)
        if rel in self._cleared or self._sound(table, name, transformation, seed, corpus=corpus):
            self._cleared.add(rel)
            return table_records(table)
        return self._records_one_by_one(table, name, transformation, seed, rel, self._source_texts(name, corpus=corpus))

    def _source_texts(self, name: str, *, corpus: bool) -> Mapping[tuple[str, str, str], TextRef]:
        """The source texts an items file (`corpus`: a corpus file) transforms, by ref."""
        return self._corpus_texts_of(name) if corpus else self._texts_of(name)

    def _read_items(self, rel: str, columns: Sequence[str] | None = None) -> pa.Table:
        """An items file's table (`columns`: only those), its bytes hashed against the manifest as they are read."""
        try:
            return read_parquet_table(self.read_verified(rel), f"revision {self.label}: {rel}", columns)
        except SourceError as err:
            raise IntegrityError(str(err)) from None

    def _sound(self, table: pa.Table, name: str, transformation: str, seed: int, *, corpus: bool = False) -> bool:
        """Whether an items file certainly passes every check `_records_one_by_one` makes (`_sound_files`)."""
        return self._sound_files([(table, transformation, seed)], name, corpus=corpus)[0]

    def _sound_files(self, files: Sequence[tuple[pa.Table, str, int]], name: str, *, corpus: bool) -> list[bool]:
        """Whether each items file (table, transformation, seed) of a dataset (`corpus`: each corpus
        file) certainly passes every check `_records_one_by_one` makes, found with Arrow compute
        (`columnar`): the item columns and types, the item schema, the attempts, the file it sits in,
        the source text of each record, one record per text. False is "not certainly": the records are
        then checked one by one, which words the refusal. Every check but the last is a row's own, so
        the files are checked as one table: a file costs its rows, not some 200 Arrow calls."""
        expected = arrow_schema("item")
        task_type = self._require(name)["task_type"]
        shaped: list[pa.Table | None] = []
        for table, transformation, seed in files:
            if sorted(table.column_names) != sorted(expected.names) or any(
                    not table.schema.field(column.name).type.equals(column.type) for column in expected):
                shaped.append(None)
                continue
            table = table.select(expected.names)
            mine = _equals(table, dataset=name, task_type=task_type, transformation=transformation, seed=seed).all()
            shaped.append(table if mine else None)
        kept = [table for table in shaped if table is not None]
        if not kept:
            return [False] * len(files)
        together = pa.table({column.name: pa.chunked_array([chunk for table in kept
                                                            for chunk in table.column(column.name).chunks],
                                                           column.type) for column in expected})
        bad = suspect_rows(together)
        source = self._text_table(name, corpus=corpus)
        distinct = pc.count_distinct(source.column(_KEY)).as_py() == source.num_rows
        verdicts, start = [], 0
        for table in shaped:
            if table is None:
                verdicts.append(False)
                continue
            rows = table.num_rows
            # A sound file holds the source's texts in ref order, each once: record i is then text i, no lookup.
            aligned = distinct and rows == source.num_rows and all(
                _mask(pc.equal(table.column(column), source.column(column))).all() for column in _REF)
            if aligned:
                found, once = source, True
            else:
                key = _ref_key(table)
                found = source.take(pc.index_in(key, value_set=source.column(_KEY)))  # null: a record of no text
                once = pc.count_distinct(key).as_py() == rows  # one record per text
            # The key's parts are compared too, so its separator cannot mislead.
            for column in (() if aligned else _REF) + ("original_text", "subset", "source_language"):
                bad[start:start + rows] |= ~_mask(pc.equal(table.column(column), found.column(column)))
            verdicts.append(once and not bad[start:start + rows].any())
            start += rows
        return verdicts

    def _text_table(self, name: str, *, corpus: bool) -> pa.Table:
        """The source texts an items file (`corpus`: a corpus file) transforms, as an item table's
        columns and their `_ref_key` (built once per dataset and part, without a TextRef per text)."""
        if (name, corpus) not in self._text_tables:
            source = self.source(name)
            found = source.corpus_text_columns() if corpus else source.text_columns()
            table = pa.table({_ITEM_COLUMN[key]: pa.array(values, pa.string()) for key, values in found.items()})
            table = table.take(pc.sort_indices(table, [(column, "ascending") for column in _REF]))  # as files are
            self._text_tables[(name, corpus)] = table.append_column(_KEY, _ref_key(table))
        return self._text_tables[(name, corpus)]

    def _records_one_by_one(self, table: pa.Table, name: str, transformation: str, seed: int, rel: str,
                            texts: Mapping[tuple[str, str, str], TextRef]) -> list[ItemRecord]:
        """The records of a file `_sound` could not clear, each checked in turn: the first broken
        rule is refused, worded for its row (the per-record JSON Schema check words a schema's)."""
        entry = self._require(name)
        columns = table.schema
        try:
            rows = table_rows(table, f"revision {self.label}: {rel}")
        except SourceError as err:
            raise IntegrityError(str(err)) from None
        expected = (name, entry["task_type"], transformation, seed)
        first: dict[tuple[str, str, str], tuple[int, ItemRecord]] = {}
        for number, row in enumerate(rows, 1):
            what = f"revision {self.label}: {rel} row {number}"
            record = ItemRecord.from_row(row, what=what)
            found = (record.dataset, record.task_type, record.transformation, record.seed)
            if found != expected:
                raise IntegrityError(f"{what}: a record of {'/'.join(map(str, found))} in the file of "
                                     f"{'/'.join(map(str, expected))}")
            where = "/".join(record.ref)
            text = texts.get(record.ref)
            if text is None:
                raise IntegrityError(f"{what}: {where} is not a text of the source of {name}")
            for attr, value in (("original_text", text.text), ("subset", text.subset),
                                ("source_language", text.language)):
                if getattr(record, attr) != value:
                    raise IntegrityError(f"{what}: {attr} of {where} is not the source's")
            if record.ref in first:
                row_before, before = first[record.ref]
                differs = before.transformed_text != record.transformed_text
                conflict = " with another transformed_text" if differs else ""
                raise IntegrityError(f"{what}: a second record for {where}{conflict} (the first is row {row_before}); "
                                     f"a text has one record per file")
            first[record.ref] = (number, record)
        _check_columns(columns, f"revision {self.label}: {rel}")
        return [record for _, record in first.values()]

    def _file_records(self, table: pa.Table, sound: bool, name: str, transformation: str, seed: int, rel: str, *,
                      corpus: bool) -> int:
        """What `check_content` needs of one file (`sound`: `_sound_files` cleared it): its record count,
        every record checked and a record for every source text; a file the columnar checks could not
        clear is checked one by one (which words a refusal), then its first source text without a record
        is named."""
        if sound and table.num_rows == self._text_table(name, corpus=corpus).num_rows:
            return table.num_rows  # sound: each row a distinct source text, so as many rows as texts covers them all
        texts = self._source_texts(name, corpus=corpus)
        found = {record.ref for record in self._records_one_by_one(table, name, transformation, seed, rel, texts)}
        missing = [ref for ref in texts if ref not in found]
        if missing:
            raise IntegrityError(f"revision {self.label}: {rel}: no record "
                                 f"for {'/'.join(missing[0])} ({len(missing)} source texts have none)")
        return len(found)

    def check_content(self) -> Checked:
        """Read and check every source copy and items file of the selected datasets, and that each
        file has a record for every source text (what `verify` reports). `items` alone leaves
        that out: comparing revisions counts a missing record as a difference."""
        item_files = records = 0
        for name in self.selected:
            self._require(name)
            for variants, path, corpus in ((self.variants, items_path, False), (self.corpus_variants, corpus_path,
                                                                                 True)):
                files = [(path(name, transformation, seed), transformation, seed)
                         for transformation, seed in variants(name)]
                tables = [self._read_items(rel) for rel, _, _ in files]  # one dataset's files at a time
                verdicts = self._sound_files([(table, t, s) for table, (_, t, s) in zip(tables, files)], name,
                                             corpus=corpus)
                for (rel, transformation, seed), table, sound in zip(files, tables, verdicts):
                    records += self._file_records(table, sound, name, transformation, seed, rel, corpus=corpus)
                    item_files += 1
        return Checked(self.selected, len(self.verified_files()), item_files, records)


def _dataset_of(path: str) -> str | None:
    parts = PurePosixPath(path).parts
    return parts[1] if len(parts) >= 3 and parts[0] in PARTS else None
