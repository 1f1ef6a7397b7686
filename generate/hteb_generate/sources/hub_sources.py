"""Source datasets from the Hugging Face Hub at their pinned revisions, read the way mteb 2.26.24 reads them.

mteb's loading logic is ported here, not called: mteb is not a dependency of the generator (it is a
test dependency, and the sources-table test checks every entry against its task metadata). What is ported:

- Non-retrieval tasks (`AbsTask.load_data`, abstasks/abstask.py): a monolingual task reads the default
  config, `load_dataset(path, revision=...)`; a multilingual one reads one config per hf_subset,
  `load_dataset(path, name=subset, revision=...)`; a task with `fast_loading` (STS17, MassiveIntent)
  reads the default config once and splits its rows by their `lang` column, keeping only its
  hf_subsets (`AbsTask.fast_load`). The eval and train splits must exist as named.
- Then each task's own `dataset_transform`: column renames (SprintDuplicateQuestions,
  TwitterSemEval2015 and TwitterURLCorpus rename sent1/sent2), a pair-classification split of one row
  of lists read as the rows of those lists (`AbsTaskPairClassification._evaluate_subset`), and v2
  clustering's flattening of cluster sets into rows, while legacy clustering
  (`AbsTaskClusteringLegacy`: BiorxivClusteringS2S, MasakhaNEWSClusteringS2S) keeps each Hub row as
  one set to cluster: its texts get the set's index in `cluster_set`.
- Retrieval and reranking (`RetrievalDatasetLoader`, abstasks/retrieval_dataset_loaders.py): configs
  `corpus`, `queries` (`query` wherever the repo has one), qrels `default` else `qrels`, and
  `top_ranked` when the repo has it; a multilingual task prefixes them with the subset
  (`<subset>-corpus`, `<subset>-queries`, `<subset>-qrels`, `<subset>-top_ranked`). A config is read
  at the eval split, or at its only split when it has exactly one (BEIR's `corpus` and `queries`
  splits, e.g. mteb/scifact). `_id` becomes `id` (a string); qrels are (str, str, int), a repeated
  (query, document) pair counting once with its last score; queries without any qrels row are
  dropped (mteb's filter: SciFact keeps its 300 judged queries of 1109).

Rows then take the layout of hteb_contract.tasks (converters in ``hub_converters.py``), with their
mteb subset in the `lang` field, so the scorer reads every dataset the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from hteb_contract.errors import SourceError, first_line
from hteb_contract.common.registry import Registry
from hteb_contract.source_values import DEFAULT_SUBSET, SUBSET_FIELD
from hteb_contract.sources import SourceDataset
from hteb_contract.specs.datasets import DatasetSpec
from hteb_contract.tasks import task_type

Row = Mapping[str, Any]
Raw = Mapping[str, Mapping[str, Iterable[Row]]]  # config -> split -> rows (what load_dataset returns per config)
Tables = dict[str, list[dict[str, Any]]]


class RetrievalConfigs(NamedTuple):
    """The configs that hold one subset's retrieval parts (top_ranked None: the repo has none)."""

    corpus: str
    queries: str
    qrels: str
    top_ranked: str | None


def retrieval_configs(entry: DatasetSpec, available: Collection[str]) -> dict[str, RetrievalConfigs]:
    """Per subset, the config of each part (corpus, queries, qrels, top_ranked) as mteb's
    RetrievalDatasetLoader picks it among the repo's `available` configs (top_ranked None: absent)."""
    picked = {}
    for subset in entry.subsets:
        prefix = "" if subset == DEFAULT_SUBSET else f"{subset}-"
        if prefix:
            qrels = f"{prefix}qrels"
        elif "default" in available or "qrels" not in available:
            qrels = "default"
        else:
            qrels = "qrels"
        if f"{prefix}instruction" in available:
            raise SourceError(
                f"{entry.hf_path}@{entry.hf_revision}: queries with instructions (config "
                f"{prefix}instruction) are not supported"
            )
        top_ranked = f"{prefix}top_ranked"
        queries = "query" if "query" in available else f"{prefix}queries"
        picked[subset] = RetrievalConfigs(
            f"{prefix}corpus", queries, qrels, top_ranked if top_ranked in available else None
        )
    return picked


def hub_configs(entry: DatasetSpec, available: Collection[str]) -> list[str]:
    """The configs to read: the retrieval parts, `default` (monolingual or fast loading), or one per subset."""
    if task_type(entry.task_type).has_corpus:
        parts = retrieval_configs(entry, available).values()
        return list(dict.fromkeys(config for part in parts for config in part if config is not None))
    if entry.fast_loading or not entry.multilingual_hub:
        return ["default"]
    return list(entry.subsets)


@dataclass(frozen=True)
class HubRows:
    """One dataset's downloaded configs; a missing config, split or column is a SourceError naming it."""

    entry: DatasetSpec
    raw: Raw

    def fail(self, problem: str) -> SourceError:
        return SourceError(f"{self.entry.hf_path}@{self.entry.hf_revision}: {problem}")

    def splits(self, config: str) -> Mapping[str, Iterable[Row]]:
        if config not in self.raw:
            raise self.fail(f"no config {config!r} (has: {', '.join(sorted(self.raw))})")
        return self.raw[config]

    def rows(self, config: str, split: str, *, only_split_fallback: bool = False) -> list[Row]:
        """The rows of a config's split; with `only_split_fallback`, a config with a single split is read
        whatever that split is called (mteb's RetrievalDatasetLoader._get_split)."""
        splits = self.splits(config)
        if split not in splits:
            if not (only_split_fallback and len(splits) == 1):
                raise self.fail(f"no split {split!r} in config {config!r} (has: {', '.join(sorted(splits))})")
            split = next(iter(splits))
        rows = list(splits[split])
        if not rows:
            raise self.fail(f"split {split!r} of config {config!r} has no rows")
        return rows

    def column(self, config: str, row: Row, name: str) -> Any:
        if name not in row:
            raise self.fail(f"no column {name!r} in config {config!r} (has: {', '.join(sorted(row))})")
        return row[name]

    def subset_rows(self, split: str) -> list[tuple[str, str, list[Row]]]:
        """(subset, config, rows) of a non-retrieval split as mteb loads it, the task's renames applied."""
        entry = self.entry
        if entry.fast_loading:
            rows = self.rows("default", split)
            groups = [(s, "default", [r for r in rows if r.get(SUBSET_FIELD) == s]) for s in entry.subsets]
            missing = [s for s, _, found in groups if not found]
            if missing:
                raise self.fail(
                    f"no row of subset {missing[0]!r} in the {SUBSET_FIELD!r} column of config "
                    f"'default' split {split!r}"
                )
        elif entry.multilingual_hub:
            groups = [(subset, subset, self.rows(subset, split)) for subset in entry.subsets]
        else:
            groups = [(DEFAULT_SUBSET, "default", self.rows("default", split))]
        return [(s, c, [{entry.renames.get(k, k): v for k, v in row.items()} for row in rows]) for s, c, rows in groups]


def tag(subset: str, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a subset with its name in `lang` (rows of `default` carry none, like shared/data's)."""
    if subset == DEFAULT_SUBSET:
        return list(rows)
    return [{**row, SUBSET_FIELD: subset} for row in rows]


Converter = Callable[[HubRows], Tables]
#: Task type -> converter; the converters load on first lookup.
CONVERTERS: Registry[Converter] = Registry("Hub task type", modules=("hteb_generate.sources.hub_converters",))


def convert(entry: DatasetSpec, raw: Raw) -> SourceDataset:
    """What `load_dataset` returned for each config (config -> split -> rows) -> the layout of
    hteb_contract.tasks, as mteb reads it (see the module docstring)."""
    tables = CONVERTERS.get(entry.task_type)(HubRows(entry, raw))
    return SourceDataset(entry.info, tables, origin=f"hf://{entry.hf_path}@{entry.hf_revision}")


def load_hub_dataset(entry: DatasetSpec) -> SourceDataset:
    """Download the pinned revision's configs with `datasets` and convert them."""
    import datasets

    where = f"{entry.hf_path}@{entry.hf_revision}"
    available: list[str] = []
    if task_type(entry.task_type).has_corpus:
        try:
            available = datasets.get_dataset_config_names(entry.hf_path, revision=entry.hf_revision)
        except Exception as err:
            raise SourceError(f"cannot list the configs of {where}: {first_line(err)}") from None
    raw: dict[str, Any] = {}
    for config in hub_configs(entry, available):
        name = config if available or config != "default" else None  # mteb reads a task's default config unnamed
        try:
            raw[config] = datasets.load_dataset(entry.hf_path, name, revision=entry.hf_revision)
        except Exception as err:
            raise SourceError(f"cannot load {where} config {config!r}: {first_line(err)}") from None
    return convert(entry, raw)
