"""What retrieval and reranking share: queries with judgements ranked against documents, scored
with pytrec_eval (trec.py). Queries are embedded with prompt type "query", documents
((title + " " + text).strip()) with "document"; a subclass says which queries are scored and how a
subset's queries are ranked (`ranker`), the rest (checks, judged qrels, subsets, metrics) is here."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, task_score
from hteb_score.evaluators.outcomes import Outcomes, join
from hteb_score.evaluators.protocol import Protocol
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.evaluators.trec import check_judged, doc_text, judged_qrels, ranking_metrics
from hteb_score.flags import Flag

#: Rank one subset's queries: (query ids, their embeddings) -> {query id: {doc id: score}}.
Ranker = Callable[[Sequence[str], np.ndarray], dict[str, dict[str, float]]]


class RankingEvaluator(Evaluator):
    """An evaluator that ranks documents for each judged query; subclasses choose the queries
    (`scored_queries`), check their documents (`check_documents`) and rank (`ranker`)."""

    full_map = False  # also the uncut `map` (reranking's main score under hteb)

    @staticmethod
    @abstractmethod
    def scored_queries(dataset: SourceDataset) -> list[dict]:
        """The query rows that are scored."""

    def texts(self, dataset: SourceDataset) -> list[Text]:
        queries: list[Text] = [(q["text"], "query") for q in self.scored_queries(dataset)]
        return queries + [(doc_text(d), "document") for d in dataset.tables["corpus"]]

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        """No scored query (or no document): refused. Judged documents absent from the corpus:
        flagged, and under hteb left out (trec.DROP_MISSING_JUDGED); refused when no judged query is left."""
        require_rows(dataset, "queries", self.scored_queries(dataset))
        self.check_documents(dataset)
        return check_judged(dataset, protocol.name, self.scored_queries(dataset))

    def check_documents(self, dataset: SourceDataset) -> None:
        """Raise HtebError when the documents leave nothing to rank for any model; by default nothing to check."""

    @abstractmethod
    def ranker(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> Ranker:
        """The ranking of this dataset's documents (embedded once here) for any subset's queries."""

    @abstractmethod
    def run_settings(self, dataset: SourceDataset, context: EvaluationContext) -> Mapping[str, Any]:
        """What the card records of this evaluation; its `k_values` are the metrics' cut-offs."""

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        metric = context.protocol.main_metric(dataset.info.task_type, dataset.info.mteb_task)
        settings = self.run_settings(dataset, context)
        qrels = judged_qrels(dataset, context.protocol.name)
        queries = [q for q in self.scored_queries(dataset) if qrels.get(str(q["id"]))]
        rank = self.ranker(dataset, embed, context)
        details = {}
        outcomes = []
        for subset, rows in group_rows(queries).items():
            query_ids = [str(queries[i]["id"]) for i in rows]
            run = rank(query_ids, embed([queries[i]["text"] for i in rows], "query"))
            details[subset], per_query = ranking_metrics(
                {q: qrels[q] for q in query_ids}, run, settings["k_values"], full_map=self.full_map
            )
            scored = [q for q in query_ids if metric in per_query.get(q, {})]
            if scored:  # the main score is the mean of each query's
                outcomes.append(Outcomes.of("mean", subset, scored, None, [per_query[q][metric] for q in scored]))
        return task_score(metric, details, dict(settings), outcomes=join(outcomes))
