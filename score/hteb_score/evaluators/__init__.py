"""Evaluators: one per task type (one module each), registered by task type name.

An evaluator says which (text, prompt role) pairs a dataset needs embedded, so the scorer can
embed the union of all variants once, then computes the task's score from an `Embed` lookup under
one of two protocols:

- `mteb`: mteb 2.26.24's main score on identical embeddings (rules in ../shared/MTEB-NOTES.md),
  to 1e-6; proved by tests/score/test_differential_mteb.py against the real mteb.
- `hteb` (default): the HTEB paper's own evaluation (seeds/002 Sec. 2.1, App. G; seeds/000 App. C:
  mteb 1.38.33 defaults, full train split for classification, cosine throughout). Each module's
  docstring lists the rules it applies under each protocol.

Subsets: rows carrying a `lang` field form subsets scored separately; the task score is their
unweighted mean (mteb's `TaskResult.get_score`). Without `lang` there is one subset, `default`.
"""

from __future__ import annotations

import difflib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from hteb_score.errors import HtebError
from hteb_score.sources import SourceDataset

PROTOCOLS = ("hteb", "mteb")
Embed = Callable[[Sequence[str], "str | None"], np.ndarray]  # (texts, prompt role) -> rows in order
TextKey = tuple[str, "str | None"]


@dataclass
class TaskScore:
    """A dataset's score: main metric per subset, the other metrics per subset, and their mean."""

    main_metric: str
    subsets: dict[str, float]
    details: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def value(self) -> float:
        return float(np.mean(list(self.subsets.values())))


class Evaluator(ABC):
    """A task type's evaluation under both protocols."""

    task_type: ClassVar[str]

    @abstractmethod
    def texts(self, dataset: SourceDataset, protocol: str) -> list[TextKey]:
        """Every (text, prompt role) `evaluate` will look up; duplicates allowed."""

    @abstractmethod
    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str) -> TaskScore:
        """The dataset's score; `embed` must already hold every text of `texts`."""


_REGISTRY: dict[str, Evaluator] = {}


def register_evaluator(*task_types: str) -> Callable[[type[Evaluator]], type[Evaluator]]:
    """Class decorator: serve the named task types with one instance; a second claim is a bug."""

    def decorate(cls: type[Evaluator]) -> type[Evaluator]:
        for name in task_types:
            if name in _REGISTRY:
                raise ValueError(f"task type {name!r} already has an evaluator ({type(_REGISTRY[name]).__name__})")
            _REGISTRY[name] = cls()
        return cls

    return decorate


def get_evaluator(task_type: str) -> Evaluator:
    """The evaluator of a task type; an unknown name lists the known ones."""
    try:
        return _REGISTRY[task_type]
    except KeyError:
        close = difflib.get_close_matches(task_type, _REGISTRY, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise HtebError(f"no evaluator for task type {task_type!r}{hint}; known: {', '.join(sorted(_REGISTRY))}") from None


def check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise HtebError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")


def subset_of(row: dict[str, Any]) -> str:
    lang = row.get("lang")
    return str(lang) if lang is not None else "default"


def split_subsets(rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Rows grouped by their `lang` field (sorted subset names), or one `default` subset."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(subset_of(row), []).append(row)
    return {name: groups[name] for name in sorted(groups)}


def make_score(main_metric: str, per_subset: dict[str, dict[str, float]]) -> TaskScore:
    """A TaskScore from per-subset metric dicts that each hold `main_metric`."""
    return TaskScore(main_metric, {s: float(m[main_metric]) for s, m in per_subset.items()},
                     {s: {k: float(v) for k, v in m.items()} for s, m in per_subset.items()})


from hteb_score.evaluators import (  # noqa: E402,F401  (registration by import)
    classification,
    clustering,
    pair_classification,
    reranking,
    retrieval,
    sts,
    summarization,
)
