"""Retrieval: queries against the whole corpus, exact inner-product search with faiss on
L2-normalised float32 embeddings (= cosine), top 1000 per query, trec metrics with pytrec_eval.

Both protocols (mteb 2.26 `AbsTaskRetrieval`, which the paper's pytrec_eval `ndcg_cut.10` also
is): document text = `(title + " " + text).strip()` (the text alone when there is no title);
queries embedded with the `query` prompt role, documents with `document`; queries whose qrels are
empty or absent are dropped; for the tasks in IGNORE_IDENTICAL_IDS a hit whose doc id equals the
query id is removed after retrieval (not refilled); main score `ndcg_at_10` = pytrec_eval
`ndcg_cut_10` (linear gain, ties ranked by doc id descending) averaged over the evaluated queries
and rounded to 5 decimals, as mteb does. The corpus is never transformed, so every variant of a
dataset reuses the same document embeddings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from hteb_score.evaluators import Embed, Evaluator, TaskScore, check_protocol, make_score, register_evaluator
from hteb_score.evaluators.similarity import normalized
from hteb_score.sources import SourceDataset

TOP_K = 1000
IGNORE_IDENTICAL_IDS = frozenset({"ArguAna", "FiQA2018", "QuoraRetrieval", "MSMARCO", "FEVER", "FEVERHardNegatives",
                                  "QuoraRetrievalHardNegatives"})  # subset of mteb 2.26.24's flagged tasks


def document_text(row: Mapping[str, Any]) -> str:
    title = row.get("title") or ""
    return f"{title} {row['text']}".strip() if title else str(row["text"]).strip()


def qrels_of(dataset: SourceDataset) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for row in dataset.tables["qrels"]:
        qrels.setdefault(str(row["query_id"]), {})[str(row["doc_id"])] = int(row["score"])
    return qrels


def trec_means(qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]], measures: dict[str, str]) -> dict[str, float]:
    """pytrec_eval measures averaged over the queries it returns, rounded to 5 decimals (mteb)."""
    import pytrec_eval

    names = {m.rsplit("_", 1)[0] + "." + m.rsplit("_", 1)[1] if "_" in m else m for m in measures.values()}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    out = {}
    for key, measure in measures.items():
        values = [scores[measure] for scores in per_query.values()]
        out[key] = round(sum(values) / len(values), 5) if values else 0.0
    return out


def search(query_vectors: np.ndarray, doc_vectors: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact cosine top-k with faiss (inner product on unit vectors)."""
    import faiss

    docs = normalized(doc_vectors)
    index = faiss.IndexFlatIP(docs.shape[1])
    index.add(docs)
    return index.search(normalized(query_vectors), min(k, docs.shape[0]))


@register_evaluator("Retrieval")
class RetrievalEvaluator(Evaluator):
    def texts(self, dataset: SourceDataset, protocol: str) -> list[tuple[str, str | None]]:
        return ([(q["text"], "query") for q in dataset.tables["queries"]]
                + [(document_text(d), "document") for d in dataset.tables["corpus"]])

    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        check_protocol(protocol)
        qrels = {q: docs for q, docs in qrels_of(dataset).items() if docs}
        queries = [q for q in dataset.tables["queries"] if str(q["id"]) in qrels]
        corpus = dataset.tables["corpus"]
        doc_ids = [str(d["id"]) for d in corpus]
        scores, hits = search(embed([q["text"] for q in queries], "query"),
                              embed([document_text(d) for d in corpus], "document"), TOP_K)
        ignore_self = (dataset.info.mteb_task or dataset.name) in IGNORE_IDENTICAL_IDS
        run: dict[str, dict[str, float]] = {}
        for query, row_scores, row_hits in zip(queries, scores, hits):
            qid = str(query["id"])
            run[qid] = {doc_ids[h]: float(s) for s, h in zip(row_scores, row_hits)
                        if h >= 0 and not (ignore_self and doc_ids[h] == qid)}
        metrics = trec_means({q: qrels[q] for q in run}, run,
                             {"ndcg_at_10": "ndcg_cut_10", "map_at_1000": "map_cut_1000", "recall_at_100": "recall_100"})
        return make_score("ndcg_at_10", {"default": metrics})
