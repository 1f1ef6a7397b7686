"""A result card's content checked as a part's is (scoring/part_checks.py) before `compare` or
`hteb-score tables` builds a figure from it: a card is a file from someone else's machine. Its
aggregates are checked against its score records where a comparison is made (inputs.py,
`aggregates_problem`); here each score record is checked on its own: a dataset the card covers, one
task type and metric per dataset, and a value inside its metric's range (a Spearman of 7.5 would
be shown as 750 points and derived consistently into every aggregate); and the mteb result files
written beside the card must be those of its model, model revision and dataset revision, each main
score in them the card's record of it; its item measures of variants it scored, each figure inside what
it measures and consistent with its counts; and the explorer rows of the items.parquet beside it are of its
model and variants and consistent with themselves. A refusal names the file and the field."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.errors import ContractError
from hteb_score.mteb_interop.layout import DATASET_KEY, parse_variant_task_name, result_folder, short_revision
from hteb_score.scoring.part_checks import metric_range
from hteb_score.scoring.row_checks import DISTANCE, check_block

#: item-measure figure -> the closed range it lies in, and what it is (shares and counts: the card schema's)
MEASURE_RANGES = {
    "drift_mean": (DISTANCE, "a mean of 1 - cos"),
    "drift_p": (DISTANCE, "a quantile of 1 - cos"),
    "baseline_drift": (DISTANCE, "a mean of 1 - cos"),
    "quality_spearman": ((-1.0, 1.0), "a Spearman rho"),
}
#: item-measure count -> the count it is part of
MEASURE_COUNTS = {
    "n_counted": "n_items",
    "n_calibrated": "n_counted",
    "n_query_items": "n_counted",
    "n_pair_items": "n_counted",
    "n_rated": "n_counted",
}
#: figures defined exactly where the measures count an item
OF_COUNTED = ("drift_mean", "pass_rate")


def check_card(card: Mapping[str, Any], path: Path) -> None:
    """Refuse `card` (read from `path`, valid against the card schema) whose score records or mteb
    result files contradict it."""
    covered = card["dataset"].get("datasets")
    kinds: dict[str, tuple[str, str, int]] = {}
    for i, record in enumerate(card["scores"]):
        field = f"scores[{i}]"
        dataset = record["dataset"]
        if covered is not None and dataset not in covered:
            raise ContractError(f"{path}: {field}.dataset is {dataset!r}, not one of the card's dataset.datasets")
        kind = (record["task_type"], record["metric"], i)
        first = kinds.setdefault(dataset, kind)
        if first[:2] != kind[:2]:
            raise ContractError(
                f"{path}: {field} of {dataset} has task_type/metric {kind[0]}/{kind[1]}, "
                f"scores[{first[2]}] of it {first[0]}/{first[1]}"
            )
        value, (low, high) = record["value"], metric_range(record["metric"])
        if value is not None and math.isfinite(value) and not low <= value <= high:
            raise ContractError(
                f"{path}: {field}.value ({dataset} {record['transformation']}/{record['seed']} "
                f"{record['subset']}) is {value}, outside {record['metric']}'s range "
                f"[{low:g}, {high:g}]"
            )
    _check_item_measures(card, Path(path))
    _check_mteb_files(card, Path(path))


def _check_item_measures(card: Mapping[str, Any], path: Path) -> None:
    """Each (transformation, dataset) of the card's item measures is a transformed variant it scored, and its
    figures lie inside what they measure, its counts within the counts they are part of, its drift figures
    defined where it counts an item, its quantiles in order and its quality interval around its rho."""
    measures = card.get("item_measures")
    if not measures:
        return
    scored = {(r["transformation"], r["dataset"]) for r in card["scores"] if r["transformation"] != "original"}
    quantiles = [f"drift_p{q}" for q in measures["quantiles"]]
    for transformation, datasets in measures["per_transformation"].items():
        for dataset, figures in datasets.items():
            field = f"item_measures.per_transformation.{transformation}.{dataset}"
            if (transformation, dataset) not in scored:
                raise ContractError(f"{path}: {field}: not a transformed variant the card scored")
            _check_measures(figures, quantiles, f"{path}: {field}")


def _check_measures(figures: Mapping[str, Any], quantiles: Sequence[str], where: str) -> None:
    """One (transformation, dataset)'s item measures (`where` names them in an error)."""
    values = {
        **{k: figures[k] for k in ("drift_mean", *quantiles) if k in figures},
        **{f"baseline_drift.{k}": v for k, v in figures["baseline_drift"].items()},
        **{f"quality_spearman.{k}": v for k, v in figures["quality_spearman"].items()},
    }
    for name, value in values.items():
        (low, high), what = MEASURE_RANGES[next(k for k in MEASURE_RANGES if name.startswith(k))]
        if value is not None and not low <= value <= high:
            raise ContractError(f"{where}.{name} is {value!r}, outside [{low:g}, {high:g}] ({what})")
    for part, whole in MEASURE_COUNTS.items():
        if figures[part] > figures[whole]:
            raise ContractError(f"{where}: {part} is {figures[part]}, more than its {whole} ({figures[whole]})")
    counted = figures["n_counted"] > 0
    for name in (*OF_COUNTED, *quantiles):
        if (figures.get(name) is not None) != counted:
            said = "null" if figures.get(name) is None else repr(figures.get(name))
            raise ContractError(f"{where}.{name} is {said}, with n_counted {figures['n_counted']}")
    found = [(name, figures[name]) for name in quantiles if figures.get(name) is not None]
    for (lower, low), (upper, high) in zip(found, found[1:]):
        if low > high:
            raise ContractError(f"{where}: {lower} ({low!r}) is above {upper} ({high!r})")
    rho, interval = (
        figures["quality_spearman"].get("drift"),
        (figures.get("quality_spearman_interval") or {}).get("drift"),
    )
    if rho is not None and interval is not None and not interval[0] <= rho <= interval[1]:
        raise ContractError(f"{where}: quality_spearman.drift {rho!r} lies outside its interval {interval}")


def _check_mteb_files(card: Mapping[str, Any], path: Path) -> None:
    """The mteb result folder beside the card (MODEL_DIR/mteb/results/MODEL/REVISION/*.json) holds
    only its model at its model revision, each file of its dataset revision."""
    results = path.parent / "mteb" / "results"
    if not results.is_dir():
        return
    model = card["model"]
    expected = result_folder(path.parent / "mteb", model["model_id"], model.get("revision"))
    for folder in sorted(p for p in results.glob("*/*") if p.is_dir()):
        if folder != expected:
            field = "model.model_id" if folder.parent != expected.parent else "model.revision"
            raise ContractError(
                f"{path}: {field} is {model[field.split('.')[1]]!r}, but its mteb results are "
                f"filed under {folder.relative_to(path.parent).as_posix()}"
            )
    revision = short_revision(card["dataset"]["revision"])
    for file in sorted(expected.glob("*.json")):
        name = parse_variant_task_name(file.stem)
        if name is not None and name.revision != revision:
            raise ContractError(
                f"{path}: dataset.revision is {card['dataset']['revision']!r}, but its mteb result "
                f"{file.name} is of revision {name.revision}"
            )
        if name is not None:
            _check_mteb_values(card, path, file, name.transformation, name.seed)


def _check_mteb_values(card: Mapping[str, Any], path: Path, file: Path, transformation: str, seed: int | None) -> None:
    """Each main score of an mteb result file of one dataset (`hteb_dataset`) is the card's record of it, to
    the 6 decimals mteb writes (a single-subset dataset's record is its `all`). A file two datasets share
    (SemRel2024 and SemRel2024-eng name one mteb task) names neither and is not read here."""
    data = json_input.load_object(file.read_bytes(), str(file), ContractError, nan=True)  # mteb's format: NaN allowed
    dataset = data.get(DATASET_KEY)
    if not isinstance(dataset, str):
        return
    records = {
        (r["subset"]): r["value"]
        for r in card["scores"]
        if (r["dataset"], r["transformation"], r["seed"]) == (dataset, transformation, seed)
    }
    # a Noise figure resting on fewer subsets (the card's coverage) is not the evaluator's whole-dataset score
    # the file holds: its `all` record is no subset's
    adjusted = any(
        c["left_out"]
        for c in card.get("coverage", [])
        if (c["dataset"], c["transformation"], c["seed"]) == (dataset, transformation, seed)
    )
    splits = data.get("scores")
    if not isinstance(splits, dict):
        raise ContractError(f"{path}: its mteb result {file.name} has no scores")
    for split, entries in splits.items():
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise ContractError(f"{path}: its mteb result {file.name}: split {split!r} is not a list of scores")
        for entry in entries:
            subset = "all" if len(entries) == 1 else entry.get("hf_subset")
            if subset == "all" and adjusted:
                continue
            score, where = entry.get("main_score"), f"{dataset} {transformation}/{seed} {entry.get('hf_subset')}"
            if subset not in records:
                raise ContractError(
                    f"{path}: its mteb result {file.name} holds {where}, of which the card has no record"
                )
            value = records[subset]
            agree = (value is None and score is None) or (
                isinstance(score, (int, float)) and value is not None and abs(round(value, 6) - score) <= 1e-6
            )
            if not agree:
                raise ContractError(
                    f"{path}: scores of {where} is {value}, but its mteb result {file.name} says {score}"
                )


def check_items(rows: Sequence[Mapping[str, Any]], card: Mapping[str, Any], path: Path) -> None:
    """The explorer rows of the items.parquet at `path`, beside `card`: each of the card's model and of a transformed
    variant it scored, and consistent with itself (row_checks.check_block): the report page shows them as its
    examples."""
    model = card["model"]["model_id"]
    variants = {
        (r["dataset"], r["transformation"], r["seed"]) for r in card["scores"] if r["transformation"] != "original"
    }
    for at, row in enumerate(rows):
        if row["model"] != model:
            raise ContractError(f"{path}: explorer row {at}: model is {row['model']!r}, its card's {model!r}")
        variant = (row["dataset"], row["transformation"], row["seed"])
        if variant not in variants:
            raise ContractError(
                f"{path}: explorer row {at}: {'/'.join(map(repr, variant))} is not a transformed variant its card "
                "scored"
            )
    check_block("explorer", rows, str(path))
