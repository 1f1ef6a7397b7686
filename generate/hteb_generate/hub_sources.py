"""Source datasets from the Hugging Face Hub at their pinned revisions, in hteb_score's layout.

Why a converter per task type: mteb's Hub datasets store each task type differently (pair
classification and clustering keep lists in one row, retrieval splits corpus/queries/qrels into
configs with `_id`/`query-id` columns); the revision's `source/` copy must use the one layout of
hteb_contract.tasks, so the scorer reads every dataset the same way. Language subsets (configs such
as `en`, `afr` or `en-de`) become a `lang` column (ISO 639-3; a cross-lingual pair gets its first
language).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from hteb_contract.errors import SourceError
from hteb_contract.sources import SourceDataset

from .registry import SourceEntry

Raw = Mapping[str, Mapping[str, Iterable[Mapping[str, Any]]]]  # config -> split -> rows
Tables = dict[str, list[dict[str, Any]]]

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


def _explode(rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str]) -> list[dict[str, Any]]:
    """Rows whose mapped columns hold lists become one row per list element."""
    out = []
    for row in rows:
        values = {new: row[old] for old, new in columns.items()}
        if all(isinstance(v, list) for v in values.values()):
            lengths = {len(v) for v in values.values()}
            if len(lengths) != 1:
                raise SourceError(f"list columns of unequal length: {sorted(columns)}")
            out.extend({k: v[i] for k, v in values.items()} for i in range(lengths.pop()))
        else:
            out.append(values)
    return out


def _column(row: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in row:
            return row[name]
    raise SourceError(f"none of the columns {names} in a Hub row (has {sorted(row)})")


Converter = Callable[[SourceEntry, Raw], Tables]
CONVERTERS: dict[str, Converter] = {}


def converter(*task_types: str) -> Callable[[Converter], Converter]:
    def wrap(fn: Converter) -> Converter:
        for name in task_types:
            if name in CONVERTERS:
                raise ValueError(f"converter for {name!r} already registered")
            CONVERTERS[name] = fn
        return fn

    return wrap


def _by_subset(entry: SourceEntry, raw: Raw, split: str, columns: Mapping[str, str]) -> list[dict[str, Any]]:
    rows = []
    for subset in entry.hf_subsets or ("default",):
        exploded = _explode(raw[subset][split], columns)
        if entry.hf_subsets:
            lang = subset_language(subset)
            exploded = [{**row, "lang": lang} for row in exploded]
        rows.extend(exploded)
    return rows


@converter("STS", "STR")
def _sts(entry: SourceEntry, raw: Raw) -> Tables:
    return {entry.eval_split: _by_subset(entry, raw, entry.eval_split,
                                         {"sentence1": "sentence1", "sentence2": "sentence2", "score": "score"})}


@converter("PairClassification")
def _pairs(entry: SourceEntry, raw: Raw) -> Tables:
    sample = next(iter(raw[(entry.hf_subsets or ("default",))[0]][entry.eval_split]))
    label = "labels" if "labels" in sample else "label"
    return {entry.eval_split: _by_subset(entry, raw, entry.eval_split,
                                         {"sentence1": "sentence1", "sentence2": "sentence2", label: "label"})}


@converter("Classification")
def _classification(entry: SourceEntry, raw: Raw) -> Tables:
    columns = {"text": "text", "label": "label"}
    tables = {entry.eval_split: _by_subset(entry, raw, entry.eval_split, columns)}
    if entry.train_split and entry.train_split not in tables:
        tables[entry.train_split] = _by_subset(entry, raw, entry.train_split, columns)
    return tables


@converter("Clustering")
def _clustering(entry: SourceEntry, raw: Raw) -> Tables:
    sample = next(iter(raw[(entry.hf_subsets or ("default",))[0]][entry.eval_split]))
    columns = {"sentences": "text", "labels": "label"} if "sentences" in sample else {"text": "text", "label": "label"}
    return {entry.eval_split: _by_subset(entry, raw, entry.eval_split, columns)}


@converter("Summarization")
def _summarization(entry: SourceEntry, raw: Raw) -> Tables:
    keep = ("id", "text", "human_summaries", "machine_summaries", "relevance")
    rows = [{k: row[k] for k in keep if k in row} for row in raw["default"][entry.eval_split]]
    return {entry.eval_split: rows}


@converter("Retrieval", "Reranking")
def _retrieval(entry: SourceEntry, raw: Raw) -> Tables:
    split = entry.eval_split
    corpus = [
        {"id": str(_column(r, "_id", "id")), "title": r.get("title") or "", "text": r["text"]}
        for r in raw["corpus"][split]
    ]
    queries = [{"id": str(_column(r, "_id", "id")), "text": r["text"]} for r in raw["queries"][split]]
    qrels_config = "default" if "default" in raw else "qrels"
    qrels = [
        {"query_id": str(_column(r, "query-id", "query_id")), "doc_id": str(_column(r, "corpus-id", "doc_id")),
         "score": int(r["score"])}
        for r in raw[qrels_config][split]
    ]
    tables: Tables = {"corpus": corpus, "queries": queries, "qrels": qrels}
    if entry.task_type == "Reranking":
        tables["top_ranked"] = [
            {"query_id": str(_column(r, "query-id", "query_id")), "doc_ids": [str(d) for d in _column(r, "corpus-ids", "doc_ids")]}
            for r in raw["top_ranked"][split]
        ]
    return tables


def convert(entry: SourceEntry, raw: Raw) -> SourceDataset:
    """Hub rows (config -> split -> rows) in the layout of hteb_contract.tasks."""
    try:
        tables = CONVERTERS[entry.task_type](entry, raw)
    except KeyError as missing:
        raise SourceError(f"{entry.hf_path}@{entry.hf_revision}: missing config, split or column {missing}") from None
    return SourceDataset(entry.info(), tables, origin=f"hf://{entry.hf_path}@{entry.hf_revision}")


def _configs(entry: SourceEntry) -> tuple[tuple[str, ...], ...]:
    """Per needed table, the Hub config names to try in turn (mteb names qrels `default` or `qrels`)."""
    if entry.task_type in ("Retrieval", "Reranking"):
        tables = (("corpus",), ("queries",), ("default", "qrels"))
        return tables + ((("top_ranked",),) if entry.task_type == "Reranking" else ())
    return tuple((subset,) for subset in entry.hf_subsets or ("default",))


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
