"""Opening a revision: every file against the manifest, then each source copy and items file
against its own content, read only as parquet and JSON."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.arrow import arrow_schema
from hteb_contract.common.atomic import (
    open_regular,
    sha256_bytes,
    sha256_file,
)
from hteb_contract.columnar import suspect_rows
from hteb_contract.errors import IntegrityError, SourceError
from hteb_contract.item_columns import COLUMNS, ItemColumns
from hteb_contract.item_table import table_records
from hteb_contract.records import ItemRecord
from hteb_contract.revision.change_shares import check_shares
from hteb_contract.revision.item_checks import (
    ITEM_COLUMN,
    REF,
    REF_KEY,
    as_item_types,
    bool_mask,
    brief,
    check_columns,
    ref_key,
    rows_equal,
)
from hteb_contract.revision.layout import (
    MANIFEST,
    corpus_path,
    dataset_of,
    items_path,
    safe_relpath,
    variant_of,
    with_defaults,
)
from hteb_contract.revision.manifest import disk_files, load_manifest, parquet_rows
from hteb_contract.parquet_io import read_parquet_table, table_rows
from hteb_contract.sources import SourceDataset, read_source_parquet
from hteb_contract.tasks import TextRef


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
    _corpus_texts: dict[str, dict[tuple[str, str, str], TextRef]] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: (dataset, corpus) -> its `_text_table`, built once per dataset and part
    _text_tables: dict[tuple[str, bool], pa.Table] = field(default_factory=dict, repr=False, compare=False)
    #: items and corpus files `_sound` cleared: read again (the scorer reads each dataset twice), their bytes
    #: are hashed against the manifest as ever, so they are the bytes cleared, and the checks are not run again
    _cleared: set[str] = field(default_factory=set, repr=False, compare=False)

    @classmethod
    def open(
        cls, root: Path, *, datasets: Iterable[str] | None = None, revision_id: str | None = None, links: bool = False
    ) -> Revision:
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
        revision = cls(
            root, manifest, revision_id or manifest["content_hash"], tuple(n for n in known if n in wanted), links
        )
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
                rows = parquet_rows(path, links=links, what=f"{where}: {entry['path']}")
                if rows != entry["rows"]:
                    raise IntegrityError(
                        f"{where}: {MANIFEST} gives {entry['rows']} rows for {entry['path']}; the file has {rows}"
                    )
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
        return {e["path"]: e for e in self.manifest["files"] if dataset_of(e["path"]) in {*self.selected, None}}

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
            raise SourceError(
                f"revision {self.label} has no dataset {name!r}; it has: {', '.join(self.dataset_names())}"
            )
        if name not in self.selected:
            raise SourceError(
                f"revision {self.label} was opened for {', '.join(self.selected)}; the files of {name} "
                f"were not verified"
            )
        return next(s for s in self.manifest["sources"] if s["name"] == name)

    def source(self, name: str) -> SourceDataset:
        """The source copy of a dataset; its dataset.json must name the dataset its folder and the manifest name."""
        entry = self._require(name)
        if name not in self._sources:  # read once: the items' checks and the scorer both need it
            dataset = read_source_parquet(self.root / "source" / name, read_bytes=self._read_path)
            info = dataset.info
            stated_by_copy = {
                "name": info.name,
                "task_type": info.task_type,
                "languages": sorted(info.languages),
                "subsets": {n: list(codes) for n, codes in info.subsets.items()},
            }
            for key, stated in stated_by_copy.items():
                declared = sorted(entry[key]) if key == "languages" else entry[key]
                if stated != declared:
                    raise IntegrityError(
                        f"revision {self.label}: source/{name}/dataset.json gives {key} "
                        f"{brief(stated)}; the manifest says {brief(declared)}"
                    )
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
            variant = variant_of(parts[2]) if len(parts) == 3 and parts[0] in found else None
            if variant is not None:
                found[parts[0]].setdefault(parts[1], set()).add(variant)
        order = {t: i for i, t in enumerate(self.manifest["transformations"])}
        return {
            part: {
                name: sorted(pairs, key=lambda v: (order.get(v[0], len(order)), v[0], v[1]))
                for name, pairs in datasets.items()
            }
            for part, datasets in found.items()
        }

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
        what = f"revision {self.label}: {rel}"
        try:
            table = read_parquet_table(self.read_verified(rel), what, columns)
        except SourceError as err:
            raise IntegrityError(str(err)) from None
        return as_item_types(table, what)

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
                not table.schema.field(column.name).type.equals(column.type) for column in expected
            ):
                shaped.append(None)
                continue
            table = table.select(expected.names)
            mine = rows_equal(table, dataset=name, task_type=task_type, transformation=transformation, seed=seed).all()
            shaped.append(table if mine else None)
        kept = [table for table in shaped if table is not None]
        if not kept:
            return [False] * len(files)
        together = pa.table(
            {
                column.name: pa.chunked_array(
                    [chunk for table in kept for chunk in table.column(column.name).chunks], column.type
                )
                for column in expected
            }
        )
        bad = suspect_rows(together)
        source = self._text_table(name, corpus=corpus)
        distinct = pc.count_distinct(source.column(REF_KEY)).as_py() == source.num_rows
        verdicts, start = [], 0
        for table in shaped:
            if table is None:
                verdicts.append(False)
                continue
            rows = table.num_rows
            # A sound file holds the source's texts in ref order, each once: record i is then text i, no lookup.
            aligned = (
                distinct
                and rows == source.num_rows
                and all(bool_mask(pc.equal(table.column(column), source.column(column))).all() for column in REF)
            )
            if aligned:
                found, once = source, True
            else:
                key = ref_key(table)
                found = source.take(pc.index_in(key, value_set=source.column(REF_KEY)))  # null: a record of no text
                once = pc.count_distinct(key).as_py() == rows  # one record per text
            # The key's parts are compared too, so its separator cannot mislead.
            for column in (() if aligned else REF) + ("original_text", "subset", "source_language"):
                bad[start : start + rows] |= ~bool_mask(pc.equal(table.column(column), found.column(column)))
            verdicts.append(once and not bad[start : start + rows].any())
            start += rows
        return verdicts

    def _text_table(self, name: str, *, corpus: bool) -> pa.Table:
        """The source texts an items file (`corpus`: a corpus file) transforms, as an item table's
        columns and their `ref_key` (built once per dataset and part, without a TextRef per text)."""
        if (name, corpus) not in self._text_tables:
            source = self.source(name)
            found = source.corpus_text_columns() if corpus else source.text_columns()
            table = pa.table({ITEM_COLUMN[key]: pa.array(values, pa.string()) for key, values in found.items()})
            table = table.take(pc.sort_indices(table, [(column, "ascending") for column in REF]))  # as files are
            self._text_tables[(name, corpus)] = table.append_column(REF_KEY, ref_key(table))
        return self._text_tables[(name, corpus)]

    def _records_one_by_one(
        self,
        table: pa.Table,
        name: str,
        transformation: str,
        seed: int,
        rel: str,
        texts: Mapping[tuple[str, str, str], TextRef],
    ) -> list[ItemRecord]:
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
                raise IntegrityError(
                    f"{what}: a record of {'/'.join(map(str, found))} in the file of {'/'.join(map(str, expected))}"
                )
            where = "/".join(record.ref)
            text = texts.get(record.ref)
            if text is None:
                raise IntegrityError(f"{what}: {where} is not a text of the source of {name}")
            for attr, value in (
                ("original_text", text.text),
                ("subset", text.subset),
                ("source_language", text.language),
            ):
                if getattr(record, attr) != value:
                    raise IntegrityError(f"{what}: {attr} of {where} is not the source's")
            if record.ref in first:
                row_before, before = first[record.ref]
                differs = before.transformed_text != record.transformed_text
                conflict = " with another transformed_text" if differs else ""
                raise IntegrityError(
                    f"{what}: a second record for {where}{conflict} (the first is row {row_before}); "
                    f"a text has one record per file"
                )
            first[record.ref] = (number, record)
        check_columns(columns, f"revision {self.label}: {rel}")
        return [record for _, record in first.values()]

    def _file_records(
        self, table: pa.Table, sound: bool, name: str, transformation: str, seed: int, rel: str, *, corpus: bool
    ) -> int:
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
            raise IntegrityError(
                f"revision {self.label}: {rel}: no record "
                f"for {'/'.join(missing[0])} ({len(missing)} source texts have none)"
            )
        return len(found)

    def check_content(self) -> Checked:
        """Read and check every source copy and items file of the selected datasets, that each
        file has a record for every source text and that the manifest's `change_shares` are its files'
        (what `verify` reports). `items` alone leaves
        that out: comparing revisions counts a missing record as a difference."""
        item_files = records = 0
        for name in self.selected:
            self._require(name)
            for variants, path, corpus in (
                (self.variants, items_path, False),
                (self.corpus_variants, corpus_path, True),
            ):
                files = [
                    (path(name, transformation, seed), transformation, seed) for transformation, seed in variants(name)
                ]
                tables = [self._read_items(rel) for rel, _, _ in files]  # one dataset's files at a time
                verdicts = self._sound_files(
                    [(table, t, s) for table, (_, t, s) in zip(tables, files)], name, corpus=corpus
                )
                for (rel, transformation, seed), table, sound in zip(files, tables, verdicts):
                    records += self._file_records(table, sound, name, transformation, seed, rel, corpus=corpus)
                    item_files += 1
                    if not corpus:
                        check_shares(self.manifest, name, transformation, seed, table, where=f"revision {self.label}")
            self._check_share_variants(name)
        return Checked(self.selected, len(self.verified_files()), item_files, records)

    def _check_share_variants(self, name: str) -> None:
        """Every `change_shares` entry of a dataset names one of its items files."""
        held = set(self.variants(name))
        for entry in self.manifest.get("change_shares") or ():
            if entry["dataset"] == name and (entry["transformation"], entry["seed"]) not in held:
                raise IntegrityError(
                    f"revision {self.label}: manifest change_shares name {name} "
                    f"{entry['transformation']}_{entry['seed']}, which has no items file"
                )
