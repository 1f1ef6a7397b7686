"""Hugging Face model-card evaluation results for one result card, ready to paste.

Two formats, both built with huggingface_hub's own helpers so the Hub parses them:
the `model-index` block of README.md front matter (`EvalResult` + `eval_results_to_model_index`)
and the newer `.eval_results/*.yaml` file (`EvalResultEntry` + `eval_result_entries_to_yaml`).
Per dataset the Original score, the HTEB total and each axis score (Noise's marked as not in the
total) are reported (points, 0-100).
"""

from __future__ import annotations

from typing import Any

import yaml
from huggingface_hub import EvalResult, EvalResultEntry, eval_result_entries_to_yaml
from huggingface_hub.repocard_data import eval_results_to_model_index

from hteb_contract.hub_eval import AVERAGE, selection_tag, task_id
from hteb_contract.taxonomy import AXES, AXIS_LABELS, in_total
from hteb_score.scoring.model_scores import ModelScores


def _columns(scores: ModelScores, dataset: str) -> list[tuple[str, str, float]]:
    """(column, readable name, value) for the scores the card has on `dataset`."""
    out = [("original", "Original", scores.original[dataset])]
    if dataset in scores.hteb:
        out.append(("hteb_total", "HTEB total", scores.hteb[dataset]))
    out += [
        (f"hteb_{a}", f"HTEB {AXIS_LABELS[a]} axis" + ("" if in_total(a) else " (not in the HTEB total)"),
         scores.axes[a][dataset])
        for a in AXES
        if dataset in scores.axes.get(a, {})
    ]
    return out


def _metrics(card: dict[str, Any]) -> dict[str, str]:
    return {row["dataset"]: row["metric"] for row in card["aggregates"]["per_dataset"]}


def selection_of(card: dict[str, Any]) -> dict[str, Any]:
    """What made the scores, machine-readable: protocol, --min-judge, --on-error, --preset."""
    selection = card.get("selection") or {}
    return {"protocol": card["protocol"], "min_judge": selection.get("min_judge"), "on_error": card["on_error"],
            "preset": selection.get("preset")}


def eval_results(scores: ModelScores) -> list[EvalResult]:
    """One EvalResult per dataset and score column (Original, HTEB total, axes), plus the averages;
    `scores` must be read from a result card (`load_card`). The dataset is the bare Hub id (the
    store's label where the revision is not on the Hub), the config the dataset's (every HTEB
    dataset is a config of its revision), no split (a column spans the variants' splits), the
    selection in `metric_args`, and the task id as `.eval_results` and the revision's eval.yaml name it."""
    card = scores.card or {}
    repo, revision = card["dataset"]["repo_id"], card["dataset"]["revision"]
    dataset_type = hub_dataset_id(repo) or card["dataset"]["label"]
    metrics, args = _metrics(card), selection_of(card)
    selection = selection_tag(min_judge=args["min_judge"], on_error=args["on_error"])
    results = []
    for dataset in sorted(scores.original):
        for column, name, value in _columns(scores, dataset):
            results.append(EvalResult(
                task_type=scores.task_types.get(dataset, "embedding"), task_name=task_id(dataset, column, selection),
                dataset_type=dataset_type, dataset_name=f"HTEB {dataset}", dataset_config=dataset,
                dataset_revision=revision, metric_type=f"{column}_{metrics[dataset]}",
                metric_name=f"{name} ({metrics[dataset]}, points)", metric_value=round(value, 2), metric_args=args))
    for column, name, value in _averages(scores):
        results.append(EvalResult(
            task_type="embedding", task_name=task_id(AVERAGE, column, selection), dataset_type=dataset_type,
            dataset_name="HTEB (average over datasets)", dataset_revision=revision, metric_type=f"{column}_average",
            metric_name=f"{name} (mean over datasets, points)", metric_value=round(value, 2), metric_args=args))
    return results


def _averages(scores: ModelScores) -> list[tuple[str, str, float]]:
    """The card's headline: Original and the HTEB total over the datasets it rests on (its aggregates)."""
    agg = (scores.card or {})["aggregates"]
    out = [("original", "Original", agg["original"])]
    if agg["hteb_total"] is not None:
        out.append(("hteb_total", "HTEB total", agg["hteb_total"]))
    return out


def model_index_yaml(scores: ModelScores) -> str:
    """The `model-index:` YAML block for README.md front matter, from a loaded result card."""
    results = eval_results(scores)
    return yaml.safe_dump(
        {"model-index": eval_results_to_model_index(scores.model, results)}, sort_keys=False, allow_unicode=True
    )


def hub_dataset_id(repo_id: str) -> str | None:
    """The Hub dataset ID (OWNER/NAME) of a card's store: `hf://OWNER/NAME` or a bare OWNER/NAME; None
    for a local store or source folder, which no Hub result can point at."""
    if repo_id.startswith("hf://"):
        return repo_id.removeprefix("hf://")
    if "://" in repo_id or repo_id.startswith(("local:", "/", ".")) or repo_id.count("/") != 1:
        return None
    return repo_id


def eval_results_file_yaml(scores: ModelScores) -> str | None:
    """The content of `.eval_results/hteb.yaml` (one entry per dataset and score column), from a
    loaded result card; None when the card's revision is not on the Hub (the format's `dataset.id`
    must be a Hub dataset, and `revision` its commit)."""
    card = scores.card or {}
    dataset_id = hub_dataset_id(card.get("dataset", {}).get("repo_id", ""))
    if dataset_id is None:
        return None
    results = eval_results(scores)
    entries = [
        EvalResultEntry(
            dataset_id=dataset_id,
            task_id=r.task_name,
            value=r.metric_value,
            dataset_revision=r.dataset_revision,
            date=card.get("created"),
            notes=f"{r.metric_name}; " + "; ".join(f"{k}={v}" for k, v in (r.metric_args or {}).items()),
        )
        for r in results if r.task_name is not None  # eval_results names every task
    ]
    return yaml.safe_dump(eval_result_entries_to_yaml(entries), sort_keys=False, allow_unicode=True)
