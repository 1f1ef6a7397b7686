"""Task types: which tables a dataset of each type holds, and which of its texts HTEB transforms.

This is the one place that says which texts change (App. E of the HTEB paper): retrieval and
reranking transform the queries only; every other type transforms every text it embeds for
evaluation (classification: the evaluation split; the training split stays original).
Both the generator (what to transform) and the scorer (where to put transformed text back)
read it from here, and so do the JSON Schemas: their `task_type` enum is `TASK_TYPES`' names
(hteb_contract.validation adds it when it loads a schema). A new task type is one row here plus
its behaviour (docs/extending/adding-a-task-type.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from hteb_contract.common.registry import Registry, RegistryError
from hteb_contract.errors import SourceError
from hteb_contract.field_values import BINARY_LABEL, FIELD_CHECKS, RELEVANCE, FieldCheck
from hteb_contract.mteb_settings import (
    ClassificationSettings,
    ClusteringSettings,
    PairClassificationSettings,
    RetrievalSettings,
    Settings,
    STSSettings,
    SummarizationSettings,
    settings_for,
)

EVAL = "{eval}"  # placeholder for the dataset's evaluation split
TRAIN = "{train}"  # placeholder for the dataset's training split


@dataclass(frozen=True)
class TaskType:
    """What a task type's data looks like and how it is scored."""

    name: str
    tables: tuple[str, ...]  # tables that must exist (placeholders resolved per dataset)
    required_fields: dict[str, tuple[str, ...]]  # table -> fields every row must have
    text_fields: tuple[tuple[str, str], ...]  # (table, field) transformed by HTEB; index = the text's language position
    list_fields: tuple[str, ...] = ()  # text fields that hold a list of texts
    metric: str = ""  # the paper's metric (App. G): the main metric of the `hteb` protocol
    mteb_main_score: str = ""  # what mteb 2.26 reports as main_score: the main metric of the `mteb` protocol
    #: the kind of evaluation settings its mteb abstract task class lets a task class set (hteb_contract/mteb_settings.py)
    mteb_settings: type[Settings] = field(kw_only=True)
    hub_category: str = ""  # the Hub's task_categories tag, as mteb's task metadata maps the type
    #: its queries are searched over the whole corpus (Retrieval; a reranking query ranks only its candidates):
    #: the corpus a Noise rule may perturb (--corpus-noise) and the top-10 list a query's drift is checked against
    searches_corpus: bool = False
    #: field -> its value check where this type's rows hold less than FIELD_CHECKS allows, or a field it brings
    checks: Mapping[str, FieldCheck] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unchecked = sorted(
            {f for fields in self.required_fields.values() for f in fields} - set(self.checks) - set(FIELD_CHECKS)
        )
        if unchecked:
            raise RegistryError(
                f"task type {self.name!r}: no value check for field(s) {', '.join(unchecked)}; give them in `checks`"
            )

    def check_of(self, name: str) -> FieldCheck:
        """The check a value of required field `name` must pass in a dataset of this type."""
        return self.checks.get(name) or FIELD_CHECKS[name]

    def evaluation(self, given: Mapping[str, Any], *, what: str) -> Settings:
        """The mteb evaluation settings of a task of this type that sets `given` apart from the defaults."""
        return settings_for(self.mteb_settings, given, what=f"{what}: {self.name}")

    @property
    def has_corpus(self) -> bool:
        """A query-corpus type (Retrieval, Reranking): its rows are a corpus, queries and qrels, which
        mteb loads from Hub configs of their own."""
        return "corpus" in self.tables

    @property
    def has_train_split(self) -> bool:
        """Whether a dataset of this type needs a training split (Classification)."""
        return TRAIN in self.tables

    def split_tables(self, eval_split: str, train_split: str | None) -> tuple[str, ...]:
        """The tables that are splits of one kind of row (evaluation, training): one config with a
        split per table; every other table (corpus, queries, qrels, ...) is a kind of its own. Each
        table once: a dataset that evaluates on its training split (IsiZuluNews) has one.

        >>> task_type("Classification").split_tables("train", "train")
        ('train',)
        """
        return tuple(dict.fromkeys(resolve(t, eval_split, train_split) for t in self.tables if t in (EVAL, TRAIN)))


_PAIR = ("sentence1", "sentence2")

#: Clustering rows read from mteb's legacy cluster-set layout (AbsTaskClusteringLegacy: a Hub row is a
#: set of texts) carry the index of their set in this field: each set is clustered on its own, as mteb does.
CLUSTER_SET = "cluster_set"

#: The task table: every task type, by name. A new one is a row here (`TASK_TYPES.add(name, row)` from
#: outside the package); the scorer's evaluators and both programs' converters are looked up by the name.
TASK_TYPES: Registry[TaskType] = Registry(
    "task type",
    entries={
        t.name: t
        for t in (
            TaskType(
                "STS",
                (EVAL,),
                {EVAL: (*_PAIR, "score")},
                ((EVAL, "sentence1"), (EVAL, "sentence2")),
                metric="spearman",
                mteb_main_score="cosine_spearman",
                hub_category="sentence-similarity",
                mteb_settings=STSSettings,
            ),
            TaskType(
                "STR",
                (EVAL,),
                {EVAL: (*_PAIR, "score")},
                ((EVAL, "sentence1"), (EVAL, "sentence2")),
                metric="spearman",
                mteb_main_score="cosine_spearman",
                hub_category="sentence-similarity",
                mteb_settings=STSSettings,
            ),
            TaskType(
                "PairClassification",
                (EVAL,),
                {EVAL: (*_PAIR, "label")},
                ((EVAL, "sentence1"), (EVAL, "sentence2")),
                metric="ap",
                mteb_main_score="max_ap",
                hub_category="text-classification",
                checks={"label": BINARY_LABEL},
                mteb_settings=PairClassificationSettings,
            ),
            TaskType(
                "Classification",
                (EVAL, TRAIN),
                {EVAL: ("text", "label"), TRAIN: ("text", "label")},
                ((EVAL, "text"),),
                metric="accuracy",
                mteb_main_score="accuracy",
                hub_category="text-classification",
                mteb_settings=ClassificationSettings,
            ),
            TaskType(
                "Clustering",
                (EVAL,),
                {EVAL: ("text", "label")},
                ((EVAL, "text"),),
                metric="v_measure",
                mteb_main_score="v_measure",
                hub_category="text-classification",
                mteb_settings=ClusteringSettings,
            ),
            TaskType(
                "Retrieval",
                ("corpus", "queries", "qrels"),
                {"corpus": ("id", "text"), "queries": ("id", "text"), "qrels": ("query_id", "doc_id", "score")},
                (("queries", "text"),),
                metric="ndcg_at_10",
                mteb_main_score="ndcg_at_10",
                hub_category="text-retrieval",
                checks={"score": RELEVANCE},
                mteb_settings=RetrievalSettings,
                searches_corpus=True,
            ),
            TaskType(
                "Reranking",
                ("corpus", "queries", "qrels", "top_ranked"),
                {
                    "corpus": ("id", "text"),
                    "queries": ("id", "text"),
                    "qrels": ("query_id", "doc_id", "score"),
                    "top_ranked": ("query_id", "doc_ids"),
                },
                (("queries", "text"),),
                metric="map",
                mteb_main_score="map_at_1000",
                hub_category="text-ranking",
                checks={"score": RELEVANCE},
                mteb_settings=RetrievalSettings,
            ),
            TaskType(
                "Summarization",
                (EVAL,),
                {EVAL: ("text", "human_summaries", "machine_summaries", "relevance")},
                ((EVAL, "human_summaries"), (EVAL, "machine_summaries")),
                list_fields=("human_summaries", "machine_summaries"),
                metric="spearman",
                mteb_main_score="cosine_spearman",
                hub_category="summarization",
                mteb_settings=SummarizationSettings,
            ),
        )
    },
)


@dataclass(frozen=True)
class TextRef:
    """One transformable text: where it sits in its dataset, its own language and its subset.

    `language` is this text's language, not its row's: in a pair subset `en-de` the sentence1 of a
    row is English and its sentence2 German (mteb's eval_langs order, sources.DatasetInfo.subsets).
    """

    table: str
    item_id: str
    field: str  # e.g. sentence1, text, machine_summaries[3]
    text: str
    language: str  # ISO 639-3
    subset: str  # the mteb hf_subset of the text's row ("default" when the dataset has none)


def resolve(table: str, eval_split: str, train_split: str | None) -> str:
    """Replace the split placeholders by a dataset's own split names."""
    if table == EVAL:
        return eval_split
    if table == TRAIN:
        if train_split is None:
            raise KeyError("train split")
        return train_split
    return table


def task_type(name: str) -> TaskType:
    """The row of task type `name`; an unknown name is a one-line SourceError listing the known ones."""
    if name not in TASK_TYPES:
        raise SourceError(f"unknown task type {name!r}; known: {', '.join(sorted(TASK_TYPES))}")
    return TASK_TYPES.get(name)


def field_name(field: str, index: int | None) -> str:
    return field if index is None else f"{field}[{index}]"


def iter_field_texts(row: Mapping[str, Any], field: str, list_fields: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(field name, text) for a row; list fields yield one entry per element."""
    value = row[field]
    if field in list_fields:
        for index, text in enumerate(value):
            yield field_name(field, index), text
    else:
        yield field, value
