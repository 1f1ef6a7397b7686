"""Compare models on HTEB: leaderboard, ranking stability, transformation effects, reliability.

Inputs are result cards (one model each) or a plain scores table (many models); both become
`ModelScores` — per-dataset Original, per-transformation, per-axis and HTEB-total scores in
points — and everything after that is one code path, so a paper's tables and our own cards are
compared the same way. The analyses follow the paper's App. I (Table 13): leaderboard (Table 14),
Kendall tau per dataset summarised as mean +- sd (Table 4), HL shift / Wilcoxon / Holm on
model-averaged dataset deltas (Fig. 7) and split-half reliability per axis (Table 3).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hteb_contract.validation import validate
from hteb_contract.errors import ContractError, HtebError
from hteb_contract.taxonomy import AXES, AXIS_LABELS, AXIS_OF, TRANSFORMATIONS
from hteb_score.stats.hodges_lehmann import coverage_note
from hteb_score.stats.model import add_holm, paired_effect
from hteb_score.stats.ranking import kendall_tau, mean_sd
from hteb_score.stats.reliability import split_half_reliability

SCHEMA_VERSION = "hteb.comparison/1"
HTEB = "hteb"
TABLE_REQUIRED = ("model", "dataset", "original")


@dataclass
class ModelScores:
    """One model's per-dataset scores, whatever they were read from."""

    model: str
    source: str
    revision: str | None
    original: dict[str, float] = field(default_factory=dict)
    transformations: dict[str, dict[str, float]] = field(default_factory=dict)
    axes: dict[str, dict[str, float]] = field(default_factory=dict)
    hteb: dict[str, float] = field(default_factory=dict)
    task_types: dict[str, str] = field(default_factory=dict)
    drift: dict[str, Any] | None = None
    card: dict[str, Any] | None = None

    def column(self, name: str) -> dict[str, float]:
        """Per-dataset scores of a column: `hteb`, an axis or a transformation."""
        if name == HTEB:
            return self.hteb
        return self.axes.get(name) or self.transformations.get(name, {})

    def fill_derived(self) -> None:
        """Axis scores from transformations, and the HTEB total from the three axes, where missing."""
        for axis, members in AXES.items():
            derived = {
                d: _mean([self.transformations[t][d] for t in members if d in self.transformations.get(t, {})])
                for d in self.original
            }
            derived = {d: v for d, v in derived.items() if v is not None}
            if derived and axis not in self.axes:
                self.axes[axis] = derived
        for dataset in self.original:
            if dataset not in self.hteb and all(dataset in self.axes.get(a, {}) for a in AXES):
                self.hteb[dataset] = float(np.mean([self.axes[a][dataset] for a in AXES]))


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if values else None


# ---------------------------------------------------------------- inputs


def load_card(path: Path) -> ModelScores:
    """A result card (validated against the card schema) as ModelScores, from its per-dataset aggregates."""
    card = _read_json(path)
    validate("result_card", card, what=str(path))
    scores = ModelScores(card["model"]["model_id"], str(path), card["dataset"]["revision"], card=card)
    for record in card["scores"]:
        scores.task_types[record["dataset"]] = record["task_type"]
    for row in card["aggregates"]["per_dataset"]:
        dataset = row["dataset"]
        scores.original[dataset] = float(row["original"])
        for t, entry in row["transformations"].items():
            if t not in AXIS_OF:
                raise ContractError(f"{path}: unknown transformation {t!r}; known: {', '.join(TRANSFORMATIONS)}")
            scores.transformations.setdefault(t, {})[dataset] = float(entry["mean"])
    scores.fill_derived()
    statistics = card.get("statistics") or {}
    scores.drift = statistics.get("drift") or None
    return scores


def _read_json(path: Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HtebError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise HtebError(f"{path}: not readable JSON ({err})") from None


def _read_csv_rows(path: Path) -> list[dict[str, Any]]:
    try:
        with Path(path).open(encoding="utf-8", newline="") as f:
            return list(csv.DictReader(line for line in f if not line.startswith("#")))
    except FileNotFoundError:
        raise HtebError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise HtebError(f"{path}: not a readable CSV table ({err})") from None


def _read_json_rows(path: Path) -> list[dict[str, Any]]:
    rows = _read_json(path)
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ContractError(f"{path}: a JSON scores table must be a list of row objects")
    return rows


TABLE_READERS: dict[str, Callable[[Path], list[dict[str, Any]]]] = {".csv": _read_csv_rows, ".json": _read_json_rows}


def load_scores_table(path: Path) -> list[ModelScores]:
    """A plain per-dataset scores table (CSV or JSON; columns in `hteb-score compare --help`) as one ModelScores per model."""
    path = Path(path)
    reader = TABLE_READERS.get(path.suffix.lower())
    if reader is None:
        raise HtebError(f"{path}: unknown table format {path.suffix!r}; known: {', '.join(TABLE_READERS)}")
    rows = reader(path)
    if not rows:
        raise ContractError(f"{path}: the scores table has no rows")
    columns = set().union(*(r.keys() for r in rows))
    missing = [c for c in TABLE_REQUIRED if c not in columns]
    if missing:
        raise ContractError(f"{path}: missing column(s) {', '.join(missing)}; required: {', '.join(TABLE_REQUIRED)}")
    score_columns = [c for c in (HTEB, *AXES, *TRANSFORMATIONS) if c in columns]
    if not score_columns:
        raise ContractError(
            f"{path}: no HTEB score column; give at least one of {HTEB}, {', '.join(AXES)} or a transformation ({', '.join(TRANSFORMATIONS)})"
        )
    models: dict[str, ModelScores] = {}
    for line, row in enumerate(rows, start=1):
        name, dataset = str(row.get("model") or "").strip(), str(row.get("dataset") or "").strip()
        if not name or not dataset:
            raise ContractError(f"{path}: row {line} has an empty model or dataset")
        scores = models.setdefault(name, ModelScores(name, str(path), _text(row.get("revision"))))
        if dataset in scores.original:
            raise ContractError(f"{path}: row {line}: model {name!r} has dataset {dataset!r} twice")
        original = _number(row.get("original"), path, line, "original")
        if original is None:
            raise ContractError(f"{path}: row {line}: empty 'original' score")
        scores.original[dataset] = original
        if _text(row.get("task_type")):
            scores.task_types[dataset] = _text(row.get("task_type"))
        revision = _text(row.get("revision"))
        if revision != scores.revision:
            raise ContractError(
                f"{path}: model {name!r} has rows on different dataset revisions ({scores.revision} vs {revision})"
            )
        for column in score_columns:
            value = _number(row.get(column), path, line, column)
            if value is None:
                continue
            if column == HTEB:
                scores.hteb[dataset] = value
            elif column in AXES:
                scores.axes.setdefault(column, {})[dataset] = value
            else:
                scores.transformations.setdefault(column, {})[dataset] = value
    for scores in models.values():
        scores.fill_derived()
    return list(models.values())


def _text(value: Any) -> str | None:
    text = "" if value is None else str(value).strip()
    return text or None


def _number(value: Any, path: Path, line: int, column: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ContractError(f"{path}: row {line}: column {column!r} is not a number: {value!r}") from None
    if not math.isfinite(number):
        raise ContractError(f"{path}: row {line}: column {column!r} is not finite: {value!r}")
    return number


def check_inputs(models: Sequence[ModelScores], *, force: bool) -> list[str]:
    """Refuse duplicate models, and mixed dataset revisions unless forced; return the warnings."""
    if not models:
        raise HtebError("nothing to compare: give result cards and/or --scores-table")
    seen: dict[str, str] = {}
    for m in models:
        if m.model in seen:
            raise HtebError(f"model {m.model!r} appears twice ({seen[m.model]} and {m.source})")
        seen[m.model] = m.source
    revisions = sorted({m.revision for m in models if m.revision is not None})
    warnings = []
    if len(revisions) > 1:
        which = "; ".join(
            f"{revision}: {', '.join(m.model for m in models if m.revision == revision)}" for revision in revisions
        )
        if not force:
            raise HtebError(
                f"the inputs were scored on different dataset revisions ({which}); their scores are not comparable - pass --force to compare anyway"
            )
        warnings.append(
            f"FORCED: the inputs were scored on different dataset revisions ({which}); scores are not strictly comparable"
        )
    if len(models) < 2:
        warnings.append("only one model: rankings, Kendall tau and reliability need at least two (three) models")
    return warnings


# ---------------------------------------------------------------- analyses


def common_datasets(models: Sequence[ModelScores]) -> list[str]:
    """Datasets every model has an Original score for: the only fair basis for ranking."""
    sets = [set(m.original) for m in models]
    return sorted(set.intersection(*sets))


def covered(models: Sequence[ModelScores], datasets: Sequence[str], name: str) -> list[str]:
    """The common datasets on which every model has a score for column `name`."""
    return [d for d in datasets if all(d in m.column(name) for m in models)]


def _columns(models: Sequence[ModelScores], datasets: Sequence[str]) -> dict[str, list[str]]:
    """Transformations, axes and the total that every model has on at least one common dataset."""
    return {
        "transformations": [t for t in TRANSFORMATIONS if covered(models, datasets, t)],
        "axes": [a for a in AXES if covered(models, datasets, a)],
        "total": [HTEB] if covered(models, datasets, HTEB) else [],
    }


def _ranks(values: Mapping[str, float]) -> dict[str, int]:
    """Competition ranks, 1 = best (highest)."""
    return {k: 1 + sum(v > values[k] for v in values.values()) for k in values}


def leaderboard(models: Sequence[ModelScores], datasets: Sequence[str], axes: Sequence[str]) -> list[dict[str, Any]]:
    """Per model: Original, each axis and the HTEB total (mean of the axis means, as in Table 14;
    the mean of per-dataset totals when only totals are known), deltas and rank change."""
    rows = []
    for m in models:
        original = float(np.mean([m.original[d] for d in datasets]))
        axis_means = {a: float(np.mean([m.axes[a][d] for d in covered(models, datasets, a)])) for a in axes}
        totals = covered(models, datasets, HTEB)
        if len(axis_means) == len(AXES):
            total = float(np.mean(list(axis_means.values())))
        elif totals:
            total = float(np.mean([m.hteb[d] for d in totals]))
        else:
            total = None
        rows.append(
            {
                "model": m.model,
                "original": original,
                "axes": axis_means,
                "axis_deltas": {a: v - original for a, v in axis_means.items()},
                "hteb": total,
                "delta": None if total is None else total - original,
            }
        )
    rank_original = _ranks({r["model"]: r["original"] for r in rows})
    totals = {r["model"]: r["hteb"] for r in rows if r["hteb"] is not None}
    rank_hteb = _ranks(totals) if len(totals) == len(rows) else {}
    for r in rows:
        r["rank_original"] = rank_original[r["model"]]
        r["rank_hteb"] = rank_hteb.get(r["model"])
        r["rank_change"] = None if r["rank_hteb"] is None else r["rank_original"] - r["rank_hteb"]
    return sorted(rows, key=lambda r: (r["rank_hteb"] or r["rank_original"], r["model"]))


def ranking_stability(models: Sequence[ModelScores], datasets: Sequence[str], columns: Sequence[str]) -> dict[str, Any]:
    """Kendall tau between the models' Original and transformed scores, per dataset, per column;
    summarised as mean +- sample sd over datasets (Table 4)."""
    out = {}
    for name in columns:
        per_dataset = {
            d: kendall_tau([m.original[d] for m in models], [m.column(name)[d] for m in models])
            for d in covered(models, datasets, name)
        }
        out[name] = {**mean_sd(list(per_dataset.values())), "per_dataset": per_dataset}
    return out


def _model_mean_deltas(models: Sequence[ModelScores], datasets: Sequence[str], name: str) -> list[float]:
    return [
        float(np.mean([m.column(name)[d] - m.original[d] for m in models])) for d in covered(models, datasets, name)
    ]


def transformation_effects(
    models: Sequence[ModelScores],
    datasets: Sequence[str],
    columns: Mapping[str, list[str]],
    *,
    ci_method: str = "walsh",
    seed: int = 0,
) -> dict[str, Any]:
    """Fig. 7: per dataset, the model-averaged delta; HL shift + CI, Wilcoxon p, Holm p within each
    family (transformations; axes; total) and the median absolute delta (pooled within an axis)."""
    families: dict[str, dict[str, Any]] = {}
    for family, names in columns.items():
        effects = {
            name: paired_effect(_model_mean_deltas(models, datasets, name), ci_method=ci_method, seed=seed)
            for name in names
        }
        add_holm(effects)
        families[family] = effects
    for axis, entry in families["axes"].items():
        pooled = [
            v for t in AXES[axis] if t in columns["transformations"] for v in _model_mean_deltas(models, datasets, t)
        ]
        entry["median_abs_delta_pooled"] = float(np.median(np.abs(pooled))) if pooled else None
    return families


def reliability(
    models: Sequence[ModelScores], datasets: Sequence[str], axes: Sequence[str], *, n_splits: int, seed: int
) -> dict[str, Any]:
    """Split-half reliability per axis (Table 3), or the reason it could not be computed."""
    task_types: dict[str, str] = {}
    for m in models:
        task_types.update({d: t for d, t in m.task_types.items() if d in datasets})
    if not axes:
        return {"reason": "no per-axis scores in the inputs", "per_axis": {}}
    if set(task_types) != set(datasets):
        return {"reason": "task types unknown for some datasets (add a task_type column)", "per_axis": {}}
    per_axis = {}
    for axis in axes:
        on_axis = covered(models, datasets, axis)
        result = split_half_reliability(
            {m.model: {d: m.axes[axis][d] for d in on_axis} for m in models},
            {d: task_types[d] for d in on_axis},
            n_splits=n_splits,
            seed=seed,
        )
        per_axis[axis] = {"median_rho": result.median_rho, "n_splits": result.n_splits, "n_defined": result.n_defined}
    return {"reason": None, "per_axis": per_axis}


def compare(
    models: Sequence[ModelScores],
    *,
    force: bool = False,
    n_splits: int = 1000,
    seed: int = 0,
    ci_method: str = "walsh",
) -> dict[str, Any]:
    """The whole comparison as one JSON-ready dict (validated against comparison.v1).

    `seed` drives both the split-half splits and, with `ci_method="bootstrap"`, the resampling."""
    warnings = check_inputs(models, force=force)
    datasets = common_datasets(models)
    if not datasets:
        raise HtebError("the inputs share no dataset with an Original score; nothing to compare")
    excluded = sorted({d for m in models for d in m.original} - set(datasets))
    if excluded:
        warnings.append(f"datasets not scored for every model were left out: {', '.join(excluded)}")
    columns = _columns(models, datasets)
    for name in [c for names in columns.values() for c in names]:
        n = len(covered(models, datasets, name))
        if n < len(datasets):
            warnings.append(f"{_label(name)} is scored for every model on only {n} of {len(datasets)} datasets")
    result = {
        "schema_version": SCHEMA_VERSION,
        "inputs": [{"model": m.model, "source": m.source, "dataset_revision": m.revision} for m in models],
        "mixed_revisions": len({m.revision for m in models if m.revision is not None}) > 1,
        "forced": force,
        "warnings": warnings,
        "datasets": datasets,
        "columns": columns,
        "unit": "points (score x 100); delta = transformed - original",
        "leaderboard": leaderboard(models, datasets, columns["axes"]),
        "ranking_stability": ranking_stability(
            models, datasets, [*columns["transformations"], *columns["axes"], *columns["total"]]
        ),
        "effects": transformation_effects(models, datasets, columns, ci_method=ci_method, seed=seed),
        "reliability": reliability(models, datasets, columns["axes"], n_splits=n_splits, seed=seed),
    }
    validate("comparison", result, what="comparison")
    return result


# ---------------------------------------------------------------- Markdown


def _f(value: float | None, digits: int = 2, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"


def _p(value: float) -> str:
    return "<.001" if value < 0.001 else f"{value:.3f}"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _ci_method(result: Mapping[str, Any]) -> str:
    methods = {e["ci_method"] for effects in result["effects"].values() for e in effects.values()}
    return methods.pop() if len(methods) == 1 else "walsh"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _label(name: str) -> str:
    return "HTEB total" if name == HTEB else AXIS_LABELS.get(name, name.replace("_", " ").capitalize())


def render_markdown(result: Mapping[str, Any]) -> str:
    """The comparison as a Markdown report a reader can take in without the JSON."""
    out = ["# HTEB model comparison", ""]
    for warning in result["warnings"]:
        out.append(f"> **Warning:** {warning}")
    if result["warnings"]:
        out.append("")
    out += [
        f"{_count(len(result['inputs']), 'model')}, {_count(len(result['datasets']), 'dataset')}. Scores in points; deltas are HTEB minus Original.",
        "",
    ]
    axes = result["columns"]["axes"]
    header = ["#", "Model", "Original", *(f"{_label(a)} (Δ)" for a in axes), "HTEB total", "Δ", "Rank Original → HTEB"]
    out += ["## Leaderboard", "", _row(header), _row(["---"] * len(header))]
    for r in result["leaderboard"]:
        change = "-" if r["rank_change"] is None else f"{r['rank_original']} → {r['rank_hteb']} ({r['rank_change']:+d})"
        out.append(
            _row(
                [
                    str(r["rank_hteb"] or r["rank_original"]),
                    r["model"],
                    _f(r["original"]),
                    *(f"{_f(r['axes'][a])} ({_f(r['axis_deltas'][a], sign=True)})" for a in axes),
                    _f(r["hteb"]),
                    _f(r["delta"], sign=True),
                    change,
                ]
            )
        )
    out += [
        "",
        "## Ranking stability (Kendall τ, Original vs HTEB, per dataset)",
        "",
        "Mean ± sample SD of the per-dataset τ between the models' Original and transformed scores (paper Table 4).",
        "",
        "| Transformation / axis | mean τ | SD | datasets |",
        "|---|---|---|---|",
    ]
    for name, s in result["ranking_stability"].items():
        out.append(f"| {_label(name)} | {_f(s['mean'], 3)} | {_f(s['sd'], 3)} | {s['n']} |")
    ci_note = "a seeded percentile bootstrap" if _ci_method(result) == "bootstrap" else "a distribution-free"
    out += [
        "",
        "## Transformation effects across models (Hodges-Lehmann, Wilcoxon, Holm)",
        "",
        f"Unit: per dataset, the delta averaged over models. HL shift with {ci_note} 95% CI (not adjusted",
        "for multiple comparisons; a percentage beside a CI is the coverage it reaches where too few datasets",
        "differ for 95%); Wilcoxon signed-rank p, Holm-corrected within each family; |Δ̃| = median absolute delta",
        "(pooled over the axis's transformations for axes).",
        "",
        "| Family | Transformation / axis | HL shift | 95% CI | p (Holm) | median abs delta | datasets |",
        "|---|---|---|---|---|---|---|",
    ]
    for family, effects in result["effects"].items():
        for name, e in effects.items():
            abs_delta = (
                e.get("median_abs_delta_pooled")
                if e.get("median_abs_delta_pooled") is not None
                else e["median_abs_delta"]
            )
            out.append(
                f"| {family} | {_label(name)} | {_f(e['hl_shift'], sign=True)} | [{_f(e['ci_low'], sign=True)}, {_f(e['ci_high'], sign=True)}]{coverage_note(e.get('ci_confidence'))} | {_p(e['p_holm'])} | {_f(abs_delta)} | {e['n_datasets']} |"
            )
    rel = result["reliability"]
    out += ["", "## Split-half reliability of the per-axis profiles", ""]
    if rel["reason"]:
        out.append(f"Not computed: {rel['reason']}.")
    else:
        out += [
            "Median Spearman ρ between model scores on two task-stratified dataset halves (paper Table 3).",
            "",
            "| Axis | median ρ | splits (defined) |",
            "|---|---|---|",
        ]
        for axis, r in rel["per_axis"].items():
            out.append(f"| {_label(axis)} | {_f(r['median_rho'], 2, sign=True)} | {r['n_splits']} ({r['n_defined']}) |")
    out += ["", "## Inputs", "", "| Model | Source | Dataset revision |", "|---|---|---|"]
    out += [f"| {i['model']} | {i['source']} | {i['dataset_revision'] or '-'} |" for i in result["inputs"]]
    return "\n".join(out) + "\n"
