"""What a scoring run reads of an items file, column by column: where each text sits, its original
and kept text, whether the kept text has errors, and the judge's quality and fluency.

Why: a scoring run uses these eight values of a record and nothing else (not its attempts, prompt
or sampling); building an `ItemRecord` with its attempts for each of the 419,000 records of the
noise-1339 revision cost half the scorer's read. `Revision.item_columns` gives them from the
checked Arrow table (`from_table`); code that needs whole records (the generator, reproduction,
a file checked record by record) keeps `ItemRecord`, and `from_records` gives the same columns.

>>> from hteb_contract.records import single_attempt
>>> from hteb_contract.item_table import records_table
>>> record = single_attempt(dataset="D", task_type="STS", subset="default", ref=("test", "0", "sentence1"),
...     source_language="eng", transformation="paraphrasing", seed=1, original_text="a b", output="b a",
...     generator_model="rule", prompt_hash="0" * 64)
>>> columns = ItemColumns.from_table(records_table([record]), "D", "paraphrasing", 1)
>>> columns == ItemColumns.from_records([record], "D", "paraphrasing", 1), columns.refs()
(True, [('test', '0', 'sentence1')])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import compress
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.records import ItemRecord

_T = TypeVar("_T")

#: The item columns `from_table` reads (a file already checked sound needs no other: `Revision.item_columns`).
COLUMNS = ("split", "item_id", "field", "original_text", "transformed_text", "subset", "errors", "judge")


@dataclass(frozen=True)
class ItemColumns:
    """The records of one (dataset, transformation, seed) as parallel lists, in file order."""

    dataset: str
    transformation: str
    seed: int
    split: list[str]
    item_id: list[str]
    field: list[str]
    original_text: list[str]
    transformed_text: list[str]
    subset: list[str]  # the source subset of each text (what a subset's change share is counted over)
    with_errors: list[bool]  # the kept text still has errors (`ItemRecord.errors` not empty)
    quality: list[float | None]  # the judge's; None where no judge rated it
    fluency: list[float | None]

    def __len__(self) -> int:
        return len(self.split)

    def refs(self) -> list[tuple[str, str, str]]:
        """(split, item id, field) of each record: `ItemRecord.ref`."""
        return list(zip(self.split, self.item_id, self.field))

    def where(self, keep: Sequence[bool]) -> ItemColumns:
        """The records whose `keep` is true, in order."""

        def kept(values: list[_T]) -> list[_T]:
            return list(compress(values, keep))

        return ItemColumns(
            self.dataset,
            self.transformation,
            self.seed,
            kept(self.split),
            kept(self.item_id),
            kept(self.field),
            kept(self.original_text),
            kept(self.transformed_text),
            kept(self.subset),
            kept(self.with_errors),
            kept(self.quality),
            kept(self.fluency),
        )

    @classmethod
    def from_table(cls, table: pa.Table, dataset: str, transformation: str, seed: int) -> ItemColumns:
        """The columns of a checked item table (of its `COLUMNS` at least) of that file."""
        errors = table.column("errors")
        judge = table.column("judge")
        split, item_id, field, original_text, transformed_text, subset = (
            table.column(name).to_pylist() for name in COLUMNS[:6]
        )
        return cls(
            dataset,
            transformation,
            seed,
            split,
            item_id,
            field,
            original_text,
            transformed_text,
            subset,
            pc.greater(pc.fill_null(pc.list_value_length(errors), 0), 0).to_pylist(),
            pc.struct_field(judge, "quality").to_pylist(),
            pc.struct_field(judge, "fluency").to_pylist(),
        )

    @classmethod
    def from_records(cls, records: Sequence[ItemRecord], dataset: str, transformation: str, seed: int) -> ItemColumns:
        """The columns of records of that file (checked one by one, or made in memory)."""
        return cls(
            dataset,
            transformation,
            seed,
            [r.split for r in records],
            [r.item_id for r in records],
            [r.field for r in records],
            [r.original_text for r in records],
            [r.transformed_text for r in records],
            [r.subset for r in records],
            [bool(r.errors) for r in records],
            [r.judge.quality for r in records],
            [r.judge.fluency for r in records],
        )
