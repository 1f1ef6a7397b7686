"""What the error policy did to one transformed variant: the card's `error_policy` entry.

Why a type: the counts are made when a revision is read (scoring/run.py), travel in a work unit's
part (scoring/parts.py), are checked by --min-judge (scoring/selection.py) and written into the card;
one class says once what an entry holds, and its JSON is the card's, key for key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: --on-error: what an item whose transformation still has errors is scored as, from its (original,
#: transformed) texts; None drops the item.
ACTIONS: dict[str, Callable[[str, str], str | None]] = {
    "original": lambda original, transformed: original,
    "drop": lambda original, transformed: None,
    "keep": lambda original, transformed: transformed,
}


@dataclass(frozen=True)
class ErrorPolicyCount:
    """One (dataset, transformation, seed): its items, how many still have errors and what `action`
    (--on-error) did with them; with --min-judge, how many items the judge filter dropped and how
    many no judge rated (None without it: the card then leaves both out)."""

    dataset: str
    transformation: str
    seed: int
    items: int
    with_errors: int
    action: str
    judge_dropped: int | None = None
    unjudged: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "dataset": self.dataset,
            "transformation": self.transformation,
            "seed": self.seed,
            "items": self.items,
            "with_errors": self.with_errors,
            "action": self.action,
        }
        if self.judge_dropped is not None or self.unjudged is not None:
            out.update(judge_dropped=self.judge_dropped, unjudged=self.unjudged)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ErrorPolicyCount:
        return cls(
            data["dataset"],
            data["transformation"],
            data["seed"],
            data["items"],
            data["with_errors"],
            data["action"],
            data.get("judge_dropped"),
            data.get("unjudged"),
        )
