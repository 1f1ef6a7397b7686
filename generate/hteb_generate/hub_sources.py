"""Source datasets from the Hugging Face Hub at their pinned revisions, in the layout of hteb_contract.tasks.

Why a converter per task type: mteb's Hub datasets store each task type differently (pair
classification and clustering keep lists in one row, retrieval splits corpus/queries/qrels into
configs with `_id`/`query-id` columns); the revision's `source/` copy must use the one layout of
hteb_contract.tasks, so the scorer reads every dataset the same way. Language subsets (configs such
as `en`, `afr` or `en-de`) become a `lang` column (ISO 639-3; a cross-lingual pair gets its first
language). The converters are in ``hub_converters.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hteb_contract.errors import SourceError
from hteb_contract.registry import Registry
from hteb_contract.sources import SourceDataset

from .registry import SourceEntry

Row = Mapping[str, Any]
Raw = Mapping[str, Mapping[str, Iterable[Row]]]  # config -> split -> rows
Tables = dict[str, list[dict[str, Any]]]


def subset_configs(entry: SourceEntry) -> tuple[str, ...]:
    """The Hub configs holding a non-retrieval dataset's rows: its language subsets, else `default`."""
    return entry.hf_subsets or ("default",)


@dataclass(frozen=True)
class HubRows:
    """One dataset's downloaded configs; a missing config, split or column is a SourceError naming it."""

    entry: SourceEntry
    raw: Raw

    def _fail(self, problem: str) -> SourceError:
        return SourceError(f"{self.entry.hf_path}@{self.entry.hf_revision}: {problem}")

    def rows(self, config: str, split: str) -> Iterable[Row]:
        if config not in self.raw:
            raise self._fail(f"no config {config!r} (has: {', '.join(sorted(self.raw))})")
        if split not in self.raw[config]:
            raise self._fail(f"no split {split!r} in config {config!r} (has: {', '.join(sorted(self.raw[config]))})")
        return self.raw[config][split]

    def first_row(self, config: str, split: str) -> Row:
        for row in self.rows(config, split):
            return row
        raise self._fail(f"split {split!r} of config {config!r} has no rows")

    def column(self, config: str, row: Row, *names: str) -> Any:
        """The first of `names` the row has (mteb spells some columns two ways)."""
        for name in names:
            if name in row:
                return row[name]
        wanted = " or ".join(repr(n) for n in names)
        raise self._fail(f"no column {wanted} in config {config!r} (has: {', '.join(sorted(row))})")


Converter = Callable[[HubRows], Tables]
#: Task type -> converter; the converters load on first lookup.
CONVERTERS: Registry[Converter] = Registry("Hub task type", modules=("hteb_generate.hub_converters",))


def convert(entry: SourceEntry, raw: Raw) -> SourceDataset:
    """Hub rows (config -> split -> rows) in the layout of hteb_contract.tasks."""
    tables = CONVERTERS.get(entry.task_type)(HubRows(entry, raw))
    return SourceDataset(entry.info(), tables, origin=f"hf://{entry.hf_path}@{entry.hf_revision}")


def _configs(entry: SourceEntry) -> tuple[tuple[str, ...], ...]:
    """Per needed table, the Hub config names to try in turn (mteb names qrels `default` or `qrels`)."""
    if entry.task_type in ("Retrieval", "Reranking"):
        tables = (("corpus",), ("queries",), ("default", "qrels"))
        return tables + ((("top_ranked",),) if entry.task_type == "Reranking" else ())
    return tuple((subset,) for subset in subset_configs(entry))


def load_hub_dataset(entry: SourceEntry) -> SourceDataset:
    """Download the pinned revision with `datasets` and convert it."""
    import datasets

    raw: dict[str, Any] = {}
    for candidates in _configs(entry):
        problem = ""
        for config in candidates:
            try:
                raw[config] = datasets.load_dataset(entry.hf_path, config, revision=entry.hf_revision)
                break
            except Exception as err:  # datasets raises many types (network, missing config, auth)
                problem = str(err).splitlines()[0] if str(err) else type(err).__name__
        else:
            raise SourceError(f"cannot load {entry.hf_path}@{entry.hf_revision} config {candidates[0]!r}: {problem}")
    return convert(entry, raw)
