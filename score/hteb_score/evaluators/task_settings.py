"""The `mteb` protocol's view of the dataset rows (hteb_contract/specs/datasets.yaml): each mteb task's
main score and evaluation settings by task name, per kind of settings.

A revision that records its rows (the manifest's `specs`) is scored by them (`of_manifest`): a later
release whose row says otherwise scores it to the same card (issue 43). `INSTALLED` is this release's
table, which a revision made before the block, or a dataset the revision has no row for, is read by.
A task no row names gets its abstract task class's defaults, and clustering of an unlisted task uses
the legacy rule (all documents; the rows' `cluster_set`, else one cluster set per subset) because
mteb's fast default embeds only 4% of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from hteb_contract.specs.datasets import DatasetSpec, parse_dataset_rows, specs_by_mteb_task
from hteb_contract.mteb_settings import MTEB_VERSION, SEED
from hteb_contract.tasks import task_type

__all__ = ["INSTALLED", "MTEB_VERSION", "SEED", "TaskSettings", "of_manifest"]

S = TypeVar("S")


@dataclass(frozen=True)
class TaskSettings:
    """mteb task -> the dataset row that names it (rows naming one task evaluate it alike), and the views
    the protocols read."""

    tasks: Mapping[str, DatasetSpec]

    def of(self, kind: type[S]) -> dict[str, S]:
        """mteb task -> its settings of `kind` (ClassificationSettings, ClusteringSettings, ...), for the tasks whose
        rows set that kind."""
        return {name: spec.evaluation for name, spec in self.tasks.items() if isinstance(spec.evaluation, kind)}

    @property
    def main_scores(self) -> dict[str, str]:
        """mteb task -> its `main_score` where that is not its task type's (TaskMetadata.main_score)."""
        return {
            name: spec.main_score
            for name, spec in self.tasks.items()
            if spec.main_score != task_type(spec.task_type).mteb_main_score
        }

    def over(self, specs: Iterable[DatasetSpec]) -> TaskSettings:
        """These settings with the tasks `specs` name taken from them instead."""
        return TaskSettings({**self.tasks, **specs_by_mteb_task(specs)})


INSTALLED = TaskSettings(specs_by_mteb_task())


def of_manifest(manifest: Mapping[str, Any]) -> TaskSettings:
    """The settings a revision is scored by: the dataset rows it records (its `specs` block) over this release's
    (a dataset the revision has no row for, a local folder, is read by this release's); this release's alone for a
    revision made before the block."""
    specs = manifest.get("specs")
    if specs is None:
        return INSTALLED
    rows = [row for row in specs["datasets"] if row.get("table", True)]
    if not rows:  # every dataset a local folder no row names (a table of none is no table: the schema wants rows)
        return INSTALLED
    return INSTALLED.over(parse_dataset_rows(rows, f"revision {manifest.get('label')!r}: its specs block"))
