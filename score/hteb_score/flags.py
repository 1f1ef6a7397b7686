"""Flags: what a result card says about a score it could not give plainly (undefined, kept only as
mteb computes it, left out of the aggregates). Each is a machine-readable `code`, a one-line
`message`, and the dataset and variant it concerns; the card lists them and result_card.md shows them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

CODES = {
    "undefined_score": "the score is not a number for this data; written as null",
    "one_cluster_label": "a clustering subset has a single label",
    "missing_judged_documents": "qrels name documents the corpus does not hold",
    "missing_judged_queries": "qrels name queries the queries table does not hold",
    "skipped_in_aggregates": "an undefined score left out of the aggregates",
    "filtered_too_far": "--min-judge left too little of this variant to score; written as null",
    "missing_dataset": "no work unit of this dataset was merged: not scored, in no aggregate or statistic",
    "reduced_precision": "embeddings made in reduced precision (--precision fp16, bf16 or int8): scores may differ from fp32's",
    "mostly_unchanged": "fewer than half of the variant's texts differ from the original: it says little of robustness",
    "subsets_left_out": "a Noise figure rests on fewer subsets than the dataset has (the rule does not apply to, or "
    "barely changed, the others)",
    "carried_from_revision": "scored on an earlier revision whose data for this dataset the scorer reads the same "
    "(hteb-score carry)",
    "collapsed": "the model's embeddings of the dataset's texts are (near-)identical: its scores there are chance, and "
    "no delta or per-item measure of it is robustness",
}


@dataclass(frozen=True)
class Flag:
    """One stated condition of a result. Evaluators leave the variant empty; the scorer fills it."""

    code: str
    message: str
    dataset: str | None = None
    transformation: str | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown flag code {self.code!r}; known: {', '.join(CODES)}")
        if "\n" in self.message:
            raise ValueError("a flag message is one line")

    def of(self, dataset: str, transformation: str | None, seed: int | None) -> Flag:
        """This flag, naming the variant it was raised on."""
        return replace(self, dataset=dataset, transformation=transformation, seed=seed)

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "dataset": self.dataset,
            "transformation": self.transformation,
            "seed": self.seed,
        }
