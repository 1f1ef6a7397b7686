"""Ranking metrics with pytrec_eval, named and rounded as mteb 2.26 reports them.

trec_eval semantics: documents ranked by score (descending) with ties broken by document id
descending; nDCG gain = the raw qrel value; each measure is the mean over the queries that are
both in the qrels and the run, rounded to 5 decimals (mteb's `round(sum / n, 5)`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytrec_eval

from hteb_contract.errors import HtebError
from hteb_contract.sources import SourceDataset
from hteb_score.flags import Flag

_MEASURES = {"ndcg_cut": "ndcg_at", "map_cut": "map_at", "recall": "recall_at", "P": "precision_at"}


def doc_text(row: Mapping[str, Any]) -> str:
    """A corpus document as mteb 2.x embeds it: `(title + " " + text).strip()` when it has a title."""
    title = row.get("title")
    return f"{title} {row['text']}".strip() if title else str(row["text"]).strip()


def qrels_of(rows: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for row in rows:
        qrels.setdefault(str(row["query_id"]), {})[str(row["doc_id"])] = int(row["score"])
    return qrels


#: protocol -> whether judgements of documents absent from the corpus are left out: mteb counts them
#: as relevant documents that are never retrieved (the score falls, silently) and the mteb protocol
#: keeps that number; the hteb protocol scores only what the corpus can hold. Either way it is flagged.
DROP_MISSING_JUDGED = {"hteb": True, "mteb": False}


def in_corpus(qrels: Mapping[str, Mapping[str, int]], doc_ids: set[str]) -> dict[str, dict[str, int]]:
    """The judgements of documents the corpus holds; a query left with none is left out."""
    kept = {qid: {d: s for d, s in docs.items() if d in doc_ids} for qid, docs in qrels.items()}
    return {qid: docs for qid, docs in kept.items() if docs}


def judged_qrels(dataset: SourceDataset, protocol: str) -> dict[str, dict[str, int]]:
    """The dataset's qrels as `protocol` scores them (DROP_MISSING_JUDGED)."""
    qrels = qrels_of(dataset.tables["qrels"])
    if DROP_MISSING_JUDGED[protocol]:
        return in_corpus(qrels, {str(d["id"]) for d in dataset.tables["corpus"]})
    return qrels


def check_judged(dataset: SourceDataset, protocol: str, queries: Sequence[Mapping[str, Any]]) -> list[Flag]:
    """A flag saying how many judged documents the corpus lacks and what `protocol` does with them;
    under hteb, an error when none of `queries` keeps a judged document."""
    qrels = qrels_of(dataset.tables["qrels"])
    flags = absent_queries(qrels, {str(q["id"]) for q in dataset.tables["queries"]})
    kept = in_corpus(qrels, {str(d["id"]) for d in dataset.tables["corpus"]})
    judged = sum(map(len, qrels.values()))
    missing = judged - sum(map(len, kept.values()))
    if not missing:
        return flags
    absent = f"{missing} of {judged} judged documents (query, document) are absent from the corpus"
    if not DROP_MISSING_JUDGED[protocol]:
        return [*flags, Flag("missing_judged_documents", f"{absent}; scored as mteb does: relevant, never retrieved")]
    left = [q for q in queries if kept.get(str(q["id"]))]
    if not left:
        raise HtebError(
            f"{dataset.name}: all {judged} judged documents (qrels) are absent from the corpus; no query can be scored"
        )
    return [
        *flags,
        Flag(
            "missing_judged_documents",
            f"{absent}; left out of the judgements, and "
            f"{len(queries) - len(left)} query(ies) left with none are not scored",
        ),
    ]


def absent_queries(qrels: Mapping[str, Mapping[str, int]], query_ids: set[str]) -> list[Flag]:
    """A flag when qrels judge queries the queries table does not hold: no protocol can score them
    (pytrec_eval scores the queries of the run), so their judgements count for nothing, said aloud."""
    absent = [qid for qid in qrels if qid not in query_ids]
    if not absent:
        return []
    return [
        Flag(
            "missing_judged_queries",
            f"{len(absent)} of {len(qrels)} judged queries (qrels) are absent from "
            f"the queries table (first: {absent[0]!r}); their judgements are not scored",
        )
    ]


def ranking_metrics(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Mapping[str, float]],
    k_values: Sequence[int],
    *,
    full_map: bool = False,
) -> tuple[dict[str, float], dict[str, dict[str, float]]]:
    """ndcg/map/recall/precision at each k (and uncut `map` when asked), mean over queries, 5 d.p.; and
    each query's values by the same names (the items those means are taken over)."""
    ks = ",".join(str(k) for k in k_values)
    measures = {f"{m}.{ks}" for m in _MEASURES} | ({"map"} if full_map else set())
    per_query = pytrec_eval.RelevanceEvaluator(dict(qrels), measures).evaluate(dict(run))
    if not per_query:
        return {}, {}
    named = {(trec_name, k): f"{name}_{k}" for trec_name, name in _MEASURES.items() for k in k_values}
    queries = {
        query: {name: scores[f"{trec_name}_{k}"] for (trec_name, k), name in named.items()}
        for query, scores in per_query.items()
    }
    if full_map:
        for query, scores in per_query.items():
            queries[query]["map"] = scores["map"]
    names = list(named.values()) + (["map"] if full_map else [])
    out = {name: round(sum(q[name] for q in queries.values()) / len(queries), 5) for name in names}
    return out, queries
