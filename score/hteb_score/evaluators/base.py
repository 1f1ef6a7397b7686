"""What every task evaluator is: the `Evaluator` interface, what one run gives it (an `Embed`
callable and an `EvaluationContext`), its result `TaskScore`, and the registry `EVALUATORS`
(task type -> evaluator; every module of the package is imported on the first lookup, so a new
evaluator module is found where it is dropped).

The scorer embeds each unique (text, prompt) once for a whole run (the prompt a text gets for its
task and prompt type), so an evaluator is split in two: `texts()` lists every (text, prompt type)
it will ask for, and `evaluate()` receives an `embed` callable that only looks embeddings up. `evaluate()` must request
nothing `texts()` did not list for the dataset or for its original (`EvaluationContext.original`: a run embeds
every variant of a dataset together, the original among them).
"""

from __future__ import annotations

import hashlib
import math
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from hteb_contract.common.registry import Registry, RegistryError
from hteb_contract.tasks import TASK_TYPES
from hteb_score.encoding.embed import Embed, Text
from hteb_score.evaluators.outcomes import Outcomes
from hteb_score.evaluators.protocol import Protocol
from hteb_score.flags import Flag
from hteb_score.strict_json import finite_or_none

if TYPE_CHECKING:
    from hteb_contract.sources import SourceDataset

M = TypeVar("M")


@dataclass(frozen=True)
class TaskScore:
    """A dataset's score under one protocol: the main score per subset, their mean, every metric,
    the settings that produced them, and flags on what is undefined or kept only as mteb has it.
    An undefined score is None (never NaN): a subset's, and then the dataset's mean too."""

    main_metric: str  # e.g. "cosine_spearman" (mteb) / "spearman" (hteb)
    subsets: dict[str, float | None]  # subset ("default" or a language code) -> main score (0-1 scale)
    value: float | None  # mean over subsets (mteb's unweighted mean); None when a subset is undefined
    details: dict[str, dict[str, float]]  # subset -> every metric computed (for the mteb-format JSON)
    settings: dict[str, Any]  # what the evaluator used (estimator, seed, cut-offs...), for the result card
    flags: tuple[Flag, ...] = ()
    #: per item, what the main score is computed from (evaluators/outcomes.py); None where the protocol's
    #: main score is no function of single items (mteb's means over experiments, its best of five APs)
    outcomes: Outcomes | None = None


class ClassifierCache:
    """The classifiers one run fitted, by their inputs: the training embeddings' bytes, labels and seed.

    Why: only the evaluation split is ever transformed, so the original and every transformation
    and seed of a dataset train on identical inputs; a run fits each classifier once instead of
    once per variant. The key is the inputs' bytes, so another model's embeddings never match.
    Beyond `max_size` the least recently used is dropped (MasakhaNEWS under mteb fits 16 languages
    x 10 experiments).
    """

    def __init__(self, max_size: int = 512) -> None:
        self.max_size = max_size
        self._fitted: OrderedDict[str, Any] = OrderedDict()

    def fitted(self, x: np.ndarray, y: np.ndarray, seed: int, fit: Callable[[np.ndarray, np.ndarray, int], M]) -> M:
        """`fit(x, y, seed)`, called only for inputs this cache has not seen (one kind of classifier per run)."""
        x = np.ascontiguousarray(x)
        digest = hashlib.sha256(x.tobytes())
        digest.update(repr((x.shape, str(x.dtype), y.tolist(), seed)).encode())
        key = digest.hexdigest()
        if key in self._fitted:
            self._fitted.move_to_end(key)
            return self._fitted[key]
        model = fit(x, y, seed)
        self._fitted[key] = model
        if len(self._fitted) > self.max_size:
            self._fitted.popitem(last=False)
        return model

    def items(self) -> list[tuple[str, Any]]:
        """(input key, classifier) pairs, least recently used first."""
        return list(self._fitted.items())

    def __len__(self) -> int:
        return len(self._fitted)


@dataclass(frozen=True)
class EvaluationContext:
    """What every evaluation of one run shares: the protocol, the run's estimator seed, the fitted
    classifiers; and, per dataset, its `original` data, so an evaluator that holds rows out can train
    on the original rows whatever variant it scores (None: the dataset scored is the original)."""

    protocol: Protocol
    seed: int = 42  # the run's estimator seed; `protocol` decides whether the estimators take it
    classifiers: ClassifierCache = field(default_factory=ClassifierCache)
    original: SourceDataset | None = None

    @property
    def estimator_seed(self) -> int:
        """The seed of logistic regression and k-means in this run under its protocol."""
        return self.protocol.estimator_seed(self.seed)


class Evaluator(ABC):
    """Scores one or more task types; subclasses register themselves with `@register`."""

    task_types: ClassVar[tuple[str, ...]]
    #: why this evaluator's main score can come out undefined on data its `check` accepted
    undefined_because: ClassVar[str] = "not a finite number"

    def check(self, dataset: SourceDataset, protocol: Protocol) -> list[Flag]:
        """Before any model loads: raise HtebError (one line) for data this evaluator cannot score,
        and return flags for data it scores only with a stated caveat."""
        return []

    @abstractmethod
    def texts(self, dataset: SourceDataset) -> list[Text]:
        """Every (text, prompt type) `evaluate` may embed for this dataset, under either protocol."""

    @abstractmethod
    def evaluate(self, dataset: SourceDataset, embed: Embed, context: EvaluationContext) -> TaskScore:
        """The dataset's score under `context.protocol`, with the settings used."""


#: Every module of this package is imported on the first lookup: an evaluator module registers itself (`@register`).
EVALUATORS: Registry[Evaluator] = Registry("task type", packages=("hteb_score.evaluators",))

E = TypeVar("E", bound=type[Evaluator])


def register(cls: E) -> E:
    """Class decorator: one instance of `cls` evaluates each of its `task_types` (known task types only)."""
    instance = cls()
    for name in cls.task_types:
        if name not in TASK_TYPES:
            raise RegistryError(f"{cls.__name__}: unknown task type {name!r}")
        EVALUATORS.add(name, instance)
    return cls


def task_score(
    metric: str,
    details: dict[str, dict[str, float]],
    settings: dict[str, Any],
    *,
    because: str = Evaluator.undefined_because,
    outcomes: Outcomes | None = None,
) -> TaskScore:
    """Collect per-subset details into a TaskScore: the main metric per subset and their plain mean.
    A subset whose main metric is not finite is None, flagged `undefined_score` with `because`; the
    mean is then None too (mteb's mean would be NaN). `outcomes`: the items the main metric comes from."""
    subsets = {name: finite_or_none(values.get(metric, math.nan)) for name, values in details.items()}
    flags = tuple(
        Flag("undefined_score", f"subset {name!r}: {metric} is undefined ({because}); written as null")
        for name, value in subsets.items()
        if value is None
    )
    defined = [v for v in subsets.values() if v is not None]
    value = float(np.mean(defined)) if defined and not flags else None
    return TaskScore(metric, subsets, value, details, settings, flags, outcomes)
