"""The analyses of a comparison (paper App. I, Table 13), from `ModelScores` to a `Comparison`.

Leaderboard (Table 14), Kendall tau per dataset summarised as mean +- sd (Table 4), HL shift /
Wilcoxon / Holm on model-averaged dataset deltas (Fig. 7), split-half reliability per axis
(Table 3) and the per-model mean deltas of the heat map (Fig. 6). Only datasets every model has
an Original score for enter. An undefined score (null or NaN in a card or table) is left out
before any analysis, with a warning naming the model and how many; a card's flags are counted too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hteb_contract.errors import HtebError
from hteb_contract.taxonomy import AXES, PAPER_AXES, TRANSFORMATIONS
from hteb_score.report.comparison import Comparison, LeaderboardRow, Reliability, ScoreColumns, Stability
from hteb_score.report.formatting import column_label
from hteb_score.report.inputs import check_inputs
from hteb_score.scoring.aggregate import model_level
from hteb_score.scoring.model_scores import HTEB, ModelScores
from hteb_score.scoring.statistics import add_holm, paired_effect
from hteb_score.stats.ranking import kendall_tau, mean_sd
from hteb_score.stats.reliability import split_half_reliability


def _defined(column: Mapping[str, float | None]) -> dict[str, float]:
    return {d: v for d, v in column.items() if v is not None and math.isfinite(v)}


def defined_scores(models: Sequence[ModelScores]) -> tuple[list[ModelScores], list[str]]:
    """The models with every undefined score (None, NaN, inf) left out, and a warning per model
    that had any or whose card carries flags."""
    out, warnings = [], []
    for m in models:
        kept = replace(m, original=_defined(m.original), hteb=_defined(m.hteb),
                       transformations={t: _defined(c) for t, c in m.transformations.items()},
                       axes={a: _defined(c) for a, c in m.axes.items()})
        dropped = sum(len(c) for c in (m.original, m.hteb, *m.transformations.values(), *m.axes.values())) - sum(
            len(c) for c in (kept.original, kept.hteb, *kept.transformations.values(), *kept.axes.values()))
        if dropped:
            warnings.append(f"{m.model}: {dropped} undefined score(s) (null or NaN) left out")
        flags = (m.card or {}).get("flags") or []
        if flags:
            codes = sorted({f["code"] for f in flags})
            warnings.append(f"{m.model}: its card carries {len(flags)} flag(s) ({', '.join(codes)}); see its result_card.md")
        out.append(kept)
    return out, warnings


def common_datasets(models: Sequence[ModelScores]) -> list[str]:
    """Datasets every model has an Original score for: the only fair basis for ranking."""
    return sorted(set.intersection(*(set(m.original) for m in models)))


def covered(models: Sequence[ModelScores], datasets: Sequence[str], name: str) -> list[str]:
    """The common datasets on which every model has a score for column `name`."""
    return [d for d in datasets if all(d in m.column(name) for m in models)]


def score_columns(models: Sequence[ModelScores], datasets: Sequence[str]) -> ScoreColumns:
    """Transformations, axes and the total that every model has on at least one common dataset."""
    return ScoreColumns(
        transformations=[t for t in TRANSFORMATIONS if covered(models, datasets, t)],
        axes=[a for a in AXES if covered(models, datasets, a)],
        total=[HTEB] if covered(models, datasets, HTEB) else [],
    )


def _ranks(values: Mapping[str, float]) -> dict[str, int]:
    """Competition ranks, 1 = best (highest)."""
    return {k: 1 + sum(v > values[k] for v in values.values()) for k in values}


def leaderboard(models: Sequence[ModelScores], datasets: Sequence[str], axes: Sequence[str]) -> list[LeaderboardRow]:
    """Per model: Original, each axis (Noise's too) and the HTEB total (`model_level` of the paper's
    axes, as in Table 14; the mean of per-dataset totals when only totals are known), ranked; best on
    HTEB first."""
    on_axis = {a: covered(models, datasets, a) for a in axes}
    on_total = covered(models, datasets, HTEB)
    levels, totals = {}, {}
    for m in models:
        by_axis = {a: {d: m.axes[a][d] for d in on_axis[a]} for a in axes}
        levels[m.model] = level = model_level({d: m.original[d] for d in datasets}, by_axis)
        if all(a in level.axes for a in PAPER_AXES):
            totals[m.model] = level.hteb
        elif on_total:
            totals[m.model] = float(np.mean([m.hteb[d] for d in on_total]))
    rank_original = _ranks({name: level.original for name, level in levels.items()})
    rank_hteb = _ranks(totals) if len(totals) == len(levels) else {}
    rows = [
        LeaderboardRow(name, level.original, level.axes, totals.get(name), rank_original[name], rank_hteb.get(name))
        for name, level in levels.items()
    ]
    return sorted(rows, key=lambda r: (r.rank_hteb or r.rank_original, r.model))


def ranking_stability(
    models: Sequence[ModelScores], datasets: Sequence[str], columns: Sequence[str]
) -> dict[str, Stability]:
    """Kendall tau between the models' Original and transformed scores, per dataset, per column;
    summarised as mean +- sample sd over datasets (Table 4)."""
    out = {}
    for name in columns:
        per_dataset = {
            d: kendall_tau([m.original[d] for m in models], [m.column(name)[d] for m in models])
            for d in covered(models, datasets, name)
        }
        out[name] = Stability(**mean_sd(list(per_dataset.values())), per_dataset=per_dataset)
    return out


def _model_mean_deltas(models: Sequence[ModelScores], datasets: Sequence[str], name: str) -> list[float]:
    return [
        float(np.mean([m.column(name)[d] - m.original[d] for m in models])) for d in covered(models, datasets, name)
    ]


def transformation_effects(
    models: Sequence[ModelScores],
    datasets: Sequence[str],
    columns: ScoreColumns,
    *,
    ci_method: str = "walsh",
    seed: int = 0,
) -> dict[str, dict[str, dict[str, Any]]]:
    """Fig. 7: per dataset, the model-averaged delta; HL shift + CI, Wilcoxon p, Holm p within each
    family (transformations; axes; total; the paper's apart from Noise's) and the median absolute
    delta (pooled within an axis)."""
    families: dict[str, dict[str, dict[str, Any]]] = {}
    for family, names in columns.families().items():
        effects = {
            name: paired_effect(_model_mean_deltas(models, datasets, name), ci_method=ci_method, seed=seed)
            for name in names
        }
        add_holm(effects)
        families[family] = effects
    for axis, entry in families["axes"].items():
        members = [t for t in AXES[axis] if t in columns.transformations]
        pooled = [v for t in members for v in _model_mean_deltas(models, datasets, t)]
        entry["median_abs_delta_pooled"] = float(np.median(np.abs(pooled))) if pooled else None
    return families


def reliability(
    models: Sequence[ModelScores], datasets: Sequence[str], axes: Sequence[str], *, n_splits: int, seed: int
) -> Reliability:
    """Split-half reliability per axis (Table 3), or the reason it could not be computed."""
    task_types: dict[str, str] = {}
    for m in models:
        task_types.update({d: t for d, t in m.task_types.items() if d in datasets})
    if not axes:
        return Reliability("no per-axis scores in the inputs", {})
    if set(task_types) != set(datasets):
        return Reliability("task types unknown for some datasets (add a task_type column)", {})
    per_axis = {}
    for axis in axes:
        on_axis = covered(models, datasets, axis)
        per_axis[axis] = split_half_reliability(
            {m.model: {d: m.axes[axis][d] for d in on_axis} for m in models},
            {d: task_types[d] for d in on_axis},
            n_splits=n_splits,
            seed=seed,
        )
    return Reliability(None, per_axis)


def mean_deltas(
    models: Sequence[ModelScores], datasets: Sequence[str], names: Sequence[str]
) -> dict[str, dict[str, float]]:
    """Per model and column, the mean over the covered datasets of (column - Original)."""
    out = {}
    for m in models:
        out[m.model] = {
            n: float(np.mean([m.column(n)[d] - m.original[d] for d in covered(models, datasets, n)])) for n in names
        }
    return out


def compare(
    models: Sequence[ModelScores],
    *,
    force: bool = False,
    n_splits: int = 1000,
    seed: int = 0,
    ci_method: str = "walsh",
) -> Comparison:
    """Every analysis of the models on their common datasets.

    `seed` drives both the split-half splits and, with `ci_method="bootstrap"`, the resampling."""
    warnings = check_inputs(models, force=force)
    models, undefined = defined_scores(models)
    warnings += undefined
    datasets = common_datasets(models)
    if not datasets:
        raise HtebError("the inputs share no dataset with an Original score; nothing to compare")
    excluded = sorted({d for m in models for d in m.original} - set(datasets))
    if excluded:
        warnings.append(f"datasets not scored for every model were left out: {', '.join(excluded)}")
    columns = score_columns(models, datasets)
    for name in columns.names():
        n = len(covered(models, datasets, name))
        if n < len(datasets):
            warnings.append(f"{column_label(name)} is scored for every model on only {n} of {len(datasets)} datasets")
    return Comparison(
        models=list(models),
        forced=force,
        warnings=warnings,
        datasets=datasets,
        columns=columns,
        leaderboard=leaderboard(models, datasets, columns.axes),
        ranking_stability=ranking_stability(models, datasets, columns.names()),
        effects=transformation_effects(models, datasets, columns, ci_method=ci_method, seed=seed),
        reliability=reliability(models, datasets, columns.axes, n_splits=n_splits, seed=seed),
        mean_deltas=mean_deltas(models, datasets, columns.heatmap()),
    )
