"""Evaluation protocols: the rules that turn a dataset's embeddings into its score. A run is scored
under one protocol, named and described in its result card.

- `hteb` (default): the HTEB paper's evaluation. Estimators take the run's seed (42 unless the run
  says otherwise); classification fits one logistic regression on the full training split;
  clustering clusters every document of a subset at once (as the paper's code; mteb's legacy tasks
  cluster several sets per subset); summarisation uses the fixed evaluator; main score the
  paper's metric per task type (App. G), e.g. `spearman`, `ap` (cosine AP), `map`.
- `mteb`: equal to mteb 2.26.24's main score on identical embeddings. Estimators always take mteb's
  seed 42; few-shot classification sizes, fast or legacy clustering (legacy: each of mteb's cluster
  sets separately, evaluators/clustering.py) and the deprecated `SummEval` evaluator follow the mteb
  task class a dataset names (`mteb_task`; its row of hteb_contract/specs/datasets.yaml); main score mteb's
  `main_score`, e.g. `cosine_spearman`, `max_ap` (best AP of five), `map_at_1000`.

Both remove retrieval self-hits where the mteb task sets `ignore_identical_ids`.

>>> PROTOCOLS.get("mteb").estimator_seed(7), PROTOCOLS.get("hteb").estimator_seed(7)
(42, 7)
>>> PROTOCOLS.get("hteb").main_metric("PairClassification")
'ap'
>>> PROTOCOLS.get("mteb").main_metric("Classification", "SentimentAnalysisHindi")
'f1'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from operator import attrgetter
from typing import Generic, TypeVar

from hteb_contract import tasks
from hteb_contract.common.registry import Registry
from hteb_contract.mteb_settings import (
    ClassificationSettings,
    ClusteringSettings,
    RetrievalSettings,
    SummarizationSettings,
)
from hteb_score.evaluators import task_settings

S = TypeVar("S")


@dataclass(frozen=True)
class PerTask(Generic[S]):
    """Settings by mteb task name; `default` for a dataset naming a task not listed, or none. `per_task`: the
    tasks' own settings are the rows' (`on`); else one rule for every task."""

    default: S
    per_task: bool = False
    tasks: Mapping[str, S] = field(default_factory=dict, hash=False)

    def on(self, settings: task_settings.TaskSettings) -> PerTask[S]:
        """The same rule with its tasks' settings from `settings` (a revision's own rows), of its default's kind."""
        return replace(self, tasks=settings.of(type(self.default))) if self.per_task else self

    def __call__(self, mteb_task: str | None) -> S:
        return self.tasks.get(mteb_task or "", self.default)


@dataclass(frozen=True)
class Protocol:
    """One protocol's rules, asked by the evaluators with the dataset's task type or mteb task."""

    name: str
    description: str  # one line, for the card and --help
    metric_of: Callable[[tasks.TaskType], str]  # a task type's main metric: a field of its row in the task table
    few_shot: PerTask[ClassificationSettings | None]  # None: one classifier on the full training split
    clustering: PerTask[ClusteringSettings]
    retrieval: PerTask[RetrievalSettings]
    summarization: PerTask[SummarizationSettings]
    fixed_seed: int | None = None  # the estimators' seed whatever the run's; None: the run's seed
    mteb_version: str | None = None  # the mteb whose main scores this protocol equals
    task_main_metrics: Mapping[str, str] = field(default_factory=dict, hash=False)  # mteb task -> its own
    main_metric_per_task: bool = False  # `task_main_metrics` are the rows' main scores (mteb's own per task)

    def on(self, settings: task_settings.TaskSettings) -> Protocol:
        """This protocol on the dataset rows a revision was made by (`task_settings.of_manifest`): every
        per-task setting and main score from them, so an edited installed row never rescores an old revision."""
        return replace(
            self,
            few_shot=self.few_shot.on(settings),
            clustering=self.clustering.on(settings),
            retrieval=self.retrieval.on(settings),
            summarization=self.summarization.on(settings),
            task_main_metrics=settings.main_scores if self.main_metric_per_task else self.task_main_metrics,
        )

    def estimator_seed(self, run_seed: int) -> int:
        """The seed of logistic regression and k-means in a run whose estimator seed is `run_seed`."""
        return run_seed if self.fixed_seed is None else self.fixed_seed

    def main_metric(self, task_type: str, mteb_task: str | None = None) -> str:
        """The main metric of a dataset of `task_type` naming `mteb_task` (some mteb tasks have their own)."""
        return self.task_main_metrics.get(mteb_task or "", self.metric_of(tasks.task_type(task_type)))


_RETRIEVAL = PerTask(RetrievalSettings(), per_task=True).on(task_settings.INSTALLED)

HTEB = Protocol(
    name="hteb",
    description="the HTEB paper's evaluation: full-train classification, every document clustered, "
    "cosine AP, MAP, nDCG@10 and Spearman; estimators seeded by the run (42)",
    metric_of=attrgetter("metric"),
    few_shot=PerTask(None),
    clustering=PerTask(ClusteringSettings(kind="legacy", one_set_per_subset=True, row_order="hashed")),
    retrieval=_RETRIEVAL,
    summarization=PerTask(SummarizationSettings(deprecated=False)),
)
MTEB = Protocol(
    name="mteb",
    description=f"equal to mteb {task_settings.MTEB_VERSION}'s main scores: few-shot classification, fast or "
    "legacy clustering per mteb task, max AP of five similarities; estimators seeded 42",
    metric_of=attrgetter("mteb_main_score"),
    few_shot=PerTask(ClassificationSettings(), per_task=True),
    clustering=PerTask(ClusteringSettings(), per_task=True),
    retrieval=_RETRIEVAL,
    summarization=PerTask(SummarizationSettings(), per_task=True),
    fixed_seed=task_settings.SEED,
    mteb_version=task_settings.MTEB_VERSION,
    main_metric_per_task=True,
).on(task_settings.INSTALLED)

PROTOCOLS: Registry[Protocol] = Registry("protocol", entries={p.name: p for p in (HTEB, MTEB)})
