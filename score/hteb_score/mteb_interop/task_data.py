"""HTEB rows as the data of an mteb task object, one converter per task type: `MTEB_DATA.get("STS")`.

A converter takes the mteb task object (some layouts depend on its class) and a dataset, and
returns what the task's `dataset` attribute becomes and the `hf_subsets` it holds. Most task types
lay out each subset's rows as a `datasets.Dataset` per split (`per_subset` registers one of those
from the function that builds that Dataset); retrieval and reranking hand mteb a corpus, queries and
qrels. The mirror image of the generator's Hub converters (hteb_generate/sources/hub_converters.py).
mteb is an optional dependency of the scorer: import this module only where mteb is installed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from datasets import Dataset, DatasetDict
from hteb_contract.common.registry import Registry
from hteb_contract.sources import SourceDataset
from hteb_contract.tasks import CLUSTER_SET, task_type
from mteb.abstasks import AbsTask
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData

from hteb_score.evaluators.protocol import MTEB

#: (task object, dataset) -> (the task's `dataset`, its `hf_subsets`)
Converter = Callable[[AbsTask, SourceDataset], tuple[Any, list[str]]]
#: (task object, the rows of one subset and split) -> that split as mteb's task class reads it
SplitConverter = Callable[[AbsTask, list[dict[str, Any]]], Dataset]

MTEB_DATA: Registry[Converter] = Registry("mteb converter for task type")


def group_rows(rows: Sequence[dict]) -> dict[str, list[int]]:
    """mteb hf_subset -> row indices: the `lang` field, else "default"."""
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(row.get("lang") or "default", []).append(index)
    return groups


def per_subset(*task_types: str) -> Callable[[SplitConverter], SplitConverter]:
    """Register `split` for `task_types`: each subset of the evaluation rows (and of the training
    rows, for a type with a training split) becomes `split(task, rows)`; a monolingual task gets
    its `default` subset's splits alone, as mteb loads it."""

    def register(split: SplitConverter) -> SplitConverter:
        def convert(task: AbsTask, dataset: SourceDataset) -> tuple[Any, list[str]]:
            info = dataset.info
            rows = dataset.eval_rows()
            groups = group_rows(rows)
            data: dict[str, DatasetDict] = {}
            for subset, indices in groups.items():
                splits = {info.eval_split: split(task, [rows[i] for i in indices])}
                if task_type(info.task_type).has_train_split and info.train_split not in (None, info.eval_split):
                    train = dataset.tables[info.train_split]
                    chosen = group_rows(train).get(subset, list(range(len(train))))
                    splits[info.train_split] = split(task, [train[i] for i in chosen])
                data[subset] = DatasetDict(splits)
            return (data if task.metadata.is_multilingual else data["default"]), list(groups)

        for name in task_types:
            MTEB_DATA.add(name, convert)
        return split

    return register


@per_subset("STS", "STR")
def _sts(task: AbsTask, rows: list[dict[str, Any]]) -> Dataset:
    return Dataset.from_dict(
        {
            "sentence1": [r["sentence1"] for r in rows],
            "sentence2": [r["sentence2"] for r in rows],
            "score": [float(r["score"]) for r in rows],
        }
    )


@per_subset("PairClassification")
def _pairs(task: AbsTask, rows: list[dict[str, Any]]) -> Dataset:
    return Dataset.from_dict(
        {
            "sentence1": [r["sentence1"] for r in rows],
            "sentence2": [r["sentence2"] for r in rows],
            "labels": [int(r["label"]) for r in rows],
        }
    )


@per_subset("Classification")
def _classification(task: AbsTask, rows: list[dict[str, Any]]) -> Dataset:
    return Dataset.from_dict({"text": [r["text"] for r in rows], "label": [r["label"] for r in rows]})


@per_subset("Summarization")
def _summarization(task: AbsTask, rows: list[dict[str, Any]]) -> Dataset:
    return Dataset.from_dict(
        {key: [r[key] for r in rows] for key in ("id", "text", "human_summaries", "machine_summaries", "relevance")}
    )


@per_subset("Clustering")
def _clustering(task: AbsTask, rows: list[dict[str, Any]]) -> Dataset:
    texts, labels = [r["text"] for r in rows], [r["label"] for r in rows]
    if type(task).__mro__[1].__name__ != "AbsTaskClusteringLegacy":
        return Dataset.from_dict({"sentences": texts, "labels": labels})
    # one row = one cluster set, as on the Hub: the rows' `cluster_set` (Hub row index), else the
    # task's contiguous sets cut as mteb 1.x cut MasakhaNEWS (mteb 1.12.75 dataset_transform)
    if rows and all(CLUSTER_SET in r for r in rows):
        hub_rows = sorted({r[CLUSTER_SET] for r in rows})
        return Dataset.from_dict(
            {
                column: [[r[field] for r in rows if r[CLUSTER_SET] == n] for n in hub_rows]
                for column, field in (("sentences", "text"), ("labels", "label"))
            }
        )
    sets = MTEB.clustering(task.metadata.name).contiguous_sets
    if sets is None:
        raise ValueError(f"{task.metadata.name}: rows without cluster_set cannot be laid out as its Hub rows")
    return Dataset.from_dict(
        {
            "sentences": [split.tolist() for split in np.array_split(texts, sets)],
            "labels": [split.tolist() for split in np.array_split(labels, sets)],
        }
    )


@MTEB_DATA.register("Retrieval", "Reranking")
def _retrieval(task: AbsTask, dataset: SourceDataset) -> tuple[Any, list[str]]:
    """mteb 2's retrieval data: one `default` subset holding the corpus, queries, qrels and (reranking) candidates."""
    qrels: dict[str, dict[str, int]] = {}
    for row in dataset.tables["qrels"]:
        qrels.setdefault(str(row["query_id"]), {})[str(row["doc_id"])] = int(row["score"])
    corpus = dataset.tables["corpus"]
    top = dataset.tables.get("top_ranked")
    split = RetrievalSplitData(
        corpus=Dataset.from_dict(
            {
                "id": [str(d["id"]) for d in corpus],
                "title": [d.get("title") or "" for d in corpus],
                "text": [d["text"] for d in corpus],
            }
        ),
        queries=Dataset.from_dict(
            {
                "id": [str(q["id"]) for q in dataset.tables["queries"]],
                "text": [q["text"] for q in dataset.tables["queries"]],
            }
        ),
        relevant_docs=qrels,
        top_ranked=None if top is None else {str(r["query_id"]): [str(d) for d in r["doc_ids"]] for r in top},
    )
    return {"default": {dataset.info.eval_split: split}}, ["default"]
