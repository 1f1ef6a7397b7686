"""Hugging Face Hub evaluation results for one result card, ready to paste.

Two formats, both built with huggingface_hub's own helpers so the Hub parses them: the
`model-index` block of README.md front matter (`EvalResult` + `eval_results_to_model_index`) and
the newer `.eval_results/*.yaml` file (`EvalResultEntry` + `eval_result_entries_to_yaml`), whose
entries attach to the revision's `eval.yaml` by task id (hteb_contract.hub_eval).

The model-index holds what mteb's `create-meta` puts there, one main score per task: per dataset
and for the average over datasets, the Original, the HTEB total and each axis (points, 0-100), each
its own task, the dataset's main metric its metric; a task's type is the Hub's task category (as
mteb's metadata maps it; `feature-extraction` for the average); where the revision is on the Hub,
each result names it, at the commit scored, as its `source`. Deltas and per-transformation means
stay in the card. The
`.eval_results` file, named per revision and selection so a second revision scored for one model
sits beside the first, holds every figure the revision's eval.yaml can declare (deltas included,
each a leaderboard of its own). A figure the card leaves undefined (null) is left out. Where the
card's selection is ad hoc (a part of the revision, another judge threshold or error policy), the
revision's eval.yaml does not declare its ids: `adhoc_eval_yaml_text` gives the tasks to add to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import yaml
from huggingface_hub import EvalResult, EvalResultEntry, eval_result_entries_to_yaml
from huggingface_hub.repocard_data import eval_results_to_model_index

from hteb_contract.hub_eval import AVERAGE, Selection, adhoc_eval_yaml, columns, describe, task_id
from hteb_contract.tasks import TASK_TYPES, task_type
from hteb_contract.taxonomy import Taxonomy, recorded_in
from hteb_score.scoring.model_scores import ModelScores

#: Where each file goes: the model repo's README front matter and the tasks to add to the benchmark
#: dataset's eval.yaml (ad hoc selections only); `.eval_results/` files are named by `eval_results_path`.
MODEL_INDEX, EVAL_ADDITIONS = "model-index.yaml", "add-to-dataset-eval.yaml"
#: The task category of the average over datasets: what the Hub calls the task of an embedding model.
AVERAGE_CATEGORY = "feature-extraction"


@dataclass(frozen=True)
class Figure:
    """One figure of a card as the Hub names it: its row (a dataset or `average`), column
    (hub_eval.columns), value in points, the row's metric (`average` for the average), its task id,
    and whether the revision's eval.yaml declares that id."""

    row: str
    column: str
    value: float
    metric: str
    task_id: str
    declared: bool


def card_selection(card: dict[str, Any]) -> Selection:
    """What made the card's figures. The part of the revision is the card's `selection`; a card
    without it (written before it was recorded) is taken to be a part of what it holds, and a
    merge that lacks a planned dataset to be a part of the datasets it has."""
    chosen = card.get("selection") or {}
    present = sorted(row["dataset"] for row in card["aggregates"]["per_dataset"])
    held = {(r["transformation"], r["seed"]) for r in card["scores"] if r["transformation"] != "original"}
    known = "datasets" in chosen
    missing = any(f["code"] == "missing_dataset" for f in card.get("flags", []))
    datasets = None if known and chosen["datasets"] is None and not missing else present
    transformations = chosen.get("transformations") if known else sorted({t for t, _ in held})
    seeds = chosen.get("seeds") if known else sorted({s for _, s in held})
    return Selection(
        protocol=card["protocol"],
        min_judge=chosen.get("min_judge"),
        on_error=card["on_error"],
        datasets=None if datasets is None else tuple(datasets),
        transformations=None if transformations is None else tuple(transformations),
        seeds=None if seeds is None else tuple(seeds),
        preset=chosen.get("preset"),
    )


def _dataset_values(row: dict[str, Any]) -> dict[str, float | None]:
    original = row["original"]
    values = {"original": original, "hteb_total": row.get("hteb"), "hteb_total_delta": row.get("delta")}
    for axis, score in row["axes"].items():
        values[f"hteb_{axis}"] = score
        values[f"hteb_{axis}_delta"] = None if score is None or original is None else score - original
    return values


def _average_values(agg: dict[str, Any]) -> dict[str, float | None]:
    values = {"original": agg["original"], "hteb_total": agg["hteb_total"], "hteb_total_delta": agg["delta"]}
    for axis, score in agg["per_axis"].items():
        values[f"hteb_{axis}"] = score
        values[f"hteb_{axis}_delta"] = agg["axis_pairs"][axis]["delta"]
    for name, block in agg["per_transformation"].items():
        values[name], values[f"{name}_delta"] = block["mean"], block["delta"]
    return values


def figures(card: dict[str, Any]) -> list[Figure]:
    """Every defined figure of a card, each dataset's then the average's, in hub_eval.columns' order (by the axes
    the card was aggregated by)."""
    selection, agg, taxonomy = card_selection(card), card["aggregates"], recorded_in(card)
    rows = [
        (row["dataset"], row["metric"], row["transformations"], _dataset_values(row), False)
        for row in agg["per_dataset"]
    ]
    rows.append((AVERAGE, AVERAGE, agg["per_transformation"], _average_values(agg), True))
    out = []
    for row, metric, transformations, values, average in rows:
        for column in columns(transformations, average=average, taxonomy=taxonomy):
            value = values.get(column)
            if value is not None:
                out.append(
                    Figure(
                        row, column, value, metric, task_id(row, column, selection.tag(row)), selection.declared(row)
                    )
                )
    return out


def _args(selection: Selection, row: str) -> dict[str, Any]:
    """The selection, machine-readable (a metric's `args`; None values are left out by huggingface_hub)."""
    return {
        "protocol": selection.protocol,
        "min_judge": selection.min_judge,
        "on_error": selection.on_error,
        "preset": selection.preset,
        **selection.chosen(row),
    }


def is_main(column: str) -> bool:
    """Whether a column is a score (the Original, the HTEB total, an axis), not a delta or a
    transformation's mean: what the model-index holds."""
    return column == "original" or (column.startswith("hteb_") and not column.endswith("_delta"))


def _category(scores: ModelScores, row: str) -> str:
    """The Hub's task category of a row: its task type's, else (the average, or a type a scores table names
    that hteb-score does not know) the embedding model's own, never a word outside the Hub's vocabulary."""
    name = scores.task_types.get(row)
    if row == AVERAGE or name is None or name not in TASK_TYPES:
        return AVERAGE_CATEGORY
    return task_type(name).hub_category


def eval_results(scores: ModelScores) -> list[EvalResult]:
    """One EvalResult per main figure (`is_main`); `scores` must be read from a result card
    (`load_card`). The dataset is the bare Hub id (the store's label where the revision is not on the
    Hub), a dataset's config its own (every HTEB dataset is a config of its revision), no split (a
    figure spans the variants' splits), the selection in `metric_args`, the task name the figure's
    task id, the metric the dataset's main metric (`main_score` for the average: the mean of theirs)."""
    card = scores.card or {}
    hub_id = hub_dataset_id(card["dataset"]["repo_id"])
    selection, taxonomy = card_selection(card), recorded_in(card)
    source_url = None if hub_id is None else _revision_url(hub_id, card)
    return [
        EvalResult(
            task_type=_category(scores, f.row),
            task_name=f.task_id,
            dataset_type=hub_id or card["dataset"]["label"],
            dataset_name="HTEB (average over datasets)" if f.row == AVERAGE else f"HTEB {f.row}",
            dataset_config=None if f.row == AVERAGE else f.row,
            dataset_revision=card["dataset"]["revision"],
            metric_type="main_score" if f.row == AVERAGE else f.metric,
            metric_name=_named(f, taxonomy),
            metric_value=round(f.value, 2),
            metric_args=_args(selection, f.row),
            source_name=None if source_url is None else "HTEB revision",
            source_url=source_url,
        )
        for f in figures(card)
        if is_main(f.column)
    ]


def _named(f: Figure, taxonomy: Taxonomy) -> str:
    """A figure in words, as both Hub files name it: its column and what it is a score of, in points."""
    return f"{describe(f.column, taxonomy)} ({'mean over datasets' if f.row == AVERAGE else f.metric}, points)"


def _revision_url(hub_id: str, card: dict[str, Any]) -> str:
    """The revision's page on the Hub, at the commit the card was scored on."""
    return f"https://huggingface.co/datasets/{hub_id}/tree/{card['dataset']['revision']}"


def model_index_yaml(scores: ModelScores) -> str:
    """The `model-index:` YAML block for README.md front matter, from a loaded result card: each
    main figure its own result under its own task (huggingface_hub's helper groups the results of
    one dataset into one task, named after the first)."""
    results = [eval_results_to_model_index(scores.model, [r])[0]["results"][0] for r in eval_results(scores)]
    return yaml.dump(
        {"model-index": [{"name": scores.model, "results": results}]},
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        allow_unicode=True,
    )


def hub_dataset_id(repo_id: str) -> str | None:
    """The Hub dataset ID (OWNER/NAME) of a card's store: `hf://OWNER/NAME` or a bare OWNER/NAME; None
    for a local store or source folder, which no Hub result can point at."""
    if repo_id.startswith("hf://"):
        return repo_id.removeprefix("hf://")
    if "://" in repo_id or repo_id.startswith(("local:", "/", ".")) or repo_id.count("/") != 1:
        return None
    return repo_id


def eval_results_path(card: dict[str, Any]) -> str:
    """Where a card's `.eval_results` file goes in the model repo: named by the revision's label and
    the selection's tag, so results of another revision or selection for the same model sit beside it
    (a character a file name should not hold becomes `_`: the label is the card's word, not ours)."""
    dataset = card["dataset"]
    name = f"{dataset['label'] or dataset['revision'][:12]}{card_selection(card).tag(AVERAGE)}"
    return f".eval_results/hteb-{re.sub(r'[^A-Za-z0-9_.-]+', '_', name).strip('._') or 'revision'}.yaml"


def eval_results_file_yaml(scores: ModelScores) -> str | None:
    """The content of the card's `.eval_results` file (one entry per figure, deltas included), from a
    loaded result card; None when the card's revision is not on the Hub (the format's `dataset.id`
    must be a Hub dataset, and `revision` its commit). The notes name the figure and the whole selection."""
    card = scores.card or {}
    dataset_id = hub_dataset_id(card.get("dataset", {}).get("repo_id", ""))
    if dataset_id is None:
        return None
    selection, taxonomy = card_selection(card), recorded_in(card)
    entries = [
        EvalResultEntry(
            dataset_id=dataset_id,
            task_id=f.task_id,
            value=round(f.value, 2),
            dataset_revision=card["dataset"]["revision"],
            date=card.get("created"),
            notes=f"{_named(f, taxonomy)}; "
            f"{selection.notes(f.row)}" + ("" if f.declared else f"; an ad hoc task: see {EVAL_ADDITIONS}"),
        )
        for f in figures(card)
    ]
    return yaml.dump(eval_result_entries_to_yaml(entries), Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True)


def adhoc_tasks(scores: ModelScores) -> list[dict[str, str]]:
    """The eval.yaml tasks of the card's figures that the revision's eval.yaml does not declare."""
    return [
        {"id": f.task_id, **({} if f.row == AVERAGE else {"config": f.row})}
        for f in figures(scores.card or {})
        if not f.declared
    ]


def hub_files(scores: ModelScores) -> dict[str, str]:
    """The Hub files of a loaded result card, by where they go (MODEL_INDEX, `eval_results_path`,
    EVAL_ADDITIONS): the last two only for a revision on the Hub, the last only for an ad hoc selection."""
    files = {MODEL_INDEX: model_index_yaml(scores)}
    eval_results_text = eval_results_file_yaml(scores)
    if eval_results_text is not None:
        files[eval_results_path(scores.card or {})] = eval_results_text
        tasks = adhoc_tasks(scores)
        if tasks:
            card = scores.card or {}
            files[EVAL_ADDITIONS] = adhoc_eval_yaml(card["dataset"]["label"] or "", tasks, recorded_in(card))
    return files
