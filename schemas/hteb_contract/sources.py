"""Source datasets: the untouched MTEB data, read from the JSONL folder layout of
`shared/data` (see its SOURCES.md) or from the parquet copy inside a revision.

A dataset is its metadata (`dataset.json`) plus named tables of rows (`test`, `train`,
`corpus`, `queries`, `qrels`, `top_ranked`). Rows keep every field of the source.

Subsets are mteb's (`hf_subsets`: `en-de`, `en-ext`, `de`, `afr`, ...). A row names its subset in
the field `lang`, as mteb's fast-loading Hub datasets do; a row without it is in subset `default`.
`dataset.json` says which language each text of a subset is in::

    "subsets": {"en-de": ["eng", "deu"], "en-en": ["eng"], "en-ext": ["eng"]}

one ISO 639-3 code per transformed text field of the task type (hteb_contract.tasks, in its
`text_fields` order: sentence1 then sentence2), or one code for every text. A `dataset.json`
without `subsets` (the `shared/data` copies) gets them from the subset names its rows use
(`subset_languages`); the copy inside a revision always states them.

Rows are checked for what the scorer relies on (each task type's `check_of`, hteb_contract.field_values):
texts are strings, scores finite numbers, pair labels 0 or 1; a degenerate row is a SourceError naming the table and row,
whether it came from JSONL (where NaN and Infinity are not JSON and are refused) or parquet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.errors import SourceError
from hteb_contract.parquet_io import read_parquet_rows, write_parquet
from hteb_contract.source_values import (
    CORPUS_FIELDS,
    CORPUS_TABLE,
    DEFAULT_SUBSET,
    ID_COLUMN,
    INFO_KEYS,
    LANGUAGE_CODE,
    NAME_PATTERN,
    SUBSET_FIELD,
    TABLE_NAME,
    TEXT_COLUMNS,
    any_value,
    check_subsets,
    lone_surrogate,
    subset_languages,
    subset_of,
    subsets_union,
)
from hteb_contract.tasks import TextRef, iter_field_texts, resolve, task_type


@dataclass(frozen=True)
class DatasetInfo:
    """What `dataset.json` says about a dataset (plus the Hub pin when there is one).

    `subsets`: mteb subset -> the language of each text position (see the module docstring); empty
    only for a dataset.json without them, until its rows are read (SourceDataset fills them in).
    """

    name: str
    task_type: str
    eval_split: str
    languages: tuple[str, ...]
    train_split: str | None = None
    mteb_task: str | None = None
    hf_path: str | None = None
    hf_revision: str | None = None
    subsets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def train_split_name(self) -> str:
        """The train split, for a task type that fits on one (a Classification dataset names it: `from_json`)."""
        if self.train_split is None:
            raise SourceError(f"dataset {self.name!r}: a {self.task_type} dataset needs a train_split")
        return self.train_split

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, where: str) -> DatasetInfo:
        for key, required in INFO_KEYS.items():
            value = data.get(key)
            if value is None and required:
                raise SourceError(f"{where}: missing key {key!r}")
            if value is not None and not isinstance(value, str):
                raise SourceError(f"{where}: {key} must be a string, got {_short(value)}")
        languages = data.get("languages") or []
        if not isinstance(languages, list):
            raise SourceError(f"{where}: languages must be a list of ISO 639-3 codes, got {_short(languages)}")
        info = cls(
            name=data["name"],
            task_type=data["task_type"],
            eval_split=data["eval_split"],
            languages=tuple(languages),
            train_split=data.get("train_split"),
            mteb_task=data.get("mteb_task"),
            hf_path=data.get("hf_path"),
            hf_revision=data.get("hf_revision"),
        )
        for split in (info.eval_split, info.train_split):
            if split is not None and not TABLE_NAME.match(split):
                raise SourceError(f"{where}: split {split!r} is not a table name (letters, digits and _ only)")
        if not NAME_PATTERN.match(info.name):
            raise SourceError(f"{where}: dataset name {info.name!r} must match {NAME_PATTERN.pattern}")
        try:
            task_type(info.task_type)
        except SourceError as err:
            raise SourceError(f"{where}: {err}") from None
        bad = [lang for lang in info.languages if not isinstance(lang, str) or not LANGUAGE_CODE.match(lang)]
        if bad:
            raise SourceError(f"{where}: languages must be ISO 639-3 codes, got {bad}")
        if task_type(info.task_type).has_train_split and not info.train_split:
            raise SourceError(f"{where}: a {info.task_type} dataset needs a train_split")
        if data.get("subsets") is not None:
            info = info.with_subsets(check_subsets(data["subsets"], info.task_type, where=where), where=where)
        return info

    def with_subsets(self, subsets: Mapping[str, tuple[str, ...]], *, where: str) -> DatasetInfo:
        """This info with `subsets`; `languages` must be their languages (it is filled in when empty)."""
        union = subsets_union(subsets)
        if self.languages and set(self.languages) != set(union):
            raise SourceError(
                f"{where}: languages {sorted(self.languages)} are not the languages of the subsets {list(union)}"
            )
        return replace(self, subsets=dict(subsets), languages=self.languages or union)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["languages"] = list(self.languages)
        data["subsets"] = {name: list(codes) for name, codes in self.subsets.items()} or None
        return {k: v for k, v in data.items() if v is not None}

    def language_of(self, subset: str, position: int) -> str:
        """The language of the text at `position` (index into the task type's text fields) of a subset's row."""
        codes = self.subsets[subset]
        return codes[position] if len(codes) > 1 else codes[0]

    def transformed_fields(self) -> list[str]:
        """`table.field` of every text HTEB transforms in this dataset (hteb_contract.tasks says which)."""
        spec = task_type(self.task_type)
        return [f"{resolve(t, self.eval_split, self.train_split)}.{f}" for t, f in spec.text_fields]

    def text_tables(self) -> list[str]:
        """The tables holding transformed texts, with this dataset's split names."""
        spec = task_type(self.task_type)
        return list(dict.fromkeys(resolve(t, self.eval_split, self.train_split) for t, _ in spec.text_fields))

    def tables(self) -> list[str]:
        """The table names this dataset must have, with its own split names."""
        names = [resolve(t, self.eval_split, self.train_split) for t in task_type(self.task_type).tables]
        return list(dict.fromkeys(names))


@dataclass
class SourceDataset:
    """A dataset's metadata and its tables of rows; every row's subset is declared in `info.subsets`."""

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
            checks = [(f, spec.check_of(f).check, spec.check_of(f).must) for f in fields]
            for index, row in enumerate(rows):
                optional = [
                    (f, any_value, "") for f in CORPUS_FIELDS if table == CORPUS_TABLE and f not in fields and f in row
                ]  # a title is embedded too: only its text is checked
                for fld, check, must in checks + optional:
                    if fld not in row:
                        raise SourceError(f"{self.origin}: {table} row {index + 1}: missing field {fld!r}")
                    if not check(row[fld]):
                        raise SourceError(
                            f"{self.origin}: {table} row {index + 1}: {fld} must be {must}, got {_short(row[fld])}"
                        )
                    surrogate = lone_surrogate(row[fld])
                    if surrogate is not None:
                        raise SourceError(
                            f"{self.origin}: {table} row {index + 1}: {fld} holds a lone surrogate "
                            f"{surrogate!r}: not Unicode text (a JSON \\u escape of half a pair?)"
                        )
        if not self.info.subsets:
            self.info = self.info.with_subsets(self._subsets_from_names(), where=self.origin)
        self._check_row_subsets()
        for table, rows in self.tables.items():
            if table not in self.ids:  # ids given by with_texts survive dropped rows
                self.ids[table] = _item_ids(rows, where=f"{self.origin}: {table}")
            else:
                _check_ids(self.ids[table], rows, where=f"{self.origin}: {table}")

    def _rows_with_subsets(self) -> Iterator[tuple[str, int, str]]:
        """(table, row number, subset) of every row that is in a subset: rows naming one, and every
        row of a table of transformed texts (no name: `default`)."""
        text_tables = set(self.info.text_tables())
        for table, rows in self.tables.items():
            for index, row in enumerate(rows):
                if table in text_tables or SUBSET_FIELD in row:
                    yield table, index + 1, subset_of(row)

    def _subsets_from_names(self) -> dict[str, tuple[str, ...]]:
        """A dataset.json without `subsets`: each subset's languages from its name (`subset_languages`);
        rows without a subset take the dataset's single language."""
        names = sorted({subset for _, _, subset in self._rows_with_subsets()})
        if not names:
            tables = ", ".join(self.info.text_tables())
            raise SourceError(f"{self.origin}: no rows in {tables} (an empty file?): no text to transform or score")
        subsets = {}
        for name in names:
            if name != DEFAULT_SUBSET:
                subsets[name] = subset_languages(name)
            elif len(self.info.languages) == 1:
                subsets[name] = self.info.languages
            else:
                raise SourceError(
                    f"{self.origin}: rows without a {SUBSET_FIELD!r} field need a single language in "
                    f"dataset.json (it lists {list(self.info.languages)}) or a `subsets` declaration"
                )
        return subsets

    def _check_row_subsets(self) -> None:
        for table, number, subset in self._rows_with_subsets():
            if subset not in self.info.subsets:
                raise SourceError(
                    f"{self.origin}: {table} row {number}: subset {subset!r} is not declared in "
                    f"dataset.json subsets ({', '.join(self.info.subsets)})"
                )

    @property
    def name(self) -> str:
        return self.info.name

    def eval_rows(self) -> list[dict[str, Any]]:
        return self.tables[self.info.eval_split]

    def train_rows(self) -> list[dict[str, Any]]:
        """The rows of the train split a Classification dataset names."""
        return self.tables[self.info.train_split_name]

    def _text_fields(self) -> dict[str, list[tuple[int, str]]]:
        """Table -> (language position, field) of its transformed fields, in the task type's order."""
        spec = task_type(self.info.task_type)
        fields: dict[str, list[tuple[int, str]]] = {}
        for position, (table_key, fld) in enumerate(spec.text_fields):
            table = resolve(table_key, self.info.eval_split, self.info.train_split)
            fields.setdefault(table, []).append((position, fld))
        return fields

    def _refs(self, table: str, item_id: str, row: Mapping[str, Any], position: int, fld: str) -> Iterator[TextRef]:
        """The texts of one field of one row, each with its own language."""
        subset = subset_of(row)
        language = self.info.language_of(subset, position)
        for name, text in iter_field_texts(row, fld, task_type(self.info.task_type).list_fields):
            yield TextRef(table, item_id, name, text, language, subset)

    def iter_texts(self) -> Iterator[TextRef]:
        """Every text HTEB transforms in this dataset, field by field in the task type's order."""
        return map(TextRef, *self.text_columns().values())

    def text_columns(self) -> dict[str, list[str]]:
        """The `TextRef`s of `iter_texts` as columns (`TEXT_COLUMNS`), built without an object per
        text: what a revision's reader checks an items file against, column by column."""
        columns: dict[str, list[str]] = {name: [] for name in TEXT_COLUMNS}
        tables, item_ids, names, texts, languages, subsets = columns.values()
        list_fields = task_type(self.info.task_type).list_fields
        for table, fields in self._text_fields().items():
            for position, fld in fields:
                for item_id, row in zip(self.ids[table], self.tables[table]):
                    subset = subset_of(row)  # as `_refs` reads a row's texts
                    language = self.info.language_of(subset, position)
                    for name, text in iter_field_texts(row, fld, list_fields):
                        tables.append(table)
                        item_ids.append(item_id)
                        names.append(name)
                        texts.append(text)
                        languages.append(language)
                        subsets.append(subset)
        return columns

    def with_texts(self, lookup: Callable[[TextRef], str | None]) -> SourceDataset:
        """A copy whose transformable texts are replaced by `lookup(ref)`.

        `lookup` returns the new text, or None to drop the row from its table (the
        `--on-error drop` policy); rows of other tables are shared, not copied.
        """
        list_fields = task_type(self.info.task_type).list_fields
        tables = dict(self.tables)
        ids = dict(self.ids)
        for table, fields in self._text_fields().items():
            new_rows, new_ids = [], []
            for item_id, row in zip(self.ids[table], self.tables[table]):
                new_row, keep = dict(row), True
                for position, fld in fields:
                    values = []
                    for ref in self._refs(table, item_id, row, position, fld):
                        new = lookup(ref)
                        keep = keep and new is not None
                        values.append(ref.text if new is None else new)
                    new_row[fld] = values if fld in list_fields else values[0]
                if keep:
                    new_rows.append(new_row)
                    new_ids.append(item_id)
            tables[table], ids[table] = new_rows, new_ids
        return SourceDataset(replace(self.info), tables, self.origin, ids)

    def iter_corpus_texts(self) -> Iterator[TextRef]:
        """Every non-empty title and text of the corpus (the opt-in corpus noise of retrieval), in row
        order; none for a dataset without a corpus. A document's language is its subset's first."""
        return map(TextRef, *self.corpus_text_columns().values())

    def corpus_text_columns(self) -> dict[str, list[str]]:
        """The `TextRef`s of `iter_corpus_texts` as columns (`TEXT_COLUMNS`), as `text_columns` gives the others."""
        refs = []
        for item_id, row in zip(self.ids.get(CORPUS_TABLE, ()), self.tables.get(CORPUS_TABLE, ())):
            subset = subset_of(row)
            language = self.info.language_of(subset, 0) if subset in self.info.subsets else self.info.languages[0]
            for fld in CORPUS_FIELDS:
                text = row.get(fld)
                if isinstance(text, str) and text:
                    refs.append((CORPUS_TABLE, item_id, fld, text, language, subset))
        return {name: [ref[at] for ref in refs] for at, name in enumerate(TEXT_COLUMNS)}

    def with_corpus_texts(self, lookup: Callable[[TextRef], str]) -> SourceDataset:
        """A copy whose corpus titles and texts are `lookup(ref)` (a perturbed corpus); every other
        table, the queries included, is shared, not copied."""
        rows = [dict(row) for row in self.tables[CORPUS_TABLE]]
        by_id = dict(zip(self.ids[CORPUS_TABLE], rows))
        for ref in self.iter_corpus_texts():
            by_id[ref.item_id][ref.field] = lookup(ref)
        tables = {**self.tables, CORPUS_TABLE: rows}
        return SourceDataset(replace(self.info), tables, self.origin, dict(self.ids))

    def select_subsets(self, names: Iterable[str], *, name: str | None = None) -> SourceDataset:
        """Only the rows of the named subsets (rows outside every subset, e.g. a corpus, stay), under
        `name` if given: a registry entry that evaluates some of mteb's hf_subsets (SemRel2024-eng)."""
        names = list(names)
        unknown = [n for n in names if n not in self.info.subsets]
        if unknown:
            raise SourceError(f"{self.origin}: no subset {unknown[0]!r}; it has: {', '.join(self.info.subsets)}")
        text_tables = set(self.info.text_tables())
        tables, ids = {}, {}
        for table, rows in self.tables.items():
            keep = [
                i
                for i, row in enumerate(rows)
                if subset_of(row) in names or (table not in text_tables and SUBSET_FIELD not in row)
            ]
            tables[table] = [rows[i] for i in keep]
            ids[table] = [self.ids[table][i] for i in keep]
        subsets = {n: self.info.subsets[n] for n in names}
        info = replace(self.info, name=name or self.info.name, subsets=subsets, languages=subsets_union(subsets))
        return SourceDataset(info, tables, self.origin, ids)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _item_ids(rows: list[dict[str, Any]], *, where: str) -> list[str]:
    """Row ids: the `id` field where every row has one (must be unique), else the row index."""
    if rows and all("id" in row for row in rows):
        ids = [str(row["id"]) for row in rows]
        _check_ids(ids, rows, where=where)
        return ids
    return [str(index) for index in range(len(rows))]


def _check_ids(ids: list[Any], rows: list[dict[str, Any]], *, where: str) -> None:
    """One unique string id per row (item records find their text by it)."""
    if len(ids) != len(rows):
        raise SourceError(f"{where}: {len(ids)} ids for {len(rows)} rows")
    seen: set[str] = set()
    for number, item_id in enumerate(ids, 1):
        if not isinstance(item_id, str) or not item_id:
            raise SourceError(f"{where} row {number}: item id {_short(item_id)} is not a non-empty string")
        if item_id in seen:
            raise SourceError(f"{where} row {number}: duplicate id {item_id!r}")
        seen.add(item_id)


def _read_info(folder: Path, read_bytes: Callable[[Path], bytes] = Path.read_bytes) -> DatasetInfo:
    path = folder / "dataset.json"
    if not path.is_file():
        raise SourceError(f"{folder}: no dataset.json (not a dataset folder in the shared/data layout)")
    return DatasetInfo.from_json(json_input.load_object(read_bytes(path), str(path), SourceError), where=str(path))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Rows of a JSON Lines file; a bad line is reported with its number."""
    rows = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                row = json_input.loads(line, f"{path}:{number}", SourceError)
                if not isinstance(row, dict):
                    raise SourceError(f"{path}:{number}: expected a JSON object")
                rows.append(row)
    except UnicodeDecodeError:
        raise SourceError(f"{path}: not UTF-8 text") from None
    return rows


def _read_tables(
    folder: Path,
    suffix: str,
    reader: Callable[[Path], list[dict[str, Any]]],
    read_bytes: Callable[[Path], bytes] = Path.read_bytes,
) -> tuple[DatasetInfo, dict[str, list[dict[str, Any]]]]:
    """dataset.json and every table the task type needs, each read from `<table><suffix>`."""
    info = _read_info(folder, read_bytes)
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
    from hteb_contract.common.atomic import atomic_write_json

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_json(folder / "dataset.json", dataset.info.to_json())
    written = [folder / "dataset.json"]
    for table, rows in sorted(dataset.tables.items()):
        path = folder / f"{table}.parquet"
        write_parquet(path, [{**row, ID_COLUMN: item_id} for item_id, row in zip(dataset.ids[table], rows)])
        written.append(path)
    return written


def read_source_parquet(folder: Path, read_bytes: Callable[[Path], bytes] = Path.read_bytes) -> SourceDataset:
    """Read the source copy inside a revision (parquet only: never pickle); every file's bytes come
    from `read_bytes` (a revision's hashes them as they are read)."""

    def rows(path: Path) -> list[dict[str, Any]]:
        return read_parquet_rows(read_bytes(path), str(path))[1]

    info, tables = _read_tables(Path(folder), ".parquet", rows, read_bytes)
    ids = {}
    for table, table_rows in tables.items():
        if table_rows and all(ID_COLUMN in row for row in table_rows):
            ids[table] = [row.pop(ID_COLUMN) for row in table_rows]
    return SourceDataset(info, tables, origin=str(folder), ids=ids)
