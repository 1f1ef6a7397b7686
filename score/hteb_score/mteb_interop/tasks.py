"""HTEB revisions as mteb tasks, for researchers who evaluate with `mteb.evaluate` and their own model.

    tasks = tasks_from_revision("file://.hteb/store", "sample-1339", datasets=["STSBenchmark"])
    results = evaluate_tasks(model, tasks, cache=mteb.ResultCache("results-folder"))

`tasks_from_revision` gives one object of the dataset's real mteb task class per dataset x
transformation x seed (and the original), its data loaded from the local revision (no Hub access)
under the same --on-error / --min-judge policies as hteb-score. Task names stay mteb's, so a model's
per-task prompts and instructions apply unchanged; the variant is in `task.hteb_variant`.
`mteb.evaluate(model, tasks, cache=None)` runs them as they are. With a cache, the variants of one
task share its name, so `evaluate_tasks` runs each (transformation, seed) as its own mteb
experiment: results land in mteb's layout exactly where hteb-score writes its own
(`hteb_score.mteb_interop.layout`), and `hteb-score compare --mteb-results` reads either.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import mteb
from mteb.abstasks import AbsTask
from mteb.cache import ResultCache
from mteb.results import TaskResult

from hteb_contract.errors import HtebError
from hteb_score.mteb_interop.adapter import load_task
from hteb_score.mteb_interop.layout import experiment_kwargs


@dataclass(frozen=True)
class HtebVariant:
    """Which HTEB data an mteb task object holds."""

    dataset: str
    transformation: str  # "original" for the untouched data
    seed: int | None
    revision: str  # the HTEB revision's content hash

    @property
    def experiment_kwargs(self) -> dict[str, Any] | None:
        return experiment_kwargs(self.transformation, self.seed)


def tasks_from_revision(store: str, revision: str, *, datasets: Sequence[str] | None = None,
                        transformations: Sequence[str] | None = None, seeds: Sequence[int] | None = None,
                        on_error: str = "original", min_judge: float | None = None,
                        original: bool = True) -> list[AbsTask]:
    """mteb task objects for a revision's variants, in dataset order, the original first."""
    from hteb_contract.stores import open_store
    from hteb_score.scoring.run import check_selection, revision_variants

    opened = open_store(store).fetch(revision, datasets=datasets)
    names = list(datasets or opened.dataset_names())
    check_selection(opened, names, transformations, seeds)
    tasks = []
    for name in names:
        variants, _ = revision_variants(opened, name, transformations=transformations, seeds=seeds,
                                        on_error=on_error, min_judge=min_judge)
        info = variants[0].dataset.info
        if info.mteb_task is None:
            raise HtebError(f"dataset {name!r} names no mteb task (mteb_task in its dataset.json)")
        for variant in variants if original else variants[1:]:
            hub_pin = variant.seed is None and info.hf_revision is not None
            tasks.append(_variant_task(info.mteb_task, variant.dataset, HtebVariant(
                name, variant.transformation, variant.seed, opened.revision_id), info.hf_revision if hub_pin
                else opened.revision_id))
    return tasks


def _variant_task(task_name: str, dataset: Any, variant: HtebVariant, data_revision: str) -> AbsTask:
    task = load_task(task_name, dataset)
    task.filter_eval_splits([dataset.info.eval_split])
    # the data's own revision: mteb's cache then never merges one variant's scores into another's
    task.metadata = task.metadata.model_copy(update={"dataset": {**task.metadata.dataset, "revision": data_revision}})
    task.hteb_variant = variant
    return task


def evaluate_tasks(model: Any, tasks: Iterable[AbsTask], *, cache: ResultCache | None = None,
                   **evaluate_kwargs: Any) -> dict[HtebVariant, TaskResult]:
    """`mteb.evaluate` on HTEB tasks, one mteb experiment per (transformation, seed), so that a
    cache holds every variant; `model` is anything mteb.evaluate takes (a SentenceTransformer, an
    mteb model, a ModelMeta)."""
    tasks = list(tasks)
    missing = [t.metadata.name for t in tasks if not isinstance(getattr(t, "hteb_variant", None), HtebVariant)]
    if missing:
        raise HtebError(f"not an HTEB task (from tasks_from_revision): {missing[0]}")
    wrapped = _mteb_model(model)
    base = wrapped.mteb_model_meta
    experiments: dict[tuple[str, int | None], list[AbsTask]] = {}
    for task in tasks:
        experiments.setdefault((task.hteb_variant.transformation, task.hteb_variant.seed), []).append(task)
    results: dict[HtebVariant, TaskResult] = {}
    for (transformation, seed), group in experiments.items():
        runner = copy.copy(wrapped)  # the same loaded model under this experiment's metadata
        extra = experiment_kwargs(transformation, seed)
        runner.mteb_model_meta = base.model_copy(update={"experiment_kwargs": {**(base.experiment_kwargs or {}),
                                                                               **(extra or {})} or None})
        outcome = mteb.evaluate(runner, group, cache=cache, **evaluate_kwargs)
        if outcome.exceptions:
            raise HtebError(f"mteb could not evaluate {outcome.exceptions[0].task_name}: {outcome.exceptions[0].exception}")
        results.update({task.hteb_variant: result for task, result in zip(group, outcome.task_results, strict=True)})
    return results


def _mteb_model(model: Any) -> Any:
    """An mteb encoder carrying `mteb_model_meta`: mteb's own wrapper around a SentenceTransformer, a
    ModelMeta loaded, an mteb model as it is."""
    from mteb.models import ModelMeta, SentenceTransformerEncoderWrapper
    from sentence_transformers import SentenceTransformer

    if isinstance(model, ModelMeta):
        return model.load_model()
    if isinstance(model, SentenceTransformer):
        return SentenceTransformerEncoderWrapper(model)
    if getattr(model, "mteb_model_meta", None) is None:
        raise HtebError(f"{type(model).__name__} is not a model mteb.evaluate takes with its metadata "
                        "(give a SentenceTransformer, an mteb model or a ModelMeta)")
    return model
