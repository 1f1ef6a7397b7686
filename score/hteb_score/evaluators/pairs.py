"""What STS, STR and pair classification share: rows of (sentence1, sentence2, gold), both sides
embedded without a prompt, scored per subset from the two embedding matrices."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from hteb_contract.errors import HtebError
from hteb_contract.sources import SourceDataset
from hteb_score.evaluators.base import Embed, EvaluationContext, Evaluator, TaskScore, Text, task_score
from hteb_score.evaluators.outcomes import Outcomes, join
from hteb_score.evaluators.similarity import paired_cosine
from hteb_score.evaluators.subsets import group_rows, require_rows
from hteb_score.flags import Flag

if TYPE_CHECKING:
    from hteb_score.evaluators.protocol import Protocol


class SentencePairEvaluator(Evaluator):
    """An evaluator of sentence pairs; subclasses score one subset's pairs (`score_pairs`). Per pair,
    its outcome is the cosine of its two sides against its `gold_field`, where the protocol's main
    metric is `outcome_measures`' key (the measure that recomputes it from the pairs)."""

    settings: ClassVar[Mapping[str, Any]]
    gold_field: ClassVar[str] = ""
    outcome_measures: ClassVar[Mapping[str, str]] = {}  # main metric -> its measure (evaluators/outcomes.py)

    def texts(self, dataset: SourceDataset) -> list[Text]:
        rows = dataset.eval_rows()
        return [(r["sentence1"], None) for r in rows] + [(r["sentence2"], None) for r in rows]

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        """No rows, or a subset whose gold values cannot give the metric (`check_subset`): refused."""
        rows = dataset.eval_rows()
        require_rows(dataset, dataset.info.eval_split, rows)
        for subset, index in group_rows(rows).items():
            self.check_subset(dataset, subset, [rows[i] for i in index])
        return []

    @abstractmethod
    def check_subset(self, dataset: SourceDataset, subset: str, pairs: list[dict[str, Any]]) -> None:
        """Raise HtebError (one line, naming the dataset and subset) when the gold values of a
        subset's pairs leave the metric undefined for any model."""

    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        metric = context.protocol.main_metric(dataset.info.task_type, dataset.info.mteb_task)
        rows = dataset.eval_rows()
        ids = dataset.ids[dataset.info.eval_split]
        measure = self.outcome_measures.get(metric)
        details = {}
        outcomes = []
        for subset, index in group_rows(rows).items():
            pairs = [rows[i] for i in index]
            e1 = np.asarray(embed([r["sentence1"] for r in pairs], None))
            e2 = np.asarray(embed([r["sentence2"] for r in pairs], None))
            details[subset] = self.score_pairs(dataset, subset, pairs, e1, e2)
            if measure is not None:
                outcomes.append(
                    Outcomes.of(
                        measure,
                        subset,
                        [ids[i] for i in index],
                        [r[self.gold_field] for r in pairs],
                        paired_cosine(e1, e2),
                    )
                )
        return task_score(metric, details, dict(self.settings), because=self.undefined_because, outcomes=join(outcomes))

    @abstractmethod
    def score_pairs(
        self, dataset: SourceDataset, subset: str, pairs: list[dict[str, Any]], e1: np.ndarray, e2: np.ndarray
    ) -> dict[str, float]:
        """Every metric of one subset, from its rows and the embeddings of their two sides."""


def refuse_one_gold_value(dataset: SourceDataset, subset: str, gold: list[Any], message: str) -> None:
    """A subset whose pairs all carry one gold value leaves the metric undefined whatever the model:
    refused in one line, `message` formatted with the pair count `n` and that `value`."""
    values = set(gold)
    if len(values) == 1:
        raise HtebError(
            f"{dataset.name}: subset {subset!r}: {message.format(n=len(gold), value=values.pop())} "
            "(leave the dataset out with --datasets)"
        )
