"""Retrieval: exact nearest-neighbour search by cosine similarity, scored with pytrec_eval.

Both protocols (mteb's AbsTaskRetrieval; the paper's pytrec_eval `ndcg_cut.10`): queries are
embedded with prompt type "query", documents ((title + " " + text).strip()) with "document";
queries with no qrels row are left out (mteb's `_filter_queries_without_positives`); a faiss
`IndexFlatIP` over L2-normalised float32 vectors returns the top min(1000, corpus size) documents
per query; where the mteb task sets `ignore_identical_ids`, a hit whose id equals the query id
is removed afterwards (the run is not refilled). Metrics per trec.py (ties by doc id descending,
5-decimal means). Main score `ndcg_at_10` in both protocols. Only the queries are transformed,
so a transformed variant re-uses the corpus embeddings.
Qrels naming documents absent from the corpus (trec.DROP_MISSING_JUDGED): mteb counts them as
relevant documents never retrieved (nDCG falls, silently); the mteb protocol keeps that number and
flags how many are missing; the hteb protocol leaves those judgements out (and a query left
without any), and flags it; with no query left the dataset is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.base import Embed, EvaluationContext, register
from hteb_score.evaluators.ranking import Ranker, RankingEvaluator
from hteb_score.evaluators.similarity import normalize
from hteb_score.evaluators.subsets import require_rows
from hteb_score.evaluators.trec import doc_text

TOP_K = 1000


def scored_queries(dataset: SourceDataset) -> list[dict]:
    """The query rows that have at least one qrels row."""
    judged = {str(r["query_id"]) for r in dataset.tables["qrels"]}
    return [q for q in dataset.tables["queries"] if str(q["id"]) in judged]


@register
class RetrievalEvaluator(RankingEvaluator):
    task_types = ("Retrieval",)
    scored_queries = staticmethod(scored_queries)

    def check_documents(self, dataset: SourceDataset) -> None:
        require_rows(dataset, "corpus", dataset.tables["corpus"])

    def run_settings(self, dataset: SourceDataset, context: EvaluationContext) -> dict[str, Any]:
        settings = context.protocol.retrieval(dataset.info.mteb_task)
        return {
            "similarity": "cosine",
            "search": "exact",
            "top_k": TOP_K,
            "k_values": list(settings.k_values),
            "ignore_identical_ids": settings.ignore_identical_ids,
        }

    def ranker(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> Ranker:
        """Exact search over the whole corpus, without a hit whose id is the query's where the task says so.
        faiss is imported here, where a corpus is searched: a run of no retrieval dataset runs without it (the
        GPU check scores the bundled sample on a host whose image has no faiss, bench/gpu_check.py)."""
        import faiss

        ignore_identical_ids = context.protocol.retrieval(dataset.info.mteb_task).ignore_identical_ids
        corpus = dataset.tables["corpus"]
        doc_ids = [str(d["id"]) for d in corpus]
        doc_emb = normalize(embed([doc_text(d) for d in corpus], "document")).numpy()
        index = faiss.IndexFlatIP(doc_emb.shape[1])
        index.add(np.ascontiguousarray(doc_emb))

        def rank(query_ids: Sequence[str], queries: np.ndarray) -> dict[str, dict[str, float]]:
            scores, hits = index.search(np.ascontiguousarray(normalize(queries).numpy()), min(TOP_K, len(doc_ids)))
            return {
                qid: {
                    doc_ids[h]: float(s)
                    for s, h in zip(row_scores, row_hits)
                    if h >= 0 and not (ignore_identical_ids and doc_ids[h] == qid)
                }
                for qid, row_scores, row_hits in zip(query_ids, scores, hits)
            }

        return rank
