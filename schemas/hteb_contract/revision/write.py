"""Writing a revision: sources, item records or tables, the dataset card and eval.yaml, then the seal."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.arrow import arrow_schema
from hteb_contract.common.atomic import (
    atomic_write_text,
)
from hteb_contract.card import FIRST_CARD, HUB_CARD, SourceLicense, SourceTables, front_matter, hub_source, source_pin
from hteb_contract.errors import ContractError
from hteb_contract.hub_eval import revision_eval_yaml
from hteb_contract.item_table import NotPlain, records_table
from hteb_contract.records import ItemRecord
from hteb_contract.revision.change_shares import rules_of, share_entries
from hteb_contract.revision.item_checks import REF, check_row, check_tables, file_what, sorted_by_ref
from hteb_contract.revision.layout import CARD, EVAL, Progress, Variant, corpus_path, items_path, quiet
from hteb_contract.revision.manifest import seal
from hteb_contract.parquet_io import write_parquet, write_table
from hteb_contract.sources import DatasetInfo, SourceDataset, write_source_parquet


def write_items(
    root: Path, dataset: str, transformation: str, seed: int, records: Sequence[ItemRecord], *, corpus: bool = False
) -> Path:
    """Validate item records (`corpus`: perturbed corpus records) against the contract, then write
    them (sorted, stable bytes): `write_item_table` of their table. A value JSON would not hold as
    its column's type (`NotPlain`) makes no table: every record is then checked alone, which words
    the refusal."""
    ordered = sorted(records, key=lambda r: r.ref)
    try:
        table = records_table(ordered)
    except (NotPlain, pa.ArrowException, TypeError, ValueError, OverflowError, AttributeError):
        what = file_what(dataset, transformation, seed, corpus)
        rows = []
        for index, record in enumerate(ordered):
            rows.append(record.to_row())
            check_row(rows[-1], index, what, (dataset, transformation, seed), corpus)
        path = Path(root) / (corpus_path if corpus else items_path)(dataset, transformation, seed)
        write_parquet(path, rows, schema=arrow_schema("item"))
        return path
    return write_item_table(root, dataset, transformation, seed, table, corpus=corpus)


def write_item_table(
    root: Path, dataset: str, transformation: str, seed: int, table: pa.Table, *, corpus: bool = False
) -> Path:
    """Validate an item table (`item_table.records_table`'s schema; `corpus`: perturbed corpus
    records) against the contract, then write it sorted by ref (stable bytes): `write_item_tables`
    of one."""
    return write_item_tables(root, {(dataset, transformation, seed): table}, corpus=corpus)[0]


#: The most rows `write_item_tables` checks as one table (memory stays bounded on a full-size revision).
CHECK_ROWS = 1_000_000


def write_item_tables(
    root: Path,
    tables: Mapping[Variant, pa.Table],
    *,
    corpus: bool = False,
    progress: Progress = quiet,
    desc: str = "writing item tables",
) -> list[Path]:
    """Validate item tables, one per (dataset, transformation, seed) (`corpus`: perturbed corpus
    records), against the contract, then write each sorted by ref (stable bytes); a refusal writes none.

    Why tables: a generator that makes its texts in bulk (the noise rules) hands over columns, not a
    record per text. The tables are checked together with Arrow compute (`columnar`: every check is a
    row's own, so a file costs its rows, not some 200 Arrow calls); the rows those checks cannot clear
    (none, in sound files) are checked one by one, in order, which words the refusal (`check_row`).
    `progress` reports each file written (as `desc`), once all are checked."""
    ordered: dict[Variant, pa.Table] = {}
    for (dataset, transformation, seed), table in tables.items():
        if not table.schema.equals(arrow_schema("item")):
            raise ContractError(
                f"{file_what(dataset, transformation, seed, corpus)}: not an item table "
                f"(its Arrow schema is not hteb_contract.arrow's item schema)"
            )
        if not sorted_by_ref(table):
            table = table.take(pc.sort_indices(table, [(name, "ascending") for name in REF]))
        ordered[(dataset, transformation, seed)] = table
    batch: list[Variant] = []
    for variant in [*ordered, None]:
        if batch and (
            variant is None or sum(ordered[v].num_rows for v in batch) + ordered[variant].num_rows > CHECK_ROWS
        ):
            check_tables({v: ordered[v] for v in batch}, corpus)
            batch = []
        if variant is not None:
            batch.append(variant)
    paths = []
    for (dataset, transformation, seed), table in progress(ordered.items(), desc, len(ordered)):
        paths.append(Path(root) / (corpus_path if corpus else items_path)(dataset, transformation, seed))
        write_table(paths[-1], table)
    return paths


def manifest_source(info: DatasetInfo, *, origin: str, sample: int | None) -> dict[str, Any]:
    """The manifest's entry for one source dataset: names, pin, languages, subsets and what was transformed."""
    return {
        "name": info.name,
        "task_type": info.task_type,
        "mteb_task": info.mteb_task,
        "hf_path": info.hf_path,
        "hf_revision": info.hf_revision,
        "origin": origin,
        "languages": list(info.languages),
        "subsets": {name: list(codes) for name, codes in info.subsets.items()},
        "transformed_fields": info.transformed_fields(),
        "sample": sample,
    }


def write_revision(
    root: Path,
    sources: Iterable[SourceDataset],
    records: Iterable[ItemRecord],
    manifest_fields: Mapping[str, Any],
    card_body: str,
    *,
    tables: Mapping[Variant, pa.Table] | None = None,
    corpus_tables: Mapping[Variant, pa.Table] | None = None,
    licenses: Sequence[SourceLicense] = (),
    task_ids: Iterable[str] = (),
    describe: Callable[[Path, Sequence[Mapping[str, Any]]], Any] | None = None,
    progress: Progress = quiet,
) -> dict[str, Any]:
    """Write a whole revision into the empty folder `root` and seal it; returns the manifest.

    The source copy of each dataset, one items file per (dataset, transformation, seed): the
    `records`' in the order first met, then each of `tables` (item tables made in bulk, as the noise
    rules make them: `write_item_table`); one corpus file per entry of `corpus_tables` (the manifest
    must then say `corpus_perturbed`); the dataset card (front matter from `hteb_contract.card` with
    the sources' `licenses` and Hub `task_ids`, in the version the config's `card` names, whose
    `dataset_info` `describe` gives from the files written; then `card_body`), the manifest (with the `change_shares`
    of every items file: `revision.change_shares`); `progress` reports
    each stage (sources, items and corpus files, sealing).
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
        for (name, transformation, seed), group in progress(
            grouped.items(), "checking and writing items", len(grouped)
        ):
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
    languages = {code for s in sources for codes in (s.info.languages, *s.info.subsets.values()) for code in codes}
    languages |= {r.target_language for r in records if r.target_language}
    for table in tables.values():
        languages |= set(pc.unique(pc.drop_null(table.column("target_language"))).to_pylist())
    card = manifest_fields.get("config", {}).get("card", FIRST_CARD)
    head = front_matter(
        manifest_fields.get("label", ""),
        [source_tables(s) for s in sources],
        variants,
        corpus_variants,
        languages=languages,
        rows=len(records) + sum(table.num_rows for table in tables.values()),
        licenses=licenses,
        source_datasets=[
            (hub_source if card == HUB_CARD else source_pin)(s) for s in manifest_fields.get("sources", ())
        ],
        task_ids=task_ids,
        card=card,
        describe=None if describe is None else (lambda configs: describe(root, configs)),
    )
    atomic_write_text(root / CARD, head + card_body)
    atomic_write_text(root / EVAL, revision_eval_yaml(manifest_fields, variants))
    shares = [
        entry
        for (name, transformation, seed), table in _item_tables(grouped, tables).items()
        for entry in share_entries(name, transformation, seed, table, rules=rules_of(manifest_fields))
    ]
    return seal(root, {**manifest_fields, "change_shares": shares}, progress)


def _item_tables(
    grouped: Mapping[Variant, Sequence[ItemRecord]], tables: Mapping[Variant, pa.Table]
) -> dict[Variant, pa.Table]:
    """The subset, original and transformed text of every items file written, as tables (`change_shares`)."""
    columns = ("subset", "original_text", "transformed_text")
    found = {
        variant: pa.table({c: pa.array([getattr(r, c) for r in group], pa.string()) for c in columns})
        for variant, group in grouped.items()
    }
    return {**found, **{variant: table.select(list(columns)) for variant, table in tables.items()}}


def source_tables(dataset: SourceDataset) -> SourceTables:
    """What the card says of a source copy (its `-original` configs)."""
    info = dataset.info
    return SourceTables(info.name, info.task_type, info.eval_split, info.train_split, tuple(dataset.tables))
