"""The `statistics` block of one model's result card.

Only the per-dataset main scores (`subset == "all"`) enter, aggregated by `hteb_score.scoring.aggregate`:
seeds are averaged per dataset and transformation first, because runs of one dataset are repeated
measurements, not independent observations (paper Sec. 3). Every delta is transformed minus
original, in the unit of the records given.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from hteb_contract.errors import ContractError
from hteb_contract.taxonomy import Taxonomy
from hteb_score.scoring.aggregate import axis_columns, by_dataset, hteb_total, main_scores
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.stats.bootstrap import DEFAULT_RESAMPLES, percentile_bootstrap
from hteb_score.stats.edit_distance import normalised_word_edit_distance
from hteb_score.stats.hodges_lehmann import hodges_lehmann
from hteb_score.stats.holm import holm
from hteb_score.stats.ranking import spearman_rho, spearman_rows
from hteb_score.stats.wilcoxon import least_p, wilcoxon_signed_rank

MIN_QUALITY_ITEMS = 3
#: An item's drift as it is kept and read, and a pair's similarity as its order reads it: float32 embeddings
#: give about 7 significant digits, so values equal to 6 decimals are ties, not an order (and a part keeps
#: no digits beyond them).
DRIFT_DECIMALS = 6
#: How the statistics block was computed, as the card states it.
METHOD = {
    "unit": "dataset main score (subset 'all'), seeds averaged; delta = transformed - original",
    "test": "Wilcoxon signed-rank, two-sided, differences rounded to 9 decimals, zero differences dropped "
    "(Wilcoxon's rule)",
    "shift": "Hodges-Lehmann median of Walsh averages; 95% CI from exact signed-rank critical values (their normal "
    "approximation past 50 non-zero differences: ci_method walsh-normal)",
    "correction": "Holm step-down within each family (transformations; axes), the paper's and the Noise axis's apart",
    "drift": "1 - cos(emb(original), emb(transformed)) over the texts the transformation changed, in the subsets its "
    "figure counts (the card's one sign: item_measures reads drift too); Spearman with judge quality, 95% "
    "paired percentile bootstrap CI",
    "edit_distance": "word-level Levenshtein / word count of the longer text (PTEB)",
}
#: What `model_statistics(..., in_points=True)` puts before the method's unit.
POINTS_UNIT = "points (score x 100); "
DRIFT_POINT_DECIMALS = 4


def paired_effect(deltas: Sequence[float | None], *, ci_method: str = "walsh", seed: int = 0) -> dict[str, Any]:
    """HL shift + CI (Walsh, or seeded percentile bootstrap) + Wilcoxon p; Holm is added by the
    caller, over the family. An undefined delta (None, NaN, inf) leaves every number None and says
    why in `undefined`."""
    hl = hodges_lehmann(deltas, method=ci_method, seed=seed)
    test = wilcoxon_signed_rank(deltas)
    reason = hl.undefined or test.undefined
    defined = [d for d in deltas if d is not None]  # all of them unless `reason`
    with np.errstate(over="ignore"):
        entry = {
            "n_datasets": len(deltas),
            "mean_delta": None if reason else float(np.mean(defined)),
            "median_abs_delta": None if reason else float(np.median(np.abs(defined))),
            "hl_shift": hl.shift,
            "ci_low": hl.ci_low,
            "ci_high": hl.ci_high,
            "ci_confidence": hl.confidence,
            "ci_method": hl.method,
            "wilcoxon_statistic": test.statistic,
            "n_zero": test.n_zero,
            "p_value": test.p_value,
        }
    overflowed = [k for k, v in entry.items() if isinstance(v, float) and not math.isfinite(v)]
    if overflowed:  # finite differences too large for float arithmetic (sums of 1e308)
        entry.update(dict.fromkeys(overflowed, None))
        reason = f"{', '.join(overflowed)} overflowed: the differences are too large to average"
    return {**entry, **({"undefined": reason} if reason else {})}


def effect_least_p(effect: Mapping[str, Any]) -> float | None:
    """The least p a `paired_effect`'s exact signed-rank test can give the datasets that moved (n_datasets -
    n_zero; stats/wilcoxon.least_p); None where the effect does not count them."""
    total, zero = effect.get("n_datasets"), effect.get("n_zero")
    return None if total is None or zero is None else least_p(total - zero)


def add_holm(family: dict[str, dict[str, Any]], taxonomy: Taxonomy) -> None:
    """Holm-correct the `p_value`s of one family of tests in place (`p_holm`), the paper's names
    apart from Noise's: scoring noise variants too never changes the paper's corrected p-values."""
    for kept in (True, False):
        names = [n for n in family if taxonomy.in_total(n) == kept]
        for name, adjusted in zip(names, holm([family[n]["p_value"] for n in names])):
            family[name]["p_holm"] = adjusted


def _deltas(original: Mapping[str, float], transformed: Mapping[str, float]) -> list[float]:
    return [transformed[d] - original[d] for d in sorted(transformed) if d in original]


def drift_row(
    transformation: str,
    quality: float | None,
    original: str,
    transformed: str,
    drift: float,
    *,
    applicable: bool = True,
) -> dict[str, Any]:
    """What the drift statistics keep of one transformed text: its drift (to DRIFT_DECIMALS), judge quality and word
    edit distance, whether the transformation changed it and whether its subset is one the variant's
    figure counts (`applicable`, scoring/coverage.py), not the texts, so a run's drift rows stay small."""
    return {
        "transformation": transformation,
        "drift": round(drift, DRIFT_DECIMALS),
        "quality": quality,
        "edit_distance": normalised_word_edit_distance(original, transformed),
        "changed": original != transformed,
        "applicable": applicable,
    }


def counted(row: Mapping[str, Any]) -> bool:
    """Whether a drift row's text enters the drift figures: changed, in a subset the figure counts (an
    unchanged text has drift 0 and would read as robustness). A part written before either was
    recorded holds None for it: counted, as it was then."""
    return row.get("changed") is not False and row.get("applicable") is not False


def drift_statistics(
    drift: Sequence[Mapping[str, Any]], *, seed: int = 0, n_resamples: int = DEFAULT_RESAMPLES
) -> dict[str, Any]:
    """Per transformation: drift summary, Spearman(drift, judge quality) with a paired percentile
    bootstrap CI (None when fewer than 3 items carry a quality score), edit distance, and the
    (drift, quality) points for the Figure 3 scatter, over the `counted` texts (a transformation
    without one has no entry)."""
    by_t: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for record in drift:
        if counted(record):
            by_t[record["transformation"]].append(record)
    out: dict[str, Any] = {}
    for t in sorted(by_t):
        records = by_t[t]
        drifts = np.array([r["drift"] for r in records], dtype=float)
        edits = [r["edit_distance"] for r in records]
        rated = [(float(r["drift"]), float(r["quality"])) for r in records if r.get("quality") is not None]
        entry: dict[str, Any] = {
            "n_items": len(records),
            "drift_mean": float(drifts.mean()),
            "drift_median": float(np.median(drifts)),
            "edit_distance_mean": float(np.mean(edits)),
            "edit_distance_median": float(np.median(edits)),
            "n_rated": len(rated),
            "drift_quality_spearman": None,
            "drift_quality_ci_low": None,
            "drift_quality_ci_high": None,
            "points": None,
        }
        if len(rated) >= MIN_QUALITY_ITEMS:
            x, y = (np.array(v) for v in zip(*rated))
            rho = spearman_rho(x, y)
            if rho is not None:
                low, high = percentile_bootstrap(
                    spearman_rows, x, y, paired=True, n_resamples=n_resamples, seed=seed, vectorized=True
                )
                entry.update(
                    drift_quality_spearman=rho,
                    drift_quality_ci_low=None if np.isnan(low) else low,
                    drift_quality_ci_high=None if np.isnan(high) else high,
                )
            entry["points"] = {
                "drift": np.round(x, DRIFT_POINT_DECIMALS).tolist(),
                "quality": np.round(y, DRIFT_POINT_DECIMALS).tolist(),
            }
        out[t] = entry
    return out


def model_statistics(
    scores: Sequence[ScoreRecord], drift: list[dict], taxonomy: Taxonomy, *, in_points: bool = False
) -> dict:
    """The card's `statistics` block: effects per transformation, per axis (Noise's too) and for the
    HTEB total (HL shift, Walsh 95% CI, Wilcoxon p, Holm p within each family), plus drift vs
    quality; `total` is None when no paper axis was scored. `in_points`: the scores (0-1) are
    turned into points (x 100) here, and the method's unit says so."""
    method = {**METHOD, "unit": POINTS_UNIT + METHOD["unit"]} if in_points else dict(METHOD)
    main = main_scores([r.in_points() for r in scores] if in_points else scores, taxonomy)
    original, transformed = main.original, main.seed_means()
    if not original and main.skipped:  # every original score undefined (flagged): no effect to estimate
        return {
            "method": {"unit": method["unit"]},
            "per_transformation": {},
            "per_axis": {},
            "total": None,
            "drift": drift_statistics(drift),
            "undefined": "no dataset has a defined original main score (each is flagged undefined_score): "
            "no effect can be estimated",
        }
    if not original:
        raise ContractError("scores: no original main score (subset 'all'); cannot compute statistics")
    per_transformation = {
        t: paired_effect(_deltas(original, by_ds))
        for t, by_ds in sorted(transformed.items())
        if _deltas(original, by_ds)
    }
    add_holm(per_transformation, taxonomy)
    axes = axis_columns(transformed, taxonomy)
    per_axis = {a: paired_effect(_deltas(original, by_ds)) for a, by_ds in axes.items() if _deltas(original, by_ds)}
    add_holm(per_axis, taxonomy)
    for axis, entry in per_axis.items():
        pooled = [v for t in taxonomy.members[axis] for v in _deltas(original, transformed.get(t, {}))]
        entry["median_abs_delta_pooled"] = float(np.median(np.abs(pooled)))
    total_by_ds = {
        d: row_total
        for d, row in by_dataset(axes).items()
        if d in original and (row_total := hteb_total(row, taxonomy)) is not None
    }
    total = paired_effect(_deltas(original, total_by_ds)) if total_by_ds else None
    return {
        "method": method,
        "per_transformation": per_transformation,
        "per_axis": per_axis,
        "total": total,
        "drift": drift_statistics(drift),
    }
