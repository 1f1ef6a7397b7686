"""mteb result folders as comparison inputs: what `mteb.evaluate` on HTEB tasks
(`hteb_score.mteb_interop.tasks`) or `hteb-score` itself wrote, read into `ModelScores`.

A folder in mteb's results layout (`hteb_score.mteb_interop.layout`) holds one model per
`results/<model>/<revision>/`; the original's task files sit there, each variant's in the experiment
folder whose `model_meta.json` names it (`hteb_transformation`, `hteb_seed`). A task's score is mteb's
`TaskResult.get_score()`: the mean main score over its splits and subsets, in points here. Plain
JSON is read, so comparing needs no mteb installed; experiments that are not HTEB variants are skipped.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hteb_contract.errors import ContractError, HtebError
from hteb_score.scoring.aggregate import POINTS
from hteb_score.report.inputs import ModelScores
from hteb_score.mteb_interop.layout import DATASET_KEY, EXPERIMENTS, variant_of

META = "model_meta.json"
PROTOCOL = re.compile(r"\((hteb|mteb)\)$")  # "hteb-score 0.4.0 (mteb)", as card.mteb_results writes it


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
    folders = [revision, *sorted(p for p in (revision / EXPERIMENTS).glob("*") if p.is_dir())]
    name = revision.parent.name.replace("__", "/")
    per_variant: dict[tuple[str, int | None], dict[str, float]] = {}
    data_revisions, protocols = set(), set()
    for folder in folders:
        meta = _read(folder / META) if (folder / META).is_file() else None
        if meta is None and folder != revision:
            continue  # an experiment folder without its metadata: mteb skips it too
        variant = variant_of((meta or {}).get("experiment_kwargs"))
        if variant is None:
            continue  # another study's experiment in the same cache
        if meta is not None and isinstance(meta.get("name"), str):
            name = meta["name"]
        for file in sorted(folder.glob("*.json")):
            if file.name == META:
                continue
            result = _read(file)
            dataset = _dataset(result, file, datasets_of)
            value = _score(result, file)
            if value is not None:
                per_variant.setdefault(variant, {})[dataset] = value * POINTS
            if variant[1] is not None:
                data_revisions.add(str(result.get("dataset_revision")))
            protocol = PROTOCOL.search(str(result.get("evaluation_protocol", "(mteb)")))
            protocols.add(protocol.group(1) if protocol else None)
    if ("original", None) not in per_variant:
        return None
    model = ModelScores(f"{name} @{revision.name}" if several else name, str(revision),
                        data_revisions.pop() if len(data_revisions) == 1 else None,
                        protocol=protocols.pop() if len(protocols) == 1 else None)
    model.original = per_variant.pop(("original", None))
    by_transformation: dict[str, dict[str, list[float]]] = {}
    for (transformation, _seed), values in per_variant.items():
        for dataset, value in values.items():
            by_transformation.setdefault(transformation, {}).setdefault(dataset, []).append(value)
    model.transformations = {t: {d: sum(v) / len(v) for d, v in by_dataset.items()}
                             for t, by_dataset in by_transformation.items()}
    model.fill_derived()
    return model


def _dataset(result: Mapping[str, Any], file: Path, datasets_of: Mapping[str, list[str]]) -> str:
    """The HTEB dataset of a task file: its own `hteb_dataset`, else the one dataset the compared
    cards give that task, else the task's name."""
    if isinstance(result.get(DATASET_KEY), str):
        return result[DATASET_KEY]
    task = result.get("task_name")
    if not isinstance(task, str) or not task:
        raise ContractError(f"{file}: not an mteb task result (no task_name)")
    named = datasets_of.get(task, [])
    return named[0] if len(named) == 1 else task


def _score(result: Mapping[str, Any], file: Path) -> float | None:
    """mteb's get_score(): the mean main score over every split and subset; None if any is undefined."""
    splits = result.get("scores")
    if not isinstance(splits, dict) or not splits:
        raise ContractError(f"{file}: not an mteb task result (no scores)")
    values = []
    for split, entries in splits.items():
        if not isinstance(entries, list) or not all(isinstance(e, dict) and "main_score" in e for e in entries):
            raise ContractError(f"{file}: split {split!r} is not a list of scores with a main_score")
        values.extend(e["main_score"] for e in entries)
    if any(v is None for v in values):
        return None
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in values):
        raise ContractError(f"{file}: a main_score is not a finite number")
    return sum(values) / len(values)


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise HtebError(f"{path}: not readable JSON ({err})") from None
    if not isinstance(data, dict):
        raise ContractError(f"{path}: not a JSON object")
    return data
