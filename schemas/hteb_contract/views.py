"""Read a revision the way a researcher looks at it: an item's texts side by side, a label's folder.

The item records are one row per transformed text (an STS pair is two records), which is what
the scorer needs; a person comparing an item's original and transformed texts wants one row per
item. `side_by_side` gives that table in one call; `revision_folder` gives the folder of a label
of a local store, which `datasets.load_dataset(folder, config)` reads.

>>> from hteb_contract.views import revision_folder, side_by_side
>>> table = side_by_side(revision_folder("score/hteb_score/sample/store", "sample-1339"),
...                      "STSBenchmark", "translation_1339")          # doctest: +SKIP
>>> table.column_names                                                 # doctest: +SKIP
['split', 'item_id', 'subset', 'sentence1', 'sentence1_transformed', 'sentence2', 'sentence2_transformed']
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from hteb_contract.errors import SourceError
from hteb_contract.revision import Revision, parse_split
from hteb_contract.stores import open_store

KEY_COLUMNS = ("split", "item_id", "subset")
TRANSFORMED = "_transformed"


def revision_folder(store: str | Path, label: str) -> Path:
    """The verified folder of `label` (or a content hash prefix) in `store` (a local folder,
    file://, or hf://owner/name), ready for `datasets.load_dataset(str(folder), config)`."""
    return open_store(str(store)).fetch(label).root


def side_by_side(revision: Revision | str | Path, dataset: str, split: str) -> pa.Table:
    """One row per item of `dataset`'s variant `split` (`translation_1339`), in source order:
    `split` (the source table), `item_id`, `subset`, then for each transformed field its original
    text and `<field>_transformed` (an SummEval item has a pair per summary).

    `revision`: an opened Revision or a revision folder (verified when opened here). A field an
    item does not have (a retrieval query has no second text) is null.
    """
    opened = revision if isinstance(revision, Revision) else Revision.open(Path(revision), datasets=[dataset])
    transformation, seed = parse_split(split)
    records = opened.items(dataset, transformation, seed)
    order = {(t.table, t.item_id): i for i, t in enumerate(opened.source(dataset).iter_texts())}
    fields: dict[str, None] = {}
    rows: dict[tuple[str, str], dict[str, str | None]] = {}
    for record in sorted(records, key=lambda r: (order[(r.split, r.item_id)], r.field)):
        row = rows.setdefault(
            (record.split, record.item_id), {"split": record.split, "item_id": record.item_id, "subset": record.subset}
        )
        row[record.field], row[record.field + TRANSFORMED] = record.original_text, record.transformed_text
        fields.setdefault(record.field)
    if not rows:
        raise SourceError(f"revision {opened.label}: {dataset} {split} has no records")
    columns = [*KEY_COLUMNS, *(name for f in _source_order(fields) for name in (f, f + TRANSFORMED))]
    return pa.table({c: pa.array([row.get(c) for row in rows.values()], pa.string()) for c in columns})


def _source_order(fields: dict[str, None]) -> list[str]:
    """Field names in reading order: `machine_summaries[2]` before `machine_summaries[10]`."""

    def key(name: str) -> tuple[str, int]:
        base, _, index = name.partition("[")
        return (base, int(index.rstrip("]")) if index else -1)

    first = {name.partition("[")[0]: i for i, name in reversed(list(enumerate(fields)))}
    return sorted(fields, key=lambda name: (first[name.partition("[")[0]], key(name)))
