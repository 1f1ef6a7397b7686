"""Reranking: each query's candidate documents (`top_ranked`) ordered by cosine similarity.

No real reranking set could be brought here; the Reranking data we score is built from SciFact's
real queries and documents by hteb_score.reranking_cases (say so wherever it is reported).

`mteb` protocol (mteb 2.26: a retrieval task with `top_ranked`): cosine = torch `cos_sim` of the
query against its candidates (float32), top min(1000, #candidates) kept; queries without a
positive qrel dropped; main score `map_at_1000` = pytrec_eval `map_cut_1000` (qrels include the
negatives with 0; ties ranked by doc id descending) averaged over queries, rounded to 5 decimals.
`hteb` protocol (the paper: MAP, mteb 1.38.33's `RerankingEvaluator`): per query, sklearn
`average_precision_score(is_relevant, cosine)` over its candidates (tied scores form one
threshold, no doc-id tie-breaking); queries without a positive or without a negative candidate are
skipped; score `map` = mean over queries.
Both: queries use the `query` prompt role, documents `document`; documents are never transformed.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import average_precision_score

from hteb_score.evaluators import Embed, Evaluator, TaskScore, check_protocol, make_score, register_evaluator
from hteb_score.evaluators.retrieval import TOP_K, document_text, qrels_of, trec_means
from hteb_score.evaluators.similarity import torch_cosine_matrix
from hteb_score.sources import SourceDataset


@register_evaluator("Reranking")
class RerankingEvaluator(Evaluator):
    def texts(self, dataset: SourceDataset, protocol: str) -> list[tuple[str, str | None]]:
        return ([(q["text"], "query") for q in dataset.tables["queries"]]
                + [(document_text(d), "document") for d in dataset.tables["corpus"]])

    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        check_protocol(protocol)
        qrels = {q: docs for q, docs in qrels_of(dataset).items() if docs}
        docs = {str(d["id"]): document_text(d) for d in dataset.tables["corpus"]}
        candidates = {str(r["query_id"]): [str(d) for d in r["doc_ids"]] for r in dataset.tables["top_ranked"]}
        queries = [q for q in dataset.tables["queries"] if str(q["id"]) in qrels and candidates.get(str(q["id"]))]
        query_vectors = embed([q["text"] for q in queries], "query")
        run: dict[str, dict[str, float]] = {}
        aps = []
        for query, vector in zip(queries, query_vectors):
            qid = str(query["id"])
            cands = candidates[qid]
            sims = torch_cosine_matrix(vector, embed([docs[d] for d in cands], "document"))[0]
            if protocol == "mteb":
                order = np.argsort(-sims, kind="stable")[: min(TOP_K, len(cands))]
                run[qid] = {cands[i]: float(sims[i]) for i in order}
            else:
                relevant = np.asarray([qrels[qid].get(d, 0) > 0 for d in cands])
                if relevant.all() or not relevant.any():
                    continue
                aps.append(float(average_precision_score(relevant, sims)))
        if protocol == "mteb":
            metrics = trec_means({q: qrels[q] for q in run}, run, {"map_at_1000": "map_cut_1000", "ndcg_at_10": "ndcg_cut_10"})
            return make_score("map_at_1000", {"default": metrics})
        return make_score("map", {"default": {"map": float(np.mean(aps)) if aps else 0.0}})
