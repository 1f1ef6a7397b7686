"""A comparison's files: comparison.json and comparison.md (what the `Comparison` renders itself),
report.html, the PNG plots and the Hugging Face model-index YAML, written together.

Kept apart from comparison.py so the plots and the HTML page can read a `Comparison` without the
comparison knowing them.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from pathlib import Path

from hteb_contract.common.atomic import atomic_write_bytes
from hteb_contract.common.escape import safe_filename
from hteb_score.report.compare import html_report
from hteb_score.report.compare import plots
from hteb_score.report.compare.comparison import Comparison
from hteb_score.report.card.model_index import hub_files
from hteb_score.strict_json import dumps


def figures(comparison: Comparison) -> dict[str, bytes]:
    """The PNG plots that apply: axis dumbbell always, the heat map when a model has a column
    beyond Original, drift vs judge quality when an input carries rated drift items."""
    basis = f"basis: {comparison.basis.description}"
    drawn = {
        "axis_dumbbell.png": plots.axis_dumbbell(
            comparison.leaderboard, comparison.leaderboard_axes(), comparison.taxonomy, title=basis
        )
    }
    if comparison.heatmap_columns:
        order, grid = comparison.heatmap_grid()
        drawn["delta_heatmap.png"] = plots.delta_heatmap(order, comparison.heatmap_columns, grid, title=basis)
    drift = plots.drift_vs_quality({m.model: m.drift for m in comparison.models if m.drift})
    if drift is not None:
        drawn["drift_quality.png"] = drift
    return {name: plots.png_bytes(figure) for name, figure in drawn.items()}


def model_index(comparison: Comparison) -> dict[str, str]:
    """Per result-card input, `model_index/<model>/model-index.yaml` and, for a revision on the
    Hub, `model_index/<model>/.eval_results/hteb-<label><tags>.yaml` (the path it takes in the model repo) and,
    for an ad hoc selection, `model_index/<model>/add-to-dataset-eval.yaml` (model_index.hub_files)."""
    files = {}
    folders = model_folders([m.model for m in comparison.models if m.card is not None])
    for m in comparison.models:
        if m.card is not None:
            files.update({f"model_index/{folders[m.model]}/{path}": text for path, text in hub_files(m).items()})
    return files


def save(comparison: Comparison, out_dir: Path) -> list[str]:
    """Write comparison.json, comparison.md, report.html, the plots and the model-index files into
    `out_dir` (created), each atomically and only once all of them are rendered; return what was
    written (files, and model-index folders as `model_index/<model>/`)."""
    result, markdown, pngs = comparison.to_json(), comparison.to_markdown(), figures(comparison)
    files = {
        "comparison.json": dumps(result, what="comparison").encode("utf-8"),
        "comparison.md": markdown.encode("utf-8"),
        "report.html": html_report.render(comparison, pngs).encode("utf-8"),
        **pngs,
    }
    files.update({path: text.encode("utf-8") for path, text in model_index(comparison).items()})
    out_dir.mkdir(parents=True, exist_ok=True)
    for path, data in files.items():
        atomic_write_bytes(out_dir / path, data)
    return list(dict.fromkeys(p.rsplit("/", 1)[0] + "/" if "/" in p else p for p in files))


def _slug(model: str) -> str:
    """The model's name in ASCII letters, digits and `._-`, as one safe folder name (`..` is none)."""
    return safe_filename(re.sub(r"[^A-Za-z0-9._-]+", "_", model).strip("_") or "model")


def model_folders(models: list[str]) -> dict[str, str]:
    """Model -> its folder name: the model's name in safe characters, and where two models spell
    one folder (`org/model` and `org_model`, two names in CJK script, `Org/M` and `org/m` on a
    case-insensitive disk) each gets its name's hash too, so no model's files land on another's.

    >>> model_folders(["org/model", "org_model", "other/one"])
    {'org/model': 'org_model-c87c0c64', 'org_model': 'org_model-500e8f24', 'other/one': 'other_one'}
    """
    slugs = {model: _slug(model) for model in models}
    taken = Counter(slug.lower() for slug in slugs.values())
    return {
        model: slug if taken[slug.lower()] == 1 else f"{slug}-{hashlib.sha256(model.encode()).hexdigest()[:8]}"
        for model, slug in slugs.items()
    }
