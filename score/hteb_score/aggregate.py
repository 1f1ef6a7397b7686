"""Aggregation as the paper does it (SPEC "Scores and aggregation"; App. I Table 13, App. J).

Scores are per (dataset, transformation, seed). Seeds are averaged first (runs are not
independent observations); a transformation's sd is the sample sd over seeds. An axis score is the
mean over the axis's transformations; the HTEB score of a dataset is the unweighted mean of its
axis scores, and its sd is the sample sd over seeds of the per-seed HTEB score. Model-level
Original / per-axis / HTEB total are means over datasets; the HTEB total is the unweighted mean of
the three model-level axis scores. Everything here is in points (score x 100); deltas are
HTEB - Original.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hteb_contract.taxonomy import AXES, AXIS_OF

POINTS = 100.0


def _sd(values: Sequence[float]) -> float | None:
    return float(np.std(values, ddof=1)) if len(values) > 1 else None


def _axes(means: Mapping[str, float]) -> dict[str, float]:
    axes = {}
    for axis, members in AXES.items():
        present = [means[t] for t in members if t in means]
        if present:
            axes[axis] = float(np.mean(present))
    return axes


def aggregate(scores: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The card's `aggregates` block from its flat score records (subset `all` only)."""
    original: dict[str, float] = {}
    metric: dict[str, str] = {}
    by_seed: dict[str, dict[str, dict[int, float]]] = defaultdict(lambda: defaultdict(dict))
    for record in scores:
        if record["subset"] != "all":
            continue
        dataset, value = record["dataset"], record["value"] * POINTS
        metric[dataset] = record["metric"]
        if record["transformation"] == "original":
            original[dataset] = value
        else:
            by_seed[dataset][record["transformation"]][record["seed"]] = value

    per_dataset = []
    for dataset in original:
        variants = by_seed.get(dataset, {})
        transformations = {}
        for name in sorted(variants, key=lambda t: (list(AXIS_OF).index(t) if t in AXIS_OF else 99, t)):
            values = list(variants[name].values())
            mean = float(np.mean(values))
            transformations[name] = {"mean": mean, "sd": _sd(values), "n_seeds": len(values), "delta": mean - original[dataset]}
        axes = _axes({t: v["mean"] for t, v in transformations.items()})
        hteb = float(np.mean(list(axes.values()))) if axes else None
        seeds = sorted({s for per_t in variants.values() for s in per_t})
        per_seed = []
        for seed in seeds:
            seed_axes = _axes({t: per_t[seed] for t, per_t in variants.items() if seed in per_t})
            if seed_axes:
                per_seed.append(float(np.mean(list(seed_axes.values()))))
        per_dataset.append({
            "dataset": dataset, "metric": metric[dataset], "original": original[dataset],
            "transformations": transformations, "axes": axes, "hteb": hteb, "hteb_sd": _sd(per_seed),
            "delta": None if hteb is None else hteb - original[dataset],
        })

    per_transformation = {}
    for name in AXIS_OF:
        values = [row["transformations"][name]["mean"] for row in per_dataset if name in row["transformations"]]
        if values:
            deltas = [row["transformations"][name]["delta"] for row in per_dataset if name in row["transformations"]]
            per_transformation[name] = {"mean": float(np.mean(values)), "sd": _sd(values),
                                        "delta": float(np.mean(deltas)), "datasets": len(values)}
    per_axis = {}
    for axis in AXES:
        values = [row["axes"][axis] for row in per_dataset if axis in row["axes"]]
        if values:
            per_axis[axis] = float(np.mean(values))
    model_original = float(np.mean([row["original"] for row in per_dataset])) if per_dataset else None
    total = float(np.mean(list(per_axis.values()))) if per_axis else None
    return {
        "unit": "points (score x 100)",
        "per_dataset": per_dataset,
        "per_transformation": per_transformation,
        "per_axis": per_axis,
        "original": model_original,
        "hteb_total": total,
        "delta": None if total is None or model_original is None else total - model_original,
    }
