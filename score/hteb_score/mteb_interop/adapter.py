"""HTEB datasets as mteb task objects: the real mteb task class of a dataset, fed the rows of one
variant (original or transformed) and an encoder that returns given embeddings.

Why: it lets mteb itself score exactly what hteb-score scores, so the two can be compared on
identical inputs (the differential tests, the benchmark's "mteb once per variant" side). mteb is
an optional dependency of the scorer: import this module only where mteb is installed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mteb
import numpy as np
from mteb.abstasks import AbsTask
from mteb.models.abs_encoder import AbsEncoder
from mteb.models.model_meta import ModelMeta, ScoringFunction
from threadpoolctl import threadpool_limits

from hteb_contract.sources import SourceDataset
from hteb_score.mteb_interop.task_data import MTEB_DATA

EmbedFn = Callable[[Sequence[str], str | None], np.ndarray]


class FunctionEncoder(AbsEncoder):
    """An mteb encoder whose vectors come from `fn(texts, prompt_type)`, the function our side uses."""

    mteb_model_meta: ModelMeta  # always set (AbsEncoder allows None; mteb's EncoderProtocol does not)

    def __init__(self, fn: EmbedFn) -> None:
        self.fn = fn
        self.mteb_model_meta = ModelMeta.create_empty(
            overwrites={
                "name": "hteb/function-encoder",
                "revision": "given",
                "similarity_fn_name": ScoringFunction.COSINE,
            }
        )

    def encode(
        self, inputs: Any, *, task_metadata: Any, hf_split: str, hf_subset: str, prompt_type: Any = None, **kwargs: Any
    ) -> np.ndarray:
        texts = [text for batch in inputs for text in batch["text"]]
        return self.fn(texts, None if prompt_type is None else str(prompt_type.value))


def mteb_scores(task_name: str, dataset: SourceDataset, fn: EmbedFn, **task_attributes: Any) -> dict[str, float]:
    """mteb's main score per subset for `dataset` evaluated as task `task_name` with embeddings `fn`."""
    return {
        subset: float(scores["main_score"])
        for subset, scores in mteb_results(task_name, dataset, fn, **task_attributes).items()
    }


def mteb_results(
    task_name: str, dataset: SourceDataset, fn: EmbedFn, **task_attributes: Any
) -> dict[str, Mapping[str, Any]]:
    """Every score mteb reports per subset; `task_attributes` override the task object's settings."""
    task = load_task(task_name, dataset, **task_attributes)
    with threadpool_limits(limits=1):  # same numbers, without OpenMP/BLAS contention (see evaluators/threads.py)
        return dict(
            task.evaluate(
                FunctionEncoder(fn),
                dataset.info.eval_split,
                subsets_to_run=task.hf_subsets,
                # mteb imports NotRequired from typing under TYPE_CHECKING, which a Python 3.10
                # check cannot resolve: EncodeKwargs' optional keys read as required
                encode_kwargs={"batch_size": 32},  # type: ignore[typeddict-item]
            )
        )


def load_task(task_name: str, dataset: SourceDataset, **task_attributes: Any) -> AbsTask:
    """A fresh object of mteb's task class `task_name`, its data already loaded from `dataset`'s rows
    (no Hub access; laid out by the converter of its task type, mteb_interop/task_data.py) and
    `hf_subsets` cut to the subsets those rows hold."""
    task = mteb.get_task(task_name)
    for name, value in task_attributes.items():
        setattr(task, name, value)
    task.dataset, subsets = MTEB_DATA.get(dataset.info.task_type)(task, dataset)
    task.hf_subsets = subsets
    task.data_loaded = True
    return task
