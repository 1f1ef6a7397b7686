"""HTEB datasets as mteb task objects: the real mteb task class of a dataset, fed the rows of one
variant (original or transformed) and an encoder that returns given embeddings.

Why: it lets mteb itself score exactly what hteb-score scores, so the two can be compared on
identical inputs (the differential tests, the benchmark's "mteb once per variant" side). mteb is
an optional dependency of the scorer: import this module only where mteb is installed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mteb
import numpy as np
from datasets import Dataset, DatasetDict
from mteb.abstasks import AbsTask
from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ModelMeta, ScoringFunction
from threadpoolctl import threadpool_limits

from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.protocol import MTEB

EmbedFn = Callable[[Sequence[str], str | None], np.ndarray]


class FunctionEncoder(AbsEncoder):
    """An mteb encoder whose vectors come from `fn(texts, prompt_type)`, the function our side uses."""

    mteb_model_meta: ModelMeta  # always set (AbsEncoder allows None; mteb's EncoderProtocol does not)

    def __init__(self, fn: EmbedFn) -> None:
        self.fn = fn
        self.mteb_model_meta = ModelMeta.create_empty(
            overwrites={"name": "hteb/function-encoder", "revision": "given", "similarity_fn_name": ScoringFunction.COSINE})

    def encode(self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str,
               prompt_type: Any = None, **kwargs: Any) -> np.ndarray:
        texts = [text for batch in inputs for text in batch["text"]]
        return self.fn(texts, None if prompt_type is None else str(prompt_type.value))


def group_rows(rows: Sequence[dict]) -> dict[str, list[int]]:
    """mteb hf_subset -> row indices: the `lang` field, else "default"."""
    groups: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        groups.setdefault(row.get("lang") or "default", []).append(index)
    return groups


def _split(dataset: SourceDataset, rows: list[dict], indices: list[int]) -> Dataset:
    kind = dataset.info.task_type
    picked = [rows[i] for i in indices]
    if kind in ("STS", "STR"):
        return Dataset.from_dict({"sentence1": [r["sentence1"] for r in picked],
                                  "sentence2": [r["sentence2"] for r in picked],
                                  "score": [float(r["score"]) for r in picked]})
    if kind == "PairClassification":
        return Dataset.from_dict({"sentence1": [r["sentence1"] for r in picked],
                                  "sentence2": [r["sentence2"] for r in picked],
                                  "labels": [int(r["label"]) for r in picked]})
    if kind == "Classification":
        return Dataset.from_dict({"text": [r["text"] for r in picked], "label": [r["label"] for r in picked]})
    if kind == "Summarization":
        return Dataset.from_dict({key: [r[key] for r in picked]
                                  for key in ("id", "text", "human_summaries", "machine_summaries", "relevance")})
    raise ValueError(kind)


def _clustering_split(task: Any, rows: list[dict]) -> Dataset:
    texts, labels = [r["text"] for r in rows], [r["label"] for r in rows]
    if type(task).__mro__[1].__name__ != "AbsTaskClusteringLegacy":
        return Dataset.from_dict({"sentences": texts, "labels": labels})
    # one row = one cluster set, as on the Hub: the rows' `cluster_set` (Hub row index), else the
    # task's contiguous sets cut as mteb 1.x cut MasakhaNEWS (mteb 1.12.75 dataset_transform)
    if rows and all("cluster_set" in r for r in rows):
        hub_rows = sorted({r["cluster_set"] for r in rows})
        return Dataset.from_dict({column: [[r[field] for r in rows if r["cluster_set"] == n] for n in hub_rows]
                                  for column, field in (("sentences", "text"), ("labels", "label"))})
    sets = MTEB.clustering(task.metadata.name).contiguous_sets
    if sets is None:
        raise ValueError(f"{task.metadata.name}: rows without cluster_set cannot be laid out as its Hub rows")
    return Dataset.from_dict({"sentences": [split.tolist() for split in np.array_split(texts, sets)],
                              "labels": [split.tolist() for split in np.array_split(labels, sets)]})


def _retrieval_split(dataset: SourceDataset) -> RetrievalSplitData:
    qrels: dict[str, dict[str, int]] = {}
    for row in dataset.tables["qrels"]:
        qrels.setdefault(str(row["query_id"]), {})[str(row["doc_id"])] = int(row["score"])
    corpus = dataset.tables["corpus"]
    top = dataset.tables.get("top_ranked")
    return RetrievalSplitData(
        corpus=Dataset.from_dict({"id": [str(d["id"]) for d in corpus], "title": [d.get("title") or "" for d in corpus],
                                  "text": [d["text"] for d in corpus]}),
        queries=Dataset.from_dict({"id": [str(q["id"]) for q in dataset.tables["queries"]],
                                   "text": [q["text"] for q in dataset.tables["queries"]]}),
        relevant_docs=qrels,
        top_ranked=None if top is None else {str(r["query_id"]): [str(d) for d in r["doc_ids"]] for r in top},
    )


def mteb_scores(task_name: str, dataset: SourceDataset, fn: EmbedFn, **task_attributes: Any) -> dict[str, float]:
    """mteb's main score per subset for `dataset` evaluated as task `task_name` with embeddings `fn`."""
    return {subset: float(scores["main_score"]) for subset, scores in
            mteb_results(task_name, dataset, fn, **task_attributes).items()}


def mteb_results(task_name: str, dataset: SourceDataset, fn: EmbedFn,
                 **task_attributes: Any) -> dict[str, Mapping[str, Any]]:
    """Every score mteb reports per subset; `task_attributes` override the task object's settings."""
    task = load_task(task_name, dataset, **task_attributes)
    with threadpool_limits(limits=1):  # same numbers, without OpenMP/BLAS contention (see evaluators/threads.py)
        return dict(task.evaluate(FunctionEncoder(fn), dataset.info.eval_split, subsets_to_run=task.hf_subsets,
                                  # mteb imports NotRequired from typing under TYPE_CHECKING, which a Python 3.10
                                  # check cannot resolve: EncodeKwargs' optional keys read as required
                                  encode_kwargs={"batch_size": 32}))  # type: ignore[typeddict-item]


def load_task(task_name: str, dataset: SourceDataset, **task_attributes: Any) -> AbsTask:
    """A fresh object of mteb's task class `task_name`, its data already loaded from `dataset`'s rows
    (no Hub access) and `hf_subsets` cut to the subsets those rows hold."""
    task = mteb.get_task(task_name)
    for name, value in task_attributes.items():
        setattr(task, name, value)
    split = dataset.info.eval_split
    kind = dataset.info.task_type
    if kind in ("Retrieval", "Reranking"):
        task.dataset = {"default": {split: _retrieval_split(dataset)}}
        subsets = ["default"]
    else:
        rows = dataset.eval_rows()
        groups = group_rows(rows)
        data: dict[str, DatasetDict] = {}
        for subset, indices in groups.items():
            splits = {split: (_clustering_split(task, [rows[i] for i in indices]) if kind == "Clustering"
                              else _split(dataset, rows, indices))}
            train_split = dataset.info.train_split
            if kind == "Classification" and train_split is not None and train_split != split:
                train = dataset.tables[train_split]
                train_groups = group_rows(train)
                splits[train_split] = _split(dataset, train, train_groups.get(subset, list(range(len(train)))))
            data[subset] = DatasetDict(splits)
        subsets = list(groups)
        task.dataset = data if task.metadata.is_multilingual else data["default"]
    task.hf_subsets = subsets
    task.data_loaded = True
    return task
