"""Where mteb-format result files live, and the task name that makes each HTEB variant its own.

mteb's result cache keys a result by model, model revision, experiment and task *name* only: a
cached file whose splits and subsets cover the task is served as it is, whatever its dataset
revision (mteb 2.26 `evaluate._check_cache`). So every HTEB task carries its identity in its name:

    STSBenchmark.hteb-5cfa68b1.original
    STSBenchmark.hteb-5cfa68b1.paraphrasing.1339
    STSBenchmark.hteb-5cfa68b1.paraphrasing.1339.judge3.onerror_drop

(mteb's task, the HTEB revision's first 8 characters, the transformation, the seed, and the
selection where it is not the default), and its files sit where mteb puts any task's:

    results/<model>/<revision>/<task name>.json

`mteb.evaluate(model, tasks)` with any cache, mteb's default included, then keeps every variant
apart, and `mteb.ResultCache(root).load_results()` reads them back as separate tasks
(`to_dataframe()` gives each its own column; it never averages them into one). No mteb import:
the scorer writes these files without mteb installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hteb_contract.common.escape import safe_filename

NO_REVISION = "no_revision_available"  # mteb's folder name for a model whose revision is unknown
#: An extra field of the result files hteb-score writes: the HTEB dataset a task result is for (two
#: HTEB datasets can share one mteb task, e.g. SemRel2024 and SemRel2024-eng).
DATASET_KEY = "hteb_dataset"
_NAME = re.compile(
    r"^(?P<task>.+)\.hteb-(?P<revision>[0-9A-Za-z_]{1,8})\.(?P<transformation>[a-z_]+)"
    r"(?:\.(?P<seed>\d+))?(?P<selection>(?:\.(?:judge[0-9.]+?|onerror_[a-z]+))*)$"
)


@dataclass(frozen=True)
class VariantName:
    """What an HTEB task name says: mteb's task, the revision (short), the variant and the selection."""

    task: str
    revision: str
    transformation: str
    seed: int | None
    selection: str  # "" for the default (no judge filter, --on-error original)

    def __str__(self) -> str:
        seed = "" if self.seed is None else f".{self.seed}"
        return f"{self.task}.hteb-{self.revision}.{self.transformation}{seed}{self.selection}"


def short_revision(revision: str) -> str:
    """The first 8 characters of a revision id (a content hash or a commit sha), `sha256:` dropped."""
    return re.sub(r"[^0-9A-Za-z_]", "_", revision.split(":")[-1])[:8]


def variant_task_name(task: str, revision: str, transformation: str, seed: int | None, selection: str = "") -> str:
    """The mteb task name of an HTEB variant (the original has no seed and no selection: it is not filtered).

    >>> variant_task_name("STSBenchmark", "sha256:5cfa68b19a9a", "paraphrasing", 1339, ".judge3")
    'STSBenchmark.hteb-5cfa68b1.paraphrasing.1339.judge3'
    >>> parse_variant_task_name("STS22.v2.hteb-5cfa68b1.original")
    VariantName(task='STS22.v2', revision='5cfa68b1', transformation='original', seed=None, selection='')
    >>> parse_variant_task_name("STSBenchmark") is None
    True
    """
    original = seed is None
    return str(VariantName(task, short_revision(revision), transformation, seed, "" if original else selection))


def parse_variant_task_name(name: str) -> VariantName | None:
    """The parts of an HTEB task name, or None for any other task's name."""
    match = _NAME.match(name)
    if match is None:
        return None
    seed = match["seed"]
    return VariantName(
        match["task"],
        match["revision"],
        match["transformation"],
        None if seed is None else int(seed),
        match["selection"],
    )


def model_folder_name(model_id: str) -> str:
    """mteb's `ModelMeta.model_name_as_path`, made one safe folder name (`safe_filename`: a name such as
    `..` or one holding a backslash or a control character would reach outside `results/`)."""
    return safe_filename(model_id.strip("/").replace("/", "__").replace(" ", "_"))


def result_folder(root: Path, model_id: str, revision: str | None) -> Path:
    """The folder of a model's task files under a results root (the folder holding `results/`)."""
    revision_folder = safe_filename((revision or NO_REVISION).replace(":", "_"))
    return Path(root) / "results" / model_folder_name(model_id) / revision_folder


#: mteb 2.26.24's `ModelMeta.create_empty().to_dict()`: every field of a results repository's
#: `model_meta.json`, which mteb validates as a `ModelMeta` where it reads one in full; what hteb-score
#: does not know about a model stays null.
EMPTY_MODEL_META: dict[str, Any] = {
    "loader_kwargs": {},
    "name": None,
    "revision": None,
    "release_date": None,
    "languages": None,
    "n_parameters": None,
    "n_active_parameters_override": None,
    "n_embedding_parameters": None,
    "memory_usage_mb": None,
    "max_tokens": None,
    "embed_dim": None,
    "license": None,
    "open_weights": None,
    "public_training_code": None,
    "public_training_data": None,
    "framework": [],
    "reference": None,
    "similarity_fn_name": None,
    "use_instructions": None,
    "training_datasets": None,
    "adapted_from": None,
    "superseded_by": None,
    "modalities": ["text"],
    "model_type": ["dense"],
    "citation": None,
    "contacts": None,
    "experiment_kwargs": None,
    "output_dtypes": None,
    "extra_requirements_groups": None,
    "loader": None,
    "is_cross_encoder": False,
}


def model_meta(model_id: str, revision: str | None, **fields: Any) -> dict[str, Any]:
    """The `model_meta.json` of a model's folder: mteb's ModelMeta of the model, as far as it is known
    (`fields`: ModelMeta fields such as `embed_dim`)."""
    return {**EMPTY_MODEL_META, "name": model_id, "revision": revision or NO_REVISION, **fields}
