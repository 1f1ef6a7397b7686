"""mteb result folders as comparison inputs: what `mteb.evaluate` on HTEB tasks
(`hteb_score.mteb_interop.tasks`) or `hteb-score` itself wrote, read into `ModelScores`.

A folder in mteb's results layout (`hteb_score.mteb_interop.layout`) holds one model per
`results/<model>/<revision>/`, each HTEB variant in the task file its name gives
(`STSBenchmark.hteb-5cfa68b1.paraphrasing.1339.json`). A task's score is mteb's
`TaskResult.get_score()`: the mean main score over its splits and subsets, in points here. Plain
JSON is read, so comparing needs no mteb installed; files of other tasks and experiment folders
(other studies') are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.errors import ContractError, HtebError
from hteb_contract.taxonomy import INSTALLED
from hteb_score.scoring.aggregate import POINTS
from hteb_score.scoring.model_scores import ModelScores
from hteb_score.scoring.part_checks import checked_score
from hteb_contract.specs.datasets import specs_by_mteb_task
from hteb_score.mteb_interop.layout import DATASET_KEY, parse_variant_task_name

META = "model_meta.json"
PROTOCOL = re.compile(r"\((hteb|mteb)\)$")  # "hteb-score 0.4.0 (mteb)", as mteb_result_files writes it


def results_folder(path: Path) -> Path:
    """The `results` folder of a results root (an mteb cache, hteb-score's `OUT/mteb`) or the folder itself."""
    path = Path(path)
    if not path.is_dir():
        raise HtebError(f"{path}: no such folder of mteb results")
    return path / "results" if (path / "results").is_dir() else path


def load_mteb_results(path: Path, mteb_tasks: Mapping[str, str | None] | None = None) -> list[ModelScores]:
    """One ModelScores per model and revision under `path`. `mteb_tasks` (dataset -> mteb task, from
    the cards compared beside it) names each task's dataset where the file does not say it."""
    root = results_folder(path)
    datasets_of: dict[str, list[str]] = {}
    for dataset, task in (mteb_tasks or {}).items():
        if task is not None:
            datasets_of.setdefault(task, []).append(dataset)
    revisions = sorted(p for p in root.glob("*/*") if p.is_dir())
    models = []
    for revision in revisions:
        scores = _model_scores(revision, datasets_of, several=sum(p.parent == revision.parent for p in revisions) > 1)
        if scores is not None:
            models.append(scores)
    if not models:
        raise HtebError(f"{path}: no mteb results of HTEB data (expected results/<model>/<revision>/<task>.json)")
    return models


def _model_scores(revision: Path, datasets_of: Mapping[str, list[str]], *, several: bool) -> ModelScores | None:
    name = revision.parent.name.replace("__", "/")
    meta = _read(revision / META) if (revision / META).is_file() else {}
    if isinstance(meta.get("name"), str):
        name = meta["name"]
    per_variant: dict[tuple[str, int | None], dict[str, float]] = {}
    data_revisions, protocols, short_revisions, selections = set(), set(), set(), set()
    specs = specs_by_mteb_task()  # each task file's type, for the range of its scores
    for file in sorted(revision.glob("*.json")):
        variant = parse_variant_task_name(file.stem)
        if file.name == META or variant is None:
            continue  # another task's results in the same cache
        result = _read(file)
        dataset = _dataset(result, file, variant.task, datasets_of)
        spec = specs.get(variant.task)
        value = _score(result, file, spec.task_type if spec else None)
        if value is not None:
            per_variant.setdefault((variant.transformation, variant.seed), {})[dataset] = value * POINTS
        short_revisions.add(f"hteb-{variant.revision}")
        if variant.seed is not None:
            selections.add(f"hteb-{variant.revision}{variant.selection}")
            data_revisions.add(str(result.get("dataset_revision")))
        protocol = PROTOCOL.search(str(result.get("evaluation_protocol", "(mteb)")))
        protocols.add(protocol.group(1) if protocol else None)
    if ("original", None) not in per_variant:
        return None
    if len(short_revisions) > 1 or len(selections) > 1:
        found = ", ".join(sorted(short_revisions | selections))
        raise ContractError(
            f"{revision}: results of different HTEB revisions or selections ({found}) for one "
            "model; compare them as separate folders"
        )
    model = ModelScores(
        f"{name} @{revision.name}" if several else name,
        str(revision),
        data_revisions.pop() if len(data_revisions) == 1 else None,
        INSTALLED,  # mteb's result files record no axes: this release's table names them
        protocol=protocols.pop() if len(protocols) == 1 else None,
    )
    model.original = per_variant.pop(("original", None))
    by_transformation: dict[str, dict[str, list[float]]] = {}
    for (transformation, _seed), values in per_variant.items():
        for dataset, value in values.items():
            by_transformation.setdefault(transformation, {}).setdefault(dataset, []).append(value)
    model.transformations = {
        t: {d: sum(v) / len(v) for d, v in by_dataset.items()} for t, by_dataset in by_transformation.items()
    }
    model.fill_derived()
    return model


def _dataset(result: Mapping[str, Any], file: Path, task: str, datasets_of: Mapping[str, list[str]]) -> str:
    """The HTEB dataset of a task file: its own `hteb_dataset`, else the one dataset the compared
    cards give its mteb task, else that task's name."""
    if isinstance(result.get(DATASET_KEY), str):
        return result[DATASET_KEY]
    if not isinstance(result.get("task_name"), str) or not result["task_name"]:
        raise ContractError(f"{file}: not an mteb task result (no task_name)")
    named = datasets_of.get(task, [])
    return named[0] if len(named) == 1 else task


def _score(result: Mapping[str, Any], file: Path, kind: str | None) -> float | None:
    """mteb's get_score(): the mean main score over every split and subset; None if any is undefined. Each
    stated score must be a number in the range of task type `kind`'s metric on mteb's 0-1 scale (a main_score
    of 50.0 would read as 5,000 points)."""
    splits = result.get("scores")
    if not isinstance(splits, dict) or not splits:
        raise ContractError(f"{file}: not an mteb task result (no scores)")
    values: list[Any] = []  # raw JSON, checked below
    for split, entries in splits.items():
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "main_score" in e for e in entries):
            raise ContractError(f"{file}: split {split!r} is not a list of scores with a main_score")
        values.extend(
            checked_score(e["main_score"], kind, f"{file}: scores.{split}[{at}].main_score")
            for at, e in enumerate(entries)
        )
    if any(v is None for v in values):
        return None
    return sum(values) / len(values)


def _read(path: Path) -> dict[str, Any]:
    data = json_input.read(path, HtebError, nan=True)  # mteb writes NaN where a metric could not be computed
    if not isinstance(data, dict):
        raise ContractError(f"{path}: not a JSON object")
    return data
