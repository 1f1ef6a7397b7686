"""Reranking: order each query's candidate documents by cosine similarity; mean average precision.

Both protocols (mteb 2.x reranking is a retrieval task with `top_ranked`; the paper scores MAP):
the query ("query" prompt) is compared with each of its candidates from `top_ranked` (documents
embedded with the "document" prompt, (title + " " + text).strip()) by torch float32 cosine, as
mteb's `cos_sim`; the top min(1000, candidates) form the run; pytrec_eval with ties by doc id
descending, means rounded to 5 decimals (trec.py). Main score mteb `map_at_1000`, hteb `map`
(uncut MAP over the same run; equal whenever a query has at most 1000 candidates).
Queries without a qrels row or without candidates are left out. Judged documents absent from
the corpus: as in retrieval (trec.DROP_MISSING_JUDGED), flagged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.base import Embed, EvaluationContext, register
from hteb_score.evaluators.ranking import Ranker, RankingEvaluator
from hteb_score.evaluators.similarity import cos_matrix
from hteb_score.evaluators.trec import doc_text

TOP_K = 1000
K_VALUES = (1, 3, 5, 10, 20, 100, 1000)


def _candidates(dataset: SourceDataset) -> dict[str, list[str]]:
    return {str(r["query_id"]): [str(d) for d in r["doc_ids"]] for r in dataset.tables["top_ranked"]}


def scored_queries(dataset: SourceDataset) -> list[dict]:
    """Query rows with at least one qrels row and at least one candidate."""
    judged = {str(r["query_id"]) for r in dataset.tables["qrels"]}
    candidates = _candidates(dataset)
    return [q for q in dataset.tables["queries"] if str(q["id"]) in judged and candidates.get(str(q["id"]))]


@register
class RerankingEvaluator(RankingEvaluator):
    task_types = ("Reranking",)
    scored_queries = staticmethod(scored_queries)
    full_map = True

    def run_settings(self, dataset: SourceDataset, context: EvaluationContext) -> dict[str, Any]:
        return {"similarity": "cosine", "top_k": TOP_K, "k_values": list(K_VALUES)}

    def ranker(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> Ranker:
        """Each query's own candidates from `top_ranked`, by cosine; the top TOP_K."""
        corpus = dataset.tables["corpus"]
        position = {str(d["id"]): i for i, d in enumerate(corpus)}
        doc_emb = np.asarray(embed([doc_text(d) for d in corpus], "document"))
        candidates = _candidates(dataset)

        def rank(query_ids: Sequence[str], queries: np.ndarray) -> dict[str, dict[str, float]]:
            run = {}
            for qid, vector in zip(query_ids, np.asarray(queries)):
                ids = [d for d in candidates[qid] if d in position]
                scores = cos_matrix(vector[None, :], doc_emb[[position[d] for d in ids]])[0]
                top = np.argsort(-scores, kind="stable")[:TOP_K]
                run[qid] = {ids[i]: float(scores[i]) for i in top}
            return run

        return rank
