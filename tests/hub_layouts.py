"""Synthetic rows for any registry dataset, laid out as its pinned Hub repo holds them (what
`datasets.load_dataset` returns per config: config -> split -> rows), for the datasets of which
../shared/data has no copy. `hub_sources.convert` reads them as it reads the Hub, so a revision
made from them has the shape the GPU profile's revision of that dataset has.

Every shape the registry has: one config per subset, or one `default` config split by its `lang`
column (fast loading); pair classification as one row of lists under the task's own column names;
legacy cluster sets (a row per set) and flat clustering rows; summaries as lists; retrieval's
corpus, queries, qrels and (reranking) top_ranked configs; an evaluation split that is the training
split, or is called `dev` or `test_expert`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hteb_contract.source_values import DEFAULT_SUBSET, SUBSET_FIELD
from hteb_contract.sources import SourceDataset
from hteb_generate.sources.hub_sources import convert, retrieval_configs
from hteb_contract.specs.datasets import DatasetSpec

Rows = list[dict[str, Any]]
Raw = dict[str, dict[str, Rows]]


def _text(entry: DatasetSpec, subset: str, what: str, i: int) -> str:
    return f"{entry.name} {subset} {what} number {i}, a short synthetic text."


def _by_subset(entry: DatasetSpec, splits: dict[str, Callable[[str], Rows]]) -> Raw:
    """Non-retrieval configs: `default` split by `lang` (fast loading), one config per subset, or `default`."""
    if entry.fast_loading:
        return {
            "default": {
                split: [{**row, SUBSET_FIELD: subset} for subset in entry.subsets for row in make(subset)]
                for split, make in splits.items()
            }
        }
    subsets = list(entry.subsets) if entry.multilingual_hub else [DEFAULT_SUBSET]
    return {subset: {split: make(subset) for split, make in splits.items()} for subset in subsets}


def _pairs(entry: DatasetSpec, n: int, scores: bool) -> Callable[[str], Rows]:
    hub = {ours: theirs for theirs, ours in entry.renames.items()}
    one, two = hub.get("sentence1", "sentence1"), hub.get("sentence2", "sentence2")

    def make(subset: str) -> Rows:
        if scores:
            return [
                {one: _text(entry, subset, "first", i), two: _text(entry, subset, "second", i), "score": float(i % 5)}
                for i in range(n)
            ]
        lists = {
            one: [_text(entry, subset, "first", i) for i in range(n)],
            two: [_text(entry, subset, "second", i) for i in range(n)],
            "labels": [i % 2 for i in range(n)],
        }
        return [lists] if entry.renames else [{k: v[i] for k, v in lists.items()} for i in range(n)]

    return make


def _classification(entry: DatasetSpec, n: int) -> Raw:
    def rows(what: str) -> Callable[[str], Rows]:
        return lambda subset: [{"text": _text(entry, subset, what, i), "label": i % 3} for i in range(n)]

    splits = {entry.eval_split: rows("evaluation")}
    if entry.train_split and entry.train_split != entry.eval_split:
        splits[entry.train_split] = rows("training")
    return _by_subset(entry, splits)


def _clustering(entry: DatasetSpec, n: int) -> Raw:
    def make(subset: str) -> Rows:
        texts = [_text(entry, subset, "document", i) for i in range(2 * n)]
        labels = [f"topic{i % 3}" for i in range(2 * n)]
        if entry.cluster_sets:  # legacy: each row is a set of texts, clustered on its own
            return [{"sentences": texts[k::2], "labels": labels[k::2]} for k in range(2)]
        return [{"sentences": t, "labels": label} for t, label in zip(texts, labels)]

    return _by_subset(entry, {entry.eval_split: make})


def _summarization(entry: DatasetSpec, n: int) -> Raw:
    def make(subset: str) -> Rows:
        return [
            {
                "id": f"s{i}",
                "text": _text(entry, subset, "article", i),
                "human_summaries": [_text(entry, subset, f"human summary {k} of", i) for k in range(2)],
                "machine_summaries": [_text(entry, subset, f"machine summary {k} of", i) for k in range(3)],
                "relevance": [1.0 + k for k in range(3)],
            }
            for i in range(n)
        ]

    return _by_subset(entry, {entry.eval_split: make})


def _retrieval(entry: DatasetSpec, n: int) -> Raw:
    prefixed = [f"{s}-" for s in entry.subsets if s != DEFAULT_SUBSET]
    available = {f"{p}{part}" for p in prefixed or [""] for part in ("corpus", "queries", "qrels", "top_ranked")}
    available |= set() if prefixed else {"default"}
    raw: Raw = {}
    for subset, parts in retrieval_configs(entry, available).items():
        docs = [
            {"_id": f"{subset}-d{i}", "title": f"title {i}", "text": _text(entry, subset, "document", i)}
            for i in range(3 * n)
        ]
        raw[parts.corpus] = {"corpus": docs}
        raw[parts.queries] = {
            "queries": [{"_id": f"{subset}-q{i}", "text": _text(entry, subset, "query", i)} for i in range(n)]
        }
        raw[parts.qrels] = {
            entry.eval_split: [
                {"query-id": f"{subset}-q{i}", "corpus-id": f"{subset}-d{i}", "score": 1} for i in range(n)
            ]
        }
        if entry.task_type == "Reranking":
            raw[f"{subset}-top_ranked" if prefixed else "top_ranked"] = {
                entry.eval_split: [
                    {"query-id": f"{subset}-q{i}", "corpus-ids": [f"{subset}-d{i}", f"{subset}-d{i + n}"]}
                    for i in range(n)
                ]
            }
    return raw


LAYOUTS: dict[str, Callable[[DatasetSpec, int], Raw]] = {
    "STS": lambda e, n: _by_subset(e, {e.eval_split: _pairs(e, n, scores=True)}),
    "STR": lambda e, n: _by_subset(e, {e.eval_split: _pairs(e, n, scores=True)}),
    "PairClassification": lambda e, n: _by_subset(e, {e.eval_split: _pairs(e, n, scores=False)}),
    "Classification": _classification,
    "Clustering": _clustering,
    "Summarization": _summarization,
    "Retrieval": _retrieval,
    "Reranking": _retrieval,
}


def hub_rows(entry: DatasetSpec, rows: int = 3) -> Raw:
    """What `load_dataset` would return for each config of the entry's Hub repo (`rows` per subset)."""
    return LAYOUTS[entry.task_type](entry, rows)


def synthetic_source(entry: DatasetSpec, rows: int = 3) -> SourceDataset:
    """The entry's dataset as the Hub route reads it, from synthetic rows."""
    return convert(entry, hub_rows(entry, rows))
