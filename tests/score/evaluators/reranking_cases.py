"""Reranking cases built from SciFact, because no real reranking set could be brought here.

These are BUILT, not an mteb dataset: every query is a real SciFact claim with at least one
relevant document; its candidates are its relevant documents (qrels) plus `negatives` documents
drawn, with a seeded `random.Random`, from the rest of SciFact's real corpus. The qrels list the
negatives with relevance 0, as mteb's reranking tasks do. Scores on them are comparable only with
scores on the same build (same negatives, same seed).
"""

from __future__ import annotations

import random

from hteb_contract.errors import SourceError
from hteb_contract.sources import DatasetInfo, SourceDataset


def scifact_reranking(dataset: SourceDataset, negatives: int = 20, seed: int = 42) -> SourceDataset:
    """A Reranking dataset (corpus, queries, qrels, top_ranked) from the SciFact retrieval dataset."""
    if dataset.info.task_type != "Retrieval":
        raise SourceError(
            f"{dataset.name}: reranking cases are built from a Retrieval dataset, got {dataset.info.task_type}"
        )
    if negatives < 1:
        raise SourceError(f"negatives must be at least 1, got {negatives}")
    positives: dict[str, list[str]] = {}
    for row in dataset.tables["qrels"]:
        if int(row["score"]) > 0:
            positives.setdefault(str(row["query_id"]), []).append(str(row["doc_id"]))
    corpus = {str(d["id"]): d for d in dataset.tables["corpus"]}
    pool = sorted(corpus)
    rng = random.Random(seed)
    queries, qrels, top_ranked, used = [], [], [], set()
    for query in dataset.tables["queries"]:
        qid = str(query["id"])
        relevant = [d for d in positives.get(qid, []) if d in corpus]
        if not relevant:
            continue
        excluded = set(relevant)
        drawn = [d for d in rng.sample(pool, k=min(len(pool), negatives + len(excluded))) if d not in excluded][
            :negatives
        ]
        queries.append(dict(query))
        qrels += [{"query_id": qid, "doc_id": d, "score": 1} for d in relevant]
        qrels += [{"query_id": qid, "doc_id": d, "score": 0} for d in drawn]
        top_ranked.append({"query_id": qid, "doc_ids": relevant + drawn})
        used.update(relevant + drawn)
    if not queries:
        raise SourceError(f"{dataset.name}: no query has a relevant document in the corpus")
    info = DatasetInfo(
        name=f"{dataset.name}Reranking", task_type="Reranking", eval_split="test", languages=dataset.info.languages
    )
    tables = {
        "corpus": [dict(corpus[d]) for d in pool if d in used],
        "queries": queries,
        "qrels": qrels,
        "top_ranked": top_ranked,
    }
    return SourceDataset(info, tables, origin=f"{dataset.origin} (reranking cases: {negatives} negatives, seed {seed})")
