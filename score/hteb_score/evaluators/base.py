"""What every task evaluator is: the `Evaluator` interface, its result `TaskScore`, the registry.

The scorer embeds each unique (text, prompt type) once for a whole run, so an evaluator is
split in two: `texts()` lists every text it will ask for, and `evaluate()` receives an `embed`
callable that only looks embeddings up. `evaluate()` must request nothing `texts()` did not list.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from hteb_contract.errors import HtebError, unknown_name
from hteb_contract.sources import SourceDataset
from hteb_contract.tasks import TASK_TYPES

Text = tuple[str, str | None]  # (text, prompt_type): prompt_type "query", "document" or None
Embed = Callable[[Sequence[str], str | None], np.ndarray]  # (texts, prompt_type) -> float32 (n, d), rows in order

PROTOCOLS = ("hteb", "mteb")


@dataclass(frozen=True)
class TaskScore:
    """A dataset's score under one protocol: the main score per subset, their mean, every metric."""

    main_metric: str  # e.g. "cosine_spearman" (mteb) / "spearman" (hteb)
    subsets: dict[str, float]  # subset ("default" or a language code) -> main score (0-1 scale)
    value: float  # mean over subsets (mteb's unweighted mean)
    details: dict[str, dict[str, float]]  # subset -> every metric computed (for the mteb-format JSON)


class Evaluator(ABC):
    """Scores one task type; subclasses register themselves with `@register`."""

    task_types: ClassVar[tuple[str, ...]]

    @abstractmethod
    def texts(self, dataset: SourceDataset) -> list[Text]:
        """Every (text, prompt type) `evaluate` may embed for this dataset, in either protocol."""

    @abstractmethod
    def evaluate(self, dataset: SourceDataset, embed: Embed, *, protocol: str, seed: int = 42) -> TaskScore:
        """The dataset's score under `protocol` ("hteb" or "mteb").

        `seed` seeds the hteb protocol's estimators (logistic regression, k-means); the mteb
        protocol always uses mteb's seed 42, since any other would not be mteb's number.
        """


_REGISTRY: dict[str, Evaluator] = {}


def register(cls: type[Evaluator]) -> type[Evaluator]:
    """Class decorator: one evaluator instance per task type; a task type claimed twice is a bug."""
    instance = cls()
    for name in cls.task_types:
        if name not in TASK_TYPES:
            raise ValueError(f"{cls.__name__}: unknown task type {name!r}")
        if name in _REGISTRY:
            raise ValueError(f"task type {name!r} already has evaluator {type(_REGISTRY[name]).__name__}")
        _REGISTRY[name] = instance
    return cls


def get_evaluator(task_type: str) -> Evaluator:
    """The evaluator registered for `task_type`; an unknown name lists the known ones."""
    try:
        return _REGISTRY[task_type]
    except KeyError:
        raise unknown_name("task type", task_type, sorted(_REGISTRY)) from None


def check_protocol(protocol: str) -> str:
    if protocol not in PROTOCOLS:
        raise HtebError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    return protocol


def main_metric(task_type: str, protocol: str) -> str:
    """The main metric's name: mteb's `main_score` key, or the paper's metric (App. G)."""
    spec = TASK_TYPES[task_type]
    return spec.mteb_main_score if check_protocol(protocol) == "mteb" else spec.metric


def task_score(metric: str, details: dict[str, dict[str, float]]) -> TaskScore:
    """Collect per-subset details into a TaskScore: the main metric per subset and their plain mean."""
    subsets = {name: float(values[metric]) for name, values in details.items()}
    return TaskScore(metric, subsets, float(np.mean(list(subsets.values()))), details)
