"""Where mteb-format result files live: mteb's results layout, one experiment per transformation and seed.

    results/<model>/<revision>/<task>.json                                  the original data
    results/<model>/<revision>/experiments/<experiment>/<task>.json         a transformed variant

Each folder holds a `model_meta.json` whose `experiment_kwargs` name the variant
(`hteb_transformation`, `hteb_seed`); mteb derives the experiment folder's name from them, so
`mteb.ResultCache(root).load_results(load_experiments="match_name")` reads what hteb-score writes and
what `mteb.evaluate` writes for HTEB tasks (`hteb_score.mteb_interop.tasks`) alike. No mteb import: the
scorer writes these files without mteb installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

NO_REVISION = "no_revision_available"  # mteb's folder name for a model whose revision is unknown
EXPERIMENTS = "experiments"
TRANSFORMATION_KEY, SEED_KEY = "hteb_transformation", "hteb_seed"
#: An extra field of the result files hteb-score writes: the HTEB dataset a task result is for (two
#: HTEB datasets can share one mteb task, e.g. SemRel2024 and SemRel2024-eng).
DATASET_KEY = "hteb_dataset"


def experiment_kwargs(transformation: str, seed: int | None) -> dict[str, Any] | None:
    """mteb `ModelMeta.experiment_kwargs` of a variant; None for the original data (no experiment)."""
    return None if seed is None else {TRANSFORMATION_KEY: transformation, SEED_KEY: seed}


def variant_of(kwargs: Mapping[str, Any] | None) -> tuple[str, int | None] | None:
    """(transformation, seed) named by `experiment_kwargs`; ("original", None) for none; None when
    the experiment is not an HTEB variant (another study's experiment in the same results folder)."""
    if not kwargs:
        return "original", None
    if set(kwargs) != {TRANSFORMATION_KEY, SEED_KEY} or not isinstance(kwargs[SEED_KEY], int):
        return None
    return str(kwargs[TRANSFORMATION_KEY]), kwargs[SEED_KEY]


def experiment_name(kwargs: Mapping[str, Any]) -> str:
    """The folder name mteb gives these kwargs (mteb 2.26 `_serialize_experiment_kwargs_to_name`:
    `key_value` pairs sorted by key, joined by `__`), e.g. `hteb_seed_1339__hteb_transformation_paraphrasing`."""
    return "__".join(f"{key}_{value}" for key, value in sorted(kwargs.items()))


def model_folder_name(model_id: str) -> str:
    """mteb's `ModelMeta.model_name_as_path`."""
    return model_id.strip("/").replace("/", "__").replace(" ", "_")


def result_folder(root: Path, model_id: str, revision: str | None, transformation: str, seed: int | None) -> Path:
    """The folder of one variant's task files under a results root (the folder holding `results/`)."""
    folder = Path(root) / "results" / model_folder_name(model_id) / (revision or NO_REVISION).replace(":", "_")
    kwargs = experiment_kwargs(transformation, seed)
    return folder if kwargs is None else folder / EXPERIMENTS / experiment_name(kwargs)


def model_meta(model_id: str, revision: str | None, transformation: str, seed: int | None,
               **fields: Any) -> dict[str, Any]:
    """The `model_meta.json` of a variant's folder: what mteb's loader needs to place its results."""
    return {"name": model_id, "revision": revision or NO_REVISION, **fields,
            "experiment_kwargs": experiment_kwargs(transformation, seed)}
