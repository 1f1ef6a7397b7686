"""The `mteb` protocol's view of the contract's dataset table (hteb_contract/specs/datasets.yaml):
each mteb task's main score and evaluation settings by task name, per kind of settings.

`TASKS` holds every task a row names (the generator's registry, and the tasks ../shared/data and
the tests name); a task not listed gets its abstract task class's defaults, and clustering of an
unlisted task uses the legacy rule (all documents; the rows' `cluster_set`, else one cluster set
per subset) because mteb's fast default embeds only 4% of them.
"""

from __future__ import annotations

from typing import TypeVar

from hteb_contract.specs.datasets import DatasetSpec, specs_by_mteb_task
from hteb_contract.specs.mteb_settings import (
    MTEB_VERSION,
    SEED,
    ClassificationSettings,
    ClusteringSettings,
    RetrievalSettings,
    SummarizationSettings,
)
from hteb_contract.tasks import task_type

__all__ = ["CLASSIFICATION", "CLUSTERING", "MAIN_SCORES", "MTEB_VERSION", "RETRIEVAL", "SEED", "SUMMARIZATION",
           "TASKS"]

S = TypeVar("S")

#: mteb task -> the dataset row that names it (rows naming one task evaluate it alike).
TASKS: dict[str, DatasetSpec] = specs_by_mteb_task()


def _of(kind: type[S]) -> dict[str, S]:
    return {name: spec.evaluation for name, spec in TASKS.items() if isinstance(spec.evaluation, kind)}


#: mteb task -> its `main_score` where that is not its task type's (TaskMetadata.main_score).
MAIN_SCORES: dict[str, str] = {name: spec.main_score for name, spec in TASKS.items()
                               if spec.main_score != task_type(spec.task_type).mteb_main_score}
CLASSIFICATION: dict[str, ClassificationSettings] = _of(ClassificationSettings)
CLUSTERING: dict[str, ClusteringSettings] = _of(ClusteringSettings)
RETRIEVAL: dict[str, RetrievalSettings] = _of(RetrievalSettings)
SUMMARIZATION: dict[str, SummarizationSettings] = _of(SummarizationSettings)
