"""Source datasets: the untouched MTEB data, read from the JSONL folder layout of
`shared/data` (see its SOURCES.md) or from the parquet copy inside a revision.

A dataset is its metadata (`dataset.json`) plus named tables of rows (`test`, `train`,
`corpus`, `queries`, `qrels`, `top_ranked`). Rows keep every field of the source.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hteb_contract.atomic import read_json_object
from hteb_contract.errors import SourceError
from hteb_contract.tasks import TextRef, iter_field_texts, resolve, task_type

ID_COLUMN = "_hteb_item_id"  # item ids persisted beside the rows in a revision's source copy
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_LANG = re.compile(r"^[a-z]{3}$")


@dataclass(frozen=True)
class DatasetInfo:
    """What `dataset.json` says about a dataset (plus the Hub pin when there is one)."""

    name: str
    task_type: str
    eval_split: str
    languages: tuple[str, ...]
    train_split: str | None = None
    mteb_task: str | None = None
    hf_path: str | None = None
    hf_revision: str | None = None

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, where: str) -> DatasetInfo:
        try:
            info = cls(
                name=str(data["name"]),
                task_type=str(data["task_type"]),
                eval_split=str(data["eval_split"]),
                languages=tuple(data.get("languages") or ()),
                train_split=data.get("train_split"),
                mteb_task=data.get("mteb_task"),
                hf_path=data.get("hf_path"),
                hf_revision=data.get("hf_revision"),
            )
        except KeyError as missing:
            raise SourceError(f"{where}: missing key {missing.args[0]!r}") from None
        if not _NAME.match(info.name):
            raise SourceError(f"{where}: dataset name {info.name!r} must match {_NAME.pattern}")
        task_type(info.task_type)
        bad = [lang for lang in info.languages if not _LANG.match(lang)]
        if bad:
            raise SourceError(f"{where}: languages must be ISO 639-3 codes, got {bad}")
        if info.task_type == "Classification" and not info.train_split:
            raise SourceError(f"{where}: a Classification dataset needs a train_split")
        return info

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["languages"] = list(self.languages)
        return {k: v for k, v in data.items() if v is not None}

    def transformed_fields(self) -> list[str]:
        """`table.field` of every text HTEB transforms in this dataset (hteb_contract.tasks says which)."""
        spec = task_type(self.task_type)
        return [f"{resolve(t, self.eval_split, self.train_split)}.{f}" for t, f in spec.text_fields]

    def tables(self) -> list[str]:
        """The table names this dataset must have, with its own split names."""
        names = [resolve(t, self.eval_split, self.train_split) for t in task_type(self.task_type).tables]
        return list(dict.fromkeys(names))


@dataclass
class SourceDataset:
    """A dataset's metadata and its tables of rows."""

    info: DatasetInfo
    tables: dict[str, list[dict[str, Any]]]
    origin: str
    ids: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        spec = task_type(self.info.task_type)
        for table_key, fields in spec.required_fields.items():
            table = resolve(table_key, self.info.eval_split, self.info.train_split)
            rows = self.tables.get(table)
            if rows is None:
                raise SourceError(f"{self.origin}: {self.info.task_type} dataset has no table {table!r}")
            for index, row in enumerate(rows):
                missing = [f for f in fields if f not in row]
                if missing:
                    raise SourceError(f"{self.origin}: {table} row {index + 1}: missing field {missing[0]!r}")
        for table, rows in self.tables.items():
            if table not in self.ids:  # ids given by with_texts survive dropped rows
                self.ids[table] = _item_ids(rows, where=f"{self.origin}: {table}")

    @property
    def name(self) -> str:
        return self.info.name

    def eval_rows(self) -> list[dict[str, Any]]:
        return self.tables[self.info.eval_split]

    def language_of(self, row: Mapping[str, Any]) -> str:
        lang = row.get("lang")
        if isinstance(lang, str) and _LANG.match(lang):
            return lang
        if len(self.info.languages) == 1:
            return self.info.languages[0]
        return "mul" if self.info.languages else "und"

    def iter_texts(self) -> Iterator[TextRef]:
        """Every text HTEB transforms in this dataset, in table order."""
        spec = task_type(self.info.task_type)
        for table_key, fld in spec.text_fields:
            table = resolve(table_key, self.info.eval_split, self.info.train_split)
            for item_id, row in zip(self.ids[table], self.tables[table]):
                lang = self.language_of(row)
                for name, text in iter_field_texts(row, fld, spec.list_fields):
                    yield TextRef(table, item_id, name, text, lang)

    def with_texts(self, lookup: Callable[[TextRef], str | None]) -> SourceDataset:
        """A copy whose transformable texts are replaced by `lookup(ref)`.

        `lookup` returns the new text, or None to drop the row from its table (the
        `--on-error drop` policy); rows of other tables are shared, not copied.
        """
        spec = task_type(self.info.task_type)
        tables = dict(self.tables)
        ids = dict(self.ids)
        touched: dict[str, list[str]] = {}
        for table_key, fld in spec.text_fields:
            touched.setdefault(resolve(table_key, self.info.eval_split, self.info.train_split), []).append(fld)
        for table, fields in touched.items():
            new_rows, new_ids = [], []
            for item_id, row in zip(self.ids[table], self.tables[table]):
                new_row, keep = dict(row), True
                lang = self.language_of(row)
                for fld in fields:
                    values = []
                    for name, text in iter_field_texts(row, fld, spec.list_fields):
                        new = lookup(TextRef(table, item_id, name, text, lang))
                        if new is None:
                            keep = False
                        values.append(text if new is None else new)
                    new_row[fld] = values if fld in spec.list_fields else values[0]
                if keep:
                    new_rows.append(new_row)
                    new_ids.append(item_id)
            tables[table], ids[table] = new_rows, new_ids
        return SourceDataset(replace(self.info), tables, self.origin, ids)


def _item_ids(rows: list[dict[str, Any]], *, where: str) -> list[str]:
    """Row ids: the `id` field where every row has one (must be unique), else the row index."""
    if rows and all("id" in row for row in rows):
        ids = [str(row["id"]) for row in rows]
        if len(set(ids)) != len(ids):
            seen: set[str] = set()
            dup = next(i for i in ids if i in seen or seen.add(i))
            raise SourceError(f"{where}: duplicate id {dup!r}")
        return ids
    return [str(index) for index in range(len(rows))]


def _read_info(folder: Path) -> DatasetInfo:
    path = folder / "dataset.json"
    if not path.is_file():
        raise SourceError(f"{folder}: no dataset.json (not a dataset folder in the shared/data layout)")
    return DatasetInfo.from_json(read_json_object(path, SourceError), where=str(path))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file; a bad line is reported with its number."""
    rows = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    raise SourceError(f"{path}:{number}: not valid JSON ({err.msg})") from None
                if not isinstance(row, dict):
                    raise SourceError(f"{path}:{number}: expected a JSON object")
                rows.append(row)
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not UTF-8 text") from None
    return rows


def _read_tables(folder: Path, suffix: str, reader: Callable[[Path], list[dict[str, Any]]]
                 ) -> tuple[DatasetInfo, dict[str, list[dict[str, Any]]]]:
    """dataset.json and every table the task type needs, each read from `<table><suffix>`."""
    info = _read_info(folder)
    tables = {}
    for table in info.tables():
        path = folder / f"{table}{suffix}"
        if not path.is_file():
            raise SourceError(f"{folder}: missing {path.name} (needed by a {info.task_type} dataset)")
        tables[table] = reader(path)
    return info, tables


def read_source_dir(folder: Path) -> SourceDataset:
    """A dataset folder in the shared/data layout: dataset.json plus one JSONL per table."""
    info, tables = _read_tables(Path(folder), ".jsonl", read_jsonl)
    return SourceDataset(info, tables, origin=str(folder))


def list_source_dirs(root: Path) -> list[str]:
    """Names of the dataset folders under `root` (folders with a dataset.json)."""
    root = Path(root)
    if not root.is_dir():
        raise SourceError(f"{root}: source directory not found")
    return sorted(p.name for p in root.iterdir() if (p / "dataset.json").is_file())


def write_source_parquet(dataset: SourceDataset, folder: Path) -> list[Path]:
    """Write a dataset into a revision: dataset.json plus one parquet file per table."""
    from hteb_contract.atomic import atomic_write_json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(folder / "dataset.json", dataset.info.to_json())
    written = [folder / "dataset.json"]
    for table, rows in sorted(dataset.tables.items()):
        path = folder / f"{table}.parquet"
        write_parquet(path, [{**row, ID_COLUMN: item_id} for item_id, row in zip(dataset.ids[table], rows)])
        written.append(path)
    return written


def read_source_parquet(folder: Path) -> SourceDataset:
    """Read the source copy inside a revision (parquet only: never pickle)."""
    info, tables = _read_tables(Path(folder), ".parquet", read_parquet)
    ids = {}
    for table, rows in tables.items():
        if rows and all(ID_COLUMN in row for row in rows):
            ids[table] = [str(row.pop(ID_COLUMN)) for row in rows]
    return SourceDataset(info, tables, origin=str(folder), ids=ids)


def write_parquet(path: Path, rows: list[dict[str, Any]], schema: pa.Schema | None = None) -> None:
    """Rows to parquet with stable bytes (no pandas metadata, fixed writer settings), atomically.

    With `schema`, every file of a kind gets exactly those columns and types (see arrow.py);
    without, the types are inferred from the rows (the source copy, whose tables vary by dataset).
    """
    from hteb_contract.atomic import atomic_write_bytes

    if schema is not None:
        table = pa.Table.from_pylist(rows, schema=schema)
    else:
        table = pa.Table.from_pylist(rows) if rows else pa.table({})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd", write_statistics=False, store_schema=False)
    atomic_write_bytes(Path(path), sink.getvalue().to_pybytes())


def read_parquet(path: Path) -> list[dict[str, Any]]:
    try:
        return pq.read_table(path).to_pylist()
    except (pa.ArrowInvalid, OSError) as err:
        raise SourceError(f"{path}: not a readable parquet file ({str(err).splitlines()[0]})") from None
