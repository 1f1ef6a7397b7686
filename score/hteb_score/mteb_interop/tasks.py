"""HTEB revisions as mteb tasks, for researchers who evaluate with `mteb.evaluate` and their own model.

    tasks = tasks_from_revision(hteb_score.DEFAULT_STORE, "sample-1339", datasets=["STSBenchmark"])
    results = evaluate_tasks(model, tasks, cache=mteb.ResultCache("results-folder"))  # {HtebVariant: TaskResult}

`tasks_from_revision` gives one object of the dataset's real mteb task class per dataset x
transformation x seed (and the original), its data loaded from the local revision (no Hub access)
under the same --on-error / --min-judge policies as hteb-score. mteb's result cache knows a task by
its name alone, so each variant is named for what it is (`hteb_score.mteb_interop.layout`:
`STSBenchmark.hteb-5cfa68b1.paraphrasing.1339`): `mteb.evaluate(model, tasks)` with any cache,
mteb's default included, gives every variant its own score and file, exactly where hteb-score
writes its own, and `hteb-score compare --mteb-results` reads either. The variant is in
`task.hteb_variant`; its metadata is mteb's task's with `adapted_from` naming that task,
`sample_creation` saying how the variant's texts were made, and no `superseded_by` (a variant of
STSBenchmark is not superseded by STSBenchmark.v2). A model's prompts keyed by mteb's task name do not
reach a renamed task under plain `mteb.evaluate`; `evaluate_tasks` gives each variant its task's
prompts, as hteb-score does. `benchmark.get_benchmark` gathers the tasks into an mteb Benchmark.
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
from hteb_contract.revision import Revision
from hteb_contract.specs.transformations import transformation_spec
from hteb_score.mteb_interop.adapter import load_task
from hteb_contract.hub_eval import selection_tag
from hteb_score.mteb_interop.layout import short_revision, variant_task_name

#: The attribute of an mteb task object that holds its `HtebVariant` (docs/mteb.md: `task.hteb_variant`).
VARIANT_ATTRIBUTE = "hteb_variant"


@dataclass(frozen=True)
class HtebVariant:
    """Which HTEB data an mteb task object holds."""

    dataset: str
    transformation: str  # "original" for the untouched data
    seed: int | None
    revision: str  # the HTEB revision's content hash
    task: str  # mteb's task name
    selection: str  # hteb_contract.hub_eval.selection_tag: "" for the default

    @property
    def task_name(self) -> str:
        """The variant's own mteb task name."""
        return variant_task_name(self.task, self.revision, self.transformation, self.seed, self.selection)


def tasks_from_revision(
    store: str, revision: str, *, datasets: Sequence[str] | None = None, **selection: Any
) -> list[AbsTask]:
    """mteb task objects for a revision's variants, in dataset order, the original first; `selection`: tasks_of's
    (transformations, seeds, on_error, min_judge, original)."""
    from hteb_contract.stores import open_store

    return tasks_of(open_store(store).fetch(revision, datasets=datasets), datasets=datasets, **selection)


def tasks_of(
    opened: Revision,
    *,
    datasets: Sequence[str] | None = None,
    transformations: Sequence[str] | None = None,
    seeds: Sequence[int] | None = None,
    on_error: str = "original",
    min_judge: float | None = None,
    original: bool = True,
) -> list[AbsTask]:
    """mteb task objects for the variants of a fetched revision, in dataset order, the original first."""
    from hteb_score.scoring.data import check_selection, revision_variants
    from hteb_score.scoring.selection import check_selection_arguments

    check_selection_arguments(datasets=datasets, on_error=on_error, min_judge=min_judge)
    names = list(datasets or opened.dataset_names())
    check_selection(opened, names, transformations, seeds)
    tasks = []
    selection = selection_tag(min_judge=min_judge, on_error=on_error)
    for name in names:
        variants, _ = revision_variants(
            opened, name, transformations=transformations, seeds=seeds, on_error=on_error, min_judge=min_judge
        )
        info = variants[0].dataset.info
        if info.mteb_task is None:
            raise HtebError(f"dataset {name!r} names no mteb task (mteb_task in its dataset.json)")
        for variant in variants if original else variants[1:]:
            data = variant.dataset
            if not all(data.tables.get(t) for t in info.text_tables()):  # mteb cannot evaluate a task without rows
                raise HtebError(
                    f"{name} {variant.transformation}_{variant.seed} keeps no item with on_error={on_error!r}, "
                    f"min_judge={min_judge}: mteb cannot evaluate an empty task; loosen the filter or leave the "
                    "variant out (transformations=, seeds=)"
                )
            hub_pin = info.hf_revision if variant.seed is None else None  # the original's Hub revision
            tasks.append(
                _variant_task(
                    info.mteb_task,
                    variant.dataset,
                    HtebVariant(
                        name, variant.transformation, variant.seed, opened.revision_id, info.mteb_task, selection
                    ),
                    hub_pin or opened.revision_id,
                )
            )
    return tasks


def _variant_task(task_name: str, dataset: Any, variant: HtebVariant, data_revision: str) -> AbsTask:
    task = load_task(task_name, dataset)
    task.filter_eval_splits([dataset.info.eval_split])
    source = task.metadata
    # the variant's own name (mteb's cache keys results by it), the data's own revision, and what the
    # data is to mteb: adapted from mteb's task (its zero-shot and training-overlap flags follow that),
    # made as `sample_creation` says, and never "superseded" by a newer version of mteb's task
    task.metadata = source.model_copy(
        update={
            "name": variant.task_name,
            "dataset": {**source.dataset, "revision": data_revision},
            "description": _description(variant, source.description),
            "adapted_from": [variant.task],
            "sample_creation": sample_creation(variant.transformation, source.sample_creation),
            "superseded_by": None,
        }
    )
    setattr(task, VARIANT_ATTRIBUTE, variant)
    return task


def sample_creation(transformation: str, source: str | None) -> str | None:
    """mteb's `sample_creation` of a variant: the source task's for the original; from the transformation's
    row otherwise: a rule's texts are `created` (no model), an LLM's are checked (the generator's error
    checks, the judge where a revision has one): machine translations where its last step answers in a
    target language, else LM-generated.

    >>> sample_creation("original", "found"), sample_creation("paraphrasing", "found")
    ('found', 'LM-generated and verified')
    >>> sample_creation("keyboard_typos", "found")
    'created'
    """
    if transformation == "original":
        return source
    row = transformation_spec(transformation)
    if row.is_rule:
        return "created"
    return "machine-translated and LM verified" if row.steps[-1].language == "target" else "LM-generated and verified"


def _description(variant: HtebVariant, source: str) -> str:
    what = (
        "the original rows"
        if variant.seed is None
        else f"{variant.transformation.replace('_', ' ')} (seed {variant.seed}{variant.selection})"
    )
    return f"HTEB revision {short_revision(variant.revision)} of {variant.dataset}, {what}. {variant.task}: {source}"


def variant_of(task: AbsTask) -> HtebVariant | None:
    """The variant `_variant_task` gave an mteb task object (None: not an HTEB task)."""
    variant = getattr(task, VARIANT_ATTRIBUTE, None)
    return variant if isinstance(variant, HtebVariant) else None


def evaluate_tasks(
    model: Any, tasks: Iterable[AbsTask], *, cache: ResultCache | None = None, **evaluate_kwargs: Any
) -> dict[HtebVariant, TaskResult]:
    """`mteb.evaluate` on HTEB tasks with each variant given the prompts the model has for its mteb
    task (as hteb-score gives them); `model` is anything mteb.evaluate takes (a SentenceTransformer,
    an mteb model, a ModelMeta)."""
    tasks = list(tasks)
    variants = [variant for variant in map(variant_of, tasks) if variant is not None]
    missing = [t.metadata.name for t in tasks if variant_of(t) is None]
    if missing:
        raise HtebError(f"not an HTEB task (from tasks_from_revision): {missing[0]}")
    runner = copy.copy(_mteb_model(model))  # the same loaded model, its prompt tables extended
    for attribute in PROMPT_TABLES:
        table = getattr(runner, attribute, None)
        if isinstance(table, dict):
            setattr(runner, attribute, {**table, **_variant_prompts(table, variants)})
    outcome = mteb.evaluate(runner, tasks, cache=cache, **evaluate_kwargs)
    if outcome.exceptions:
        raise HtebError(f"mteb could not evaluate {outcome.exceptions[0].task_name}: {outcome.exceptions[0].exception}")
    return dict(zip(variants, outcome.task_results, strict=True))


#: The attributes of mteb's encoders whose keys may be task names (mteb 2.26 `get_prompt_name`, `get_instruction`).
PROMPT_TABLES = ("model_prompts", "prompts_dict")


def _variant_prompts(table: dict[str, Any], variants: Sequence[HtebVariant]) -> dict[str, Any]:
    """The entries a prompt table has for a variant's mteb task (`STSBenchmark`, `STSBenchmark-query`),
    under the variant's name."""
    out = {}
    for variant in variants:
        for key, value in table.items():
            if key == variant.task or key.startswith(f"{variant.task}-"):
                out[variant.task_name + key[len(variant.task) :]] = value
    return out


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
        raise HtebError(
            f"{type(model).__name__} is not a model mteb.evaluate takes with its metadata "
            "(give a SentenceTransformer, an mteb model or a ModelMeta)"
        )
    return model
