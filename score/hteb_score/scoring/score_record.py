"""`ScoreRecord`: one score of a run, the unit that flows from the scoring run through
aggregation, the statistics and the result card (its `scores` list, one record each).

A record is one dataset's score under one variant (`original`, seed None; or a transformation and
seed) for one subset: `all` is the dataset's main score, the mean over its subsets; a dataset with
several subsets also has one record per subset. `value` is on the evaluator's 0-1 scale, None when
undefined.

>>> record = ScoreRecord("STSBenchmark", "STS", "all", "paraphrasing", 1337, "spearman", 0.8)
>>> record.to_json() == {"dataset": "STSBenchmark", "task_type": "STS", "subset": "all",
...                      "transformation": "paraphrasing", "seed": 1337, "metric": "spearman", "value": 0.8}
True
>>> ScoreRecord.from_json(record.to_json()) == record, round(record.in_points().value, 6)
(True, 80.0)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

POINTS = 100.0  # the card's aggregates and statistics are in points: score x 100


@dataclass(frozen=True)
class ScoreRecord:
    """One score: `dataset` (of `task_type`), `subset`, the variant (`transformation`, `seed`),
    the main `metric` and its `value` (None: undefined)."""

    dataset: str
    task_type: str
    subset: str
    transformation: str
    seed: int | None
    metric: str
    value: float | None

    @property
    def variant(self) -> tuple[str, str, int | None]:
        """(dataset, transformation, seed): what a flag names."""
        return self.dataset, self.transformation, self.seed

    def in_points(self) -> ScoreRecord:
        """The same record with its value in points (score x 100), as the statistics read it."""
        return self.with_value(None if self.value is None else self.value * POINTS)

    def with_value(self, value: float | None) -> ScoreRecord:
        return dataclasses.replace(self, value=value)

    def to_json(self) -> dict[str, Any]:
        """The card's score record (result_card schema), its fields in this order."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, row: Mapping[str, Any]) -> ScoreRecord:
        """A record of a card's `scores` list (fields beyond the record's are not read)."""
        return cls(**{f.name: row[f.name] for f in dataclasses.fields(cls)})
