"""One converter per task type from mteb's Hub layout to hteb_contract.tasks' (see hub_sources.py).

Every config, split and column is looked up through HubRows, so a missing one is reported by
name and any other error inside a converter surfaces as what it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hteb_contract.tasks import CLUSTER_SET

from hteb_generate.sources.hub_sources import CONVERTERS, HubRows, Row, Tables, retrieval_configs, tag


def _columns(hub: HubRows, config: str, rows: Iterable[Row], columns: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each row's mteb columns under our names (`columns`: mteb name -> ours)."""
    return [{ours: hub.column(config, row, theirs) for theirs, ours in columns.items()} for row in rows]


def _lists_to_rows(hub: HubRows, config: str, row: dict[str, Any]) -> list[dict[str, Any]]:
    """One row of equal-length lists -> one row per position (`Dataset.from_dict(row)`)."""
    lengths = {len(v) for v in row.values() if isinstance(v, list)}
    if len(lengths) != 1 or not all(isinstance(v, list) for v in row.values()):
        raise hub.fail(f"config {config!r}: a row of lists must hold lists of one length in {', '.join(row)}")
    return [{k: v[i] for k, v in row.items()} for i in range(lengths.pop())]


def _per_subset(hub: HubRows, split: str, columns: Mapping[str, str]) -> list[dict[str, Any]]:
    """A split of every subset (in the sources table's order), mapped to our columns and tagged with its subset."""
    return [
        row
        for subset, config, rows in hub.subset_rows(split)
        for row in tag(subset, _columns(hub, config, rows, columns))
    ]


@CONVERTERS.register("STS", "STR")
def _sts(hub: HubRows) -> Tables:
    split = hub.entry.eval_split
    return {split: _per_subset(hub, split, {"sentence1": "sentence1", "sentence2": "sentence2", "score": "score"})}


@CONVERTERS.register("PairClassification")
def _pairs(hub: HubRows) -> Tables:
    """A split stored as one row of lists (mteb's v1 pair format) is read as the rows of those lists."""
    split, columns = hub.entry.eval_split, {"sentence1": "sentence1", "sentence2": "sentence2", "labels": "label"}
    rows = []
    for subset, config, found in hub.subset_rows(split):
        mapped = _columns(hub, config, found, columns)
        rows += tag(subset, _lists_to_rows(hub, config, mapped[0]) if len(mapped) == 1 else mapped)
    return {split: rows}


@CONVERTERS.register("Classification")
def _classification(hub: HubRows) -> Tables:
    entry, columns = hub.entry, {"text": "text", "label": "label"}
    tables = {entry.eval_split: _per_subset(hub, entry.eval_split, columns)}
    if entry.train_split and entry.train_split not in tables:
        tables[entry.train_split] = _per_subset(hub, entry.train_split, columns)
    return tables


@CONVERTERS.register("Clustering")
def _clustering(hub: HubRows) -> Tables:
    """Hub rows that are cluster sets (lists) become one row per text: legacy clustering records the
    set's index in `cluster_set` (each set is clustered on its own), v2 clustering flattens them."""
    split = hub.entry.eval_split
    rows = []
    for subset, config, found in hub.subset_rows(split):
        for index, row in enumerate(_columns(hub, config, found, {"sentences": "text", "labels": "label"})):
            texts = _lists_to_rows(hub, config, row) if isinstance(row["text"], list) else [row]
            if hub.entry.cluster_sets:
                texts = [{**text, CLUSTER_SET: index} for text in texts]
            rows += tag(subset, texts)
    return {split: rows}


@CONVERTERS.register("Summarization")
def _summarization(hub: HubRows) -> Tables:
    keep = ("id", "text", "human_summaries", "machine_summaries", "relevance")
    split = hub.entry.eval_split
    return {
        split: [
            row
            for subset, _, found in hub.subset_rows(split)
            for row in tag(subset, [{k: r[k] for k in keep if k in r} for r in found])
        ]
    }


def _records(hub: HubRows, config: str, split: str) -> list[Row]:
    """A retrieval config's rows at the eval split or its only split, `_id` read as the string `id`."""
    rows = hub.rows(config, split, only_split_fallback=True)
    return [{**row, "id": str(row["_id"])} if "_id" in row else row for row in rows]


@CONVERTERS.register("Retrieval", "Reranking")
def _retrieval(hub: HubRows) -> Tables:
    """mteb's RetrievalDatasetLoader: qrels as {query: {doc: int score}}, queries without qrels dropped."""
    split = hub.entry.eval_split
    tables: Tables = {"corpus": [], "queries": [], "qrels": []}
    documents: dict[str, dict[str, Any]] = {}
    for subset, parts in retrieval_configs(hub.entry, hub.raw).items():
        qrels: dict[str, dict[str, int]] = {}
        for row in hub.rows(parts.qrels, split, only_split_fallback=True):
            query, doc, score = (hub.column(parts.qrels, row, c) for c in ("query-id", "corpus-id", "score"))
            qrels.setdefault(str(query), {})[str(doc)] = int(score)
        corpus, queries = parts.corpus, parts.queries
        for row in _records(hub, corpus, split):
            document = {"id": str(hub.column(corpus, row, "id")), "text": hub.column(corpus, row, "text")}
            if "title" in row:  # mteb keeps a corpus' title column; a document is encoded as "title text"
                document = {"id": document["id"], "title": row["title"] or "", "text": document["text"]}
            if documents.setdefault(document["id"], document) != document:
                raise hub.fail(
                    f"config {corpus!r}: document {document['id']!r} differs from another subset's document of that id"
                )
        asked = [
            {"id": str(hub.column(queries, row, "id")), "text": hub.column(queries, row, "text")}
            for row in _records(hub, queries, split)
        ]
        tables["queries"] += tag(subset, [query for query in asked if query["id"] in qrels])
        tables["qrels"] += [
            {"query_id": query, "doc_id": doc, "score": score}
            for query, docs in qrels.items()
            for doc, score in docs.items()
        ]
        top_ranked = parts.top_ranked
        if top_ranked is not None:
            tables.setdefault("top_ranked", []).extend(
                {
                    "query_id": str(hub.column(top_ranked, row, "query-id")),
                    "doc_ids": [str(d) for d in hub.column(top_ranked, row, "corpus-ids")],
                }
                for row in hub.rows(top_ranked, split, only_split_fallback=True)
            )
    tables["corpus"] = list(documents.values())
    return tables
