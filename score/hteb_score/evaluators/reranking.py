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

from typing import TYPE_CHECKING

import numpy as np

from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, register, task_score
from hteb_score.evaluators.similarity import cos_matrix
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.evaluators.trec import check_judged, doc_text, judged_qrels, ranking_metrics
from hteb_contract.sources import SourceDataset
from hteb_score.flags import Flag

if TYPE_CHECKING:
    from hteb_score.evaluators.protocol import Protocol

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
class RerankingEvaluator(Evaluator):
    task_types = ("Reranking",)

    def texts(self, dataset: SourceDataset) -> list[Text]:
        return ([(q["text"], "query") for q in scored_queries(dataset)]
                + [(doc_text(d), "document") for d in dataset.tables["corpus"]])

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        """No query with qrels and candidates: refused. Judged documents absent from the corpus:
        flagged, and under hteb left out, as in retrieval (trec.DROP_MISSING_JUDGED)."""
        require_rows(dataset, "queries", scored_queries(dataset))
        return check_judged(dataset, protocol.name, scored_queries(dataset))

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        metric = context.protocol.main_metric(dataset.info.task_type, dataset.info.mteb_task)
        qrels = judged_qrels(dataset, context.protocol.name)
        queries = [q for q in scored_queries(dataset) if qrels.get(str(q["id"]))]
        corpus = dataset.tables["corpus"]
        position = {str(d["id"]): i for i, d in enumerate(corpus)}
        doc_emb = np.asarray(embed([doc_text(d) for d in corpus], "document"))
        candidates = _candidates(dataset)
        details = {}
        for subset, rows in group_rows(queries).items():
            query_ids = [str(queries[i]["id"]) for i in rows]
            q_emb = np.asarray(embed([queries[i]["text"] for i in rows], "query"))
            run = {}
            for qid, vector in zip(query_ids, q_emb):
                ids = [d for d in candidates[qid] if d in position]
                scores = cos_matrix(vector[None, :], doc_emb[[position[d] for d in ids]])[0]
                top = np.argsort(-scores, kind="stable")[:TOP_K]
                run[qid] = {ids[i]: float(scores[i]) for i in top}
            details[subset] = ranking_metrics({q: qrels[q] for q in query_ids}, run, K_VALUES, full_map=True)
        return task_score(metric, details, {"similarity": "cosine", "top_k": TOP_K, "k_values": list(K_VALUES)})
