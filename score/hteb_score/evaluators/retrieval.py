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

from typing import TYPE_CHECKING

import faiss
import numpy as np

from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, register, task_score
from hteb_score.evaluators.similarity import normalize
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.evaluators.trec import check_judged, doc_text, judged_qrels, ranking_metrics
from hteb_score.flags import Flag
from hteb_contract.sources import SourceDataset

if TYPE_CHECKING:
    from hteb_score.evaluators.protocol import Protocol

TOP_K = 1000


def scored_queries(dataset: SourceDataset) -> list[dict]:
    """The query rows that have at least one qrels row."""
    judged = {str(r["query_id"]) for r in dataset.tables["qrels"]}
    return [q for q in dataset.tables["queries"] if str(q["id"]) in judged]


@register
class RetrievalEvaluator(Evaluator):
    task_types = ("Retrieval",)

    def texts(self, dataset: SourceDataset) -> list[Text]:
        return ([(q["text"], "query") for q in scored_queries(dataset)]
                + [(doc_text(d), "document") for d in dataset.tables["corpus"]])

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        """No judged query or no document: refused. Judged documents absent from the corpus:
        flagged (and under hteb left out; refused when no judged query is left)."""
        require_rows(dataset, "queries", scored_queries(dataset))
        require_rows(dataset, "corpus", dataset.tables["corpus"])
        return check_judged(dataset, protocol.name, scored_queries(dataset))

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        metric = context.protocol.main_metric(dataset.info.task_type, dataset.info.mteb_task)
        settings = context.protocol.retrieval(dataset.info.mteb_task)
        corpus = dataset.tables["corpus"]
        doc_ids = [str(d["id"]) for d in corpus]
        qrels = judged_qrels(dataset, context.protocol.name)
        queries = [q for q in scored_queries(dataset) if qrels.get(str(q["id"]))]
        doc_emb = normalize(embed([doc_text(d) for d in corpus], "document")).numpy()
        index = faiss.IndexFlatIP(doc_emb.shape[1])
        index.add(np.ascontiguousarray(doc_emb))
        details = {}
        for subset, rows in group_rows(queries).items():
            query_ids = [str(queries[i]["id"]) for i in rows]
            q_emb = normalize(embed([queries[i]["text"] for i in rows], "query")).numpy()
            scores, hits = index.search(np.ascontiguousarray(q_emb), min(TOP_K, len(doc_ids)))
            run = {}
            for qid, row_scores, row_hits in zip(query_ids, scores, hits):
                run[qid] = {doc_ids[h]: float(s) for s, h in zip(row_scores, row_hits)
                            if h >= 0 and not (settings.ignore_identical_ids and doc_ids[h] == qid)}
            details[subset] = ranking_metrics({q: qrels[q] for q in query_ids}, run, settings.k_values)
        return task_score(metric, details, {"similarity": "cosine", "search": "exact", "top_k": TOP_K,
                                            "k_values": list(settings.k_values),
                                            "ignore_identical_ids": settings.ignore_identical_ids})
