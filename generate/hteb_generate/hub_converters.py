"""One converter per task type from mteb's Hub layout to hteb_contract.tasks' (see hub_sources.py).

Every config, split and column is looked up through HubRows, so a missing one is reported by
name and any other error inside a converter surfaces as what it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from hteb_contract.errors import SourceError

from .hub_sources import CONVERTERS, HubRows, Row, Tables, subset_configs

ISO1_TO_3 = {
    "ar": "ara", "as": "asm", "bn": "ben", "da": "dan", "de": "deu", "en": "eng", "es": "spa", "fr": "fra",
    "gu": "guj", "hi": "hin", "id": "ind", "it": "ita", "ja": "jpn", "kn": "kan", "ko": "kor", "ml": "mal",
    "mr": "mar", "nl": "nld", "or": "ory", "pa": "pan", "pl": "pol", "ta": "tam", "te": "tel", "tr": "tur",
    "ur": "urd", "zu": "zul",
}


def subset_language(subset: str) -> str:
    """`en` -> eng, `afr` -> afr, `en-de` -> eng (the first side of a cross-lingual pair)."""
    code = subset.split("-")[0].split("_")[0].lower()
    if len(code) == 3:
        return code
    try:
        return ISO1_TO_3[code]
    except KeyError:
        raise SourceError(f"no ISO 639-3 code for Hub subset {subset!r}") from None


def _explode(hub: HubRows, config: str, rows: Iterable[Row], columns: Mapping[str, str]) -> list[dict[str, Any]]:
    """Rows whose mapped columns hold lists become one row per list element."""
    out = []
    for row in rows:
        values = {new: hub.column(config, row, old) for old, new in columns.items()}
        if all(isinstance(v, list) for v in values.values()):
            lengths = {len(v) for v in values.values()}
            if len(lengths) != 1:
                raise SourceError(f"list columns of unequal length: {sorted(columns)}")
            out.extend({k: v[i] for k, v in values.items()} for i in range(lengths.pop()))
        else:
            out.append(values)
    return out


def _by_subset(hub: HubRows, split: str, columns: Mapping[str, str]) -> list[dict[str, Any]]:
    rows = []
    for subset in subset_configs(hub.entry):
        exploded = _explode(hub, subset, hub.rows(subset, split), columns)
        if hub.entry.hf_subsets:
            lang = subset_language(subset)
            exploded = [{**row, "lang": lang} for row in exploded]
        rows.extend(exploded)
    return rows


def _first_row(hub: HubRows) -> Row:
    """The first evaluation row of the first subset: which column spelling this dataset uses."""
    return hub.first_row(subset_configs(hub.entry)[0], hub.entry.eval_split)


@CONVERTERS.register("STS", "STR")
def _sts(hub: HubRows) -> Tables:
    split = hub.entry.eval_split
    return {split: _by_subset(hub, split, {"sentence1": "sentence1", "sentence2": "sentence2", "score": "score"})}


@CONVERTERS.register("PairClassification")
def _pairs(hub: HubRows) -> Tables:
    split = hub.entry.eval_split
    label = "labels" if "labels" in _first_row(hub) else "label"
    return {split: _by_subset(hub, split, {"sentence1": "sentence1", "sentence2": "sentence2", label: "label"})}


@CONVERTERS.register("Classification")
def _classification(hub: HubRows) -> Tables:
    entry, columns = hub.entry, {"text": "text", "label": "label"}
    tables = {entry.eval_split: _by_subset(hub, entry.eval_split, columns)}
    if entry.train_split and entry.train_split not in tables:
        tables[entry.train_split] = _by_subset(hub, entry.train_split, columns)
    return tables


@CONVERTERS.register("Clustering")
def _clustering(hub: HubRows) -> Tables:
    lists = "sentences" in _first_row(hub)
    columns = {"sentences": "text", "labels": "label"} if lists else {"text": "text", "label": "label"}
    return {hub.entry.eval_split: _by_subset(hub, hub.entry.eval_split, columns)}


@CONVERTERS.register("Summarization")
def _summarization(hub: HubRows) -> Tables:
    keep = ("id", "text", "human_summaries", "machine_summaries", "relevance")
    split = hub.entry.eval_split
    return {split: [{k: row[k] for k in keep if k in row} for row in hub.rows("default", split)]}


@CONVERTERS.register("Retrieval", "Reranking")
def _retrieval(hub: HubRows) -> Tables:
    split = hub.entry.eval_split

    def ids(config: str, row: Row, *names: str) -> str:
        return str(hub.column(config, row, *names))

    corpus = [
        {"id": ids("corpus", r, "_id", "id"), "title": r.get("title") or "", "text": hub.column("corpus", r, "text")}
        for r in hub.rows("corpus", split)
    ]
    queries = [
        {"id": ids("queries", r, "_id", "id"), "text": hub.column("queries", r, "text")}
        for r in hub.rows("queries", split)
    ]
    qrels_config = "default" if "default" in hub.raw else "qrels"
    qrels = [
        {"query_id": ids(qrels_config, r, "query-id", "query_id"), "doc_id": ids(qrels_config, r, "corpus-id", "doc_id"),
         "score": int(hub.column(qrels_config, r, "score"))}
        for r in hub.rows(qrels_config, split)
    ]
    tables: Tables = {"corpus": corpus, "queries": queries, "qrels": qrels}
    if hub.entry.task_type == "Reranking":
        tables["top_ranked"] = [
            {"query_id": ids("top_ranked", r, "query-id", "query_id"),
             "doc_ids": [str(d) for d in hub.column("top_ranked", r, "corpus-ids", "doc_ids")]}
            for r in hub.rows("top_ranked", split)
        ]
    return tables
