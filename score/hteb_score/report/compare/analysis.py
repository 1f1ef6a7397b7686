"""The analyses of a comparison (paper App. I, Table 13), from `ModelScores` to a `Comparison`.

Leaderboard (Table 14), Kendall tau per dataset summarised as mean +- sd (Table 4), HL shift /
Wilcoxon / Holm on model-averaged dataset deltas (Fig. 7), split-half reliability per axis
(Table 3) and the per-model mean deltas of the heat map (Fig. 6). Only datasets every model has
an Original score for enter, and the statistics across models rest on the cells every model has. An undefined score (null or NaN in a card or table) is left out
before any analysis, with a warning naming the model and how many; a card's flags are counted too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from hteb_contract.errors import HtebError
from hteb_contract.taxonomy import Taxonomy
from hteb_score.report.compare.basis import BASES, Basis, common_views, figures, mean_delta, own_views
from hteb_score.report.compare.chance import chance_rows
from hteb_score.report.compare.coverage_rows import coverage_rows, recorded
from hteb_score.report.compare.comparison import (
    Comparison,
    HeatCell,
    LeaderboardRow,
    Reliability,
    ScoreColumns,
    Stability,
    defines_total,
)
from hteb_score.report.formatting import column_label
from hteb_score.report.compare.inputs import check_inputs
from hteb_score.report.compare.lead import Lead, build_lead, lead_axis
from hteb_score.report.compare.pairwise import pairwise_rankings
from hteb_score.report.compare.per_dataset import per_dataset_tests
from hteb_score.scoring.model_scores import HTEB, ModelScores, joined_taxonomy
from hteb_score.scoring.statistics import add_holm, paired_effect
from hteb_score.stats.ranking import kendall_tau, mean_sd
from hteb_score.stats.rank_null import reliability_chance, stability_chance
from hteb_score.stats.reliability import split_half_reliability


def _defined(column: Mapping[str, float | None]) -> dict[str, float]:
    return {d: v for d, v in column.items() if v is not None and math.isfinite(v)}


def defined_scores(models: Sequence[ModelScores]) -> tuple[list[ModelScores], list[str]]:
    """The models with every undefined score (None, NaN, inf) left out, and a warning per model
    that had any or whose card carries flags."""
    out, warnings = [], []
    for m in models:
        kept = replace(
            m,
            original=_defined(m.original),
            hteb=_defined(m.hteb),
            transformations={t: _defined(c) for t, c in m.transformations.items()},
            axes={a: _defined(c) for a, c in m.axes.items()},
        )
        dropped = sum(len(c) for c in (m.original, m.hteb, *m.transformations.values(), *m.axes.values())) - sum(
            len(c) for c in (kept.original, kept.hteb, *kept.transformations.values(), *kept.axes.values())
        )
        if dropped:
            warnings.append(f"{m.model}: {dropped} undefined score(s) (null or NaN) left out")
        flags = (m.card or {}).get("flags") or []
        if flags:
            codes = sorted({f["code"] for f in flags})
            warnings.append(
                f"{m.model}: its card carries {len(flags)} flag(s) ({', '.join(codes)}); see its result_card.md"
            )
        out.append(kept)
    return out, warnings


def common_datasets(models: Sequence[ModelScores]) -> list[str]:
    """Datasets every model has an Original score for: the only fair basis for ranking."""
    return sorted(set.intersection(*(set(m.original) for m in models)))


def covered(models: Sequence[ModelScores], datasets: Sequence[str], name: str) -> list[str]:
    """The common datasets on which every model has a score for column `name`."""
    return [d for d in datasets if all(d in m.column(name) for m in models)]


def score_columns(models: Sequence[ModelScores], datasets: Sequence[str], taxonomy: Taxonomy) -> ScoreColumns:
    """Transformations, axes and the total that every model has on at least one common dataset."""
    return ScoreColumns(
        transformations=[t for t in taxonomy.transformations if covered(models, datasets, t)],
        axes=[a for a in taxonomy.members if covered(models, datasets, a)],
        total=[HTEB] if covered(models, datasets, HTEB) else [],
    )


def _ranks(values: Mapping[str, float]) -> dict[str, int]:
    """Competition ranks, 1 = best (highest)."""
    return {k: 1 + sum(v > values[k] for v in values.values()) for k in values}


def leaderboard(
    views: Sequence[ModelScores], own: Sequence[ModelScores], basis: Basis, chance: Mapping[str, str] | None = None
) -> list[LeaderboardRow]:
    """Per model: its `figures` on the basis's `views` (Original, each axis with Noise's, the HTEB total),
    ranked, best on HTEB first; beside them its own figures (`own`: all it has, as its card says)
    where the basis is not already those. The `chance` rows (model -> label) are shown last without a rank
    (a model below one counts it, as model against model does)."""
    chance = chance or {}
    shown = {m.model: figures(m) for m in views}
    cards = {m.model: figures(m) for m in own}
    totals = {name: f.hteb for name, f in shown.items() if f.hteb is not None}
    rank_original = {
        name: rank for name, rank in _ranks({n: f.original for n, f in shown.items()}).items() if name not in chance
    }
    rank_hteb = {
        name: rank for name, rank in (_ranks(totals) if len(totals) == len(shown) else {}).items() if name not in chance
    }
    rows = [
        LeaderboardRow(
            name,
            f.original,
            f.axes,
            f.hteb,
            rank_original.get(name),
            rank_hteb.get(name),
            figures=f,
            card=None if basis.views is own_views else cards[name],
            chance=chance.get(name),
        )
        for name, f in shown.items()
    ]
    return sorted(rows, key=lambda r: (r.chance is not None, r.rank_hteb or r.rank_original or 0, r.model))


def lead(
    views: Sequence[ModelScores],
    board: Sequence[LeaderboardRow],
    taxonomy: Taxonomy,
    *,
    ci_method: str = "walsh",
    seed: int = 0,
) -> Lead | None:
    """Where no model has an HTEB total: the models ranked on the first axis beside the total that
    every one has (Noise), with the margin of the first over the next; None where a total is defined
    or no such axis is scored. Chance rows are no model of it (a model below one counts it in its rank)."""
    if defines_total(board):
        return None
    axis = lead_axis([r.axes for r in board], [a for a in taxonomy.members if not taxonomy.in_total(a)])
    if axis is None:
        return None
    ranks = _ranks({r.model: r.axes[axis] for r in board})
    models = [r for r in board if r.chance is None]
    return build_lead(
        axis,
        {r.model: r.axes[axis] for r in models},
        {r.model: r.axis_deltas[axis] for r in models},
        {r.model: r.original for r in models},
        {r.model: r.rank_original for r in models if r.rank_original is not None},
        {r.model: ranks[r.model] for r in models},
        {m.model: m.axes.get(axis, {}) for m in views},
        lambda differences: paired_effect(differences, ci_method=ci_method, seed=seed),
    )


def heatmap(
    views: Sequence[ModelScores], own: Sequence[ModelScores], taxonomy: Taxonomy
) -> tuple[list[str], dict[str, dict[str, HeatCell]]]:
    """The heat map: every transformation any model has (failing those every axis, then the total),
    each cell the mean delta on the basis's scores beside the model's own (missing: None, kept)."""
    names = (
        [t for t in taxonomy.transformations if any(m.transformations.get(t) for m in own)]
        or [a for a in taxonomy.members if any(m.axes.get(a) for m in own)]
        or ([HTEB] if any(m.hteb for m in own) else [])
    )
    cells = {}
    for view, model in zip(views, own, strict=True):
        cells[model.model] = {n: HeatCell(*mean_delta(view, n), *mean_delta(model, n)) for n in names}
    return names, cells


def ranking_stability(
    models: Sequence[ModelScores], datasets: Sequence[str], columns: Sequence[str], *, seed: int
) -> dict[str, Stability]:
    """Kendall tau between the models' Original and transformed scores, per dataset, per column;
    summarised as mean +- sample sd over datasets (Table 4), with where the mean stands among random
    reorderings of the models (stats/rank_null.py)."""
    out = {}
    for name in columns:
        on = covered(models, datasets, name)
        original = np.array([[m.original[d] for m in models] for d in on]).reshape(len(on), len(models))
        transformed = np.array([[m.column(name)[d] for m in models] for d in on]).reshape(len(on), len(models))
        per_dataset = {d: kendall_tau(original[i], transformed[i]) for i, d in enumerate(on)}
        summary = mean_sd(list(per_dataset.values()))
        chance = stability_chance(original, transformed, summary["mean"], seed=seed)
        out[name] = Stability(**summary, per_dataset=per_dataset, chance=chance)
    return out


def _model_mean_deltas(models: Sequence[ModelScores], datasets: Sequence[str], name: str) -> list[float]:
    return [
        float(np.mean([m.column(name)[d] - m.original[d] for m in models])) for d in covered(models, datasets, name)
    ]


def transformation_effects(
    models: Sequence[ModelScores],
    datasets: Sequence[str],
    columns: ScoreColumns,
    taxonomy: Taxonomy,
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
        add_holm(effects, taxonomy)
        families[family] = effects
    for axis, entry in families["axes"].items():
        members = [t for t in taxonomy.members[axis] if t in columns.transformations]
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
    if len(models) < 3:  # a Spearman rho over two models is +1 or -1 whatever the data
        return Reliability(
            f"split-half reliability needs three models or more, and this comparison ranks {len(models)}", {}
        )
    if set(task_types) != set(datasets):
        return Reliability("task types unknown for some datasets (add a task_type column)", {})
    per_axis, chance = {}, {}
    for axis in axes:
        on_axis = covered(models, datasets, axis)
        scores = {m.model: {d: m.axes[axis][d] for d in on_axis} for m in models}
        types = {d: task_types[d] for d in on_axis}
        per_axis[axis] = split_half_reliability(scores, types, n_splits=n_splits, seed=seed)
        chance[axis] = reliability_chance(scores, types, per_axis[axis].median_rho, n_splits=n_splits, seed=seed)
    return Reliability(None, per_axis, chance)


def compare(
    models: Sequence[ModelScores],
    *,
    force: bool = False,
    n_splits: int = 1000,
    seed: int = 0,
    ci_method: str = "walsh",
    basis: str = "common",
) -> Comparison:
    """Every analysis of the models on their common datasets; the leaderboard and the heat map on
    the `basis` chosen (`hteb_score.report.compare.basis`), each model's own figures beside.

    `seed` drives both the split-half splits and, with `ci_method="bootstrap"`, the resampling."""
    rule = BASES.get(basis)
    warnings = check_inputs(models, force=force)
    taxonomy = joined_taxonomy(models)  # each card's own axes, together
    models, undefined = defined_scores(models)
    warnings += undefined
    datasets = common_datasets(models)
    if not datasets:
        raise HtebError("the inputs share no dataset with an Original score; nothing to compare")
    excluded = sorted({d for m in models for d in m.original} - set(datasets))
    if excluded:
        warnings.append(f"datasets not scored for every model were left out: {', '.join(excluded)}")
    common = common_views(models, datasets)
    columns = score_columns(common, datasets, taxonomy)
    for name in columns.names():
        n = len(covered(common, datasets, name))
        if n < len(datasets):
            warnings.append(f"{column_label(name)} is scored for every model on only {n} of {len(datasets)} datasets")
    views = rule.views(models, datasets)
    chance = chance_rows(models)
    board = leaderboard(views, models, rule, chance)
    differ = [r.model for r in board if r.differs_from_card]
    if differ:
        warnings.append(
            f"on the {rule.name} basis, the figures of {', '.join(differ)} differ from their cards' (both are shown)"
        )
    if (
        rule.views is own_views
        and len({(r.figures.datasets, r.figures.variants) for r in board if r.figures is not None}) > 1
    ):
        warnings.append(
            "on the own basis the models rest on different datasets or variants: the ranks compare different sets"
        )
    headline = lead(views, board, taxonomy, ci_method=ci_method, seed=seed)
    if headline is not None:  # ranked by the axis the result leads with
        board = sorted(board, key=lambda r: (r.chance is not None, headline.ranks.get(r.model, 0), r.model))
    names, cells = heatmap(views, models, taxonomy)
    rankings = pairwise_rankings(common, [*columns.axes, *columns.total], ci_method=ci_method, seed=seed, chance=chance)
    across = [m for m in common if m.model not in chance]  # the statistics across models: no chance row
    return Comparison(
        models=list(models),
        forced=force,
        warnings=warnings,
        datasets=datasets,
        columns=columns,
        leaderboard=board,
        ranking_stability=ranking_stability(across, datasets, columns.names(), seed=seed),
        effects=transformation_effects(across, datasets, columns, taxonomy, ci_method=ci_method, seed=seed),
        reliability=reliability(across, datasets, columns.axes, n_splits=n_splits, seed=seed),
        basis=rule,
        heatmap_columns=names,
        heatmap=cells,
        taxonomy=taxonomy,
        lead=headline,
        pairwise=rankings,
        per_dataset=per_dataset_tests(
            common, {c: [(p.first, p.second) for p in r.all_pairs] for c, r in rankings.items()}, datasets, seed=seed
        ),
        coverage=coverage_rows((m.model, m.card) for m in models),
        coverage_stated=recorded(m.card for m in models),
    )
