"""Schema-valid result cards for the comparison tests, built from the paper's per-dataset numbers.

Original scores are the paper's (Tables 17-19). The paper gives only the HTEB total per dataset,
so per-transformation scores are set to HTEB + a fixed per-transformation offset (two seeds at
+-0.3 around it): known numbers, so the expected axis and total scores are known too. As in a
real card, the score records are on the 0-1 scale and the `aggregates` block is `aggregate(INSTALLED)`'s.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
from hteb_contract.taxonomy import INSTALLED
from hteb_contract.taxonomy import AXIS_OF
from hteb_contract.validation import validate
from hteb_score.scoring.aggregate import POINTS, aggregate
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.scoring.statistics import model_statistics

PAPER = Path(__file__).resolve().parents[2] / "data" / "paper_tables.csv"
MODELS = ["All-MiniLM-L12-v2", "Jasper-600M", "Qwen3-Emb-8B", "NV-Embed-v2", "Llama-Nemotron-8B"]
OFFSETS = {
    "paraphrasing": 2.0,
    "backtranslation": 3.0,
    "style_change": 1.0,
    "expansion": 0.5,
    "summarisation": 1.5,
    "summarised_expansion": -1.0,
    "translation": -3.0,
    "cross_translation": -4.0,
}


def paper_rows() -> list[dict[str, str]]:
    with PAPER.open(encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def transformation_score(row: dict[str, str], t: str, model_index: int) -> float:
    """HTEB total + offset, with a model-dependent tilt on the language axis so rankings move."""
    tilt = 0.8 * model_index if AXIS_OF[t] == "language" else 0.0
    return float(row["hteb"]) + OFFSETS[t] - tilt


def make_card(
    model: str,
    *,
    revision: str = "sha256:" + "a" * 64,
    datasets: int | None = None,
    drift: list[dict[str, Any]] | None = None,
    model_index: int = 0,
) -> dict[str, Any]:
    rows = [r for r in paper_rows() if r["model"] == model][:datasets]
    points = []  # score records in points, as the statistics block reads them
    for row in rows:
        base = {"dataset": row["dataset"], "task_type": row["task_type"], "metric": "main_score", "subset": "all"}
        points.append({**base, "transformation": "original", "seed": None, "value": float(row["original"])})
        for t in OFFSETS:
            mean = transformation_score(row, t, model_index)
            for seed, jitter in ((1, -0.3), (2, 0.3)):
                points.append({**base, "transformation": t, "seed": seed, "value": mean + jitter})
    scores = [dict(r, value=r["value"] / POINTS) for r in points]
    card = {
        "schema_version": "hteb.card/1",
        "model": {"model_id": model, "revision": "0" * 40, "embedding_dim": 768, "similarity": "cosine"},
        "encode": {"batch_size": 32, "dtype": "float32", "normalize": True, "device": "cpu", "prompts": {}},
        "dataset": {
            "repo_id": "hteb/sample",
            "label": "sample-v1",
            "revision": revision,
            "datasets": [r["dataset"] for r in rows],
        },
        "hteb_score_version": "0.1.0",
        "protocol": "hteb",
        "evaluation": {
            "protocol": "hteb",
            "description": "the HTEB paper's evaluation",
            "mteb_version": None,
            "datasets": {},
        },
        "on_error": "original",
        "package_versions": {"numpy": np.__version__},
        "scores": scores,
        "aggregates": aggregate([ScoreRecord.from_json(s) for s in scores], INSTALLED),
        "error_policy": [],
        "statistics": model_statistics([ScoreRecord.from_json(p) for p in points], drift or [], INSTALLED),
        "timings": {"total_s": 1.0},
        "created": "2026-11-22T21:00:00Z",
    }
    validate("result_card", card, what=model)
    return card


def write_card(folder: Path, card: dict[str, Any]) -> Path:
    path = folder / f"{card['model']['model_id']}.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


def big_card(model: str, datasets: int, shift: float, rng: np.random.Generator) -> dict:
    """A schema-valid card of `datasets` STS datasets, its aggregates its records' (no statistics block)."""
    card = make_card(MODELS[0], datasets=1)
    names = [f"D{i:04d}" for i in range(datasets)]
    points = []
    for name in names:
        base = {"dataset": name, "task_type": "STS", "metric": "main_score", "subset": "all"}
        original = float(rng.uniform(40, 90))
        points.append({**base, "transformation": "original", "seed": None, "value": original})
        points.append(
            {**base, "transformation": "paraphrasing", "seed": 1, "value": original - shift + float(rng.normal(0, 1))}
        )
    card["scores"] = [dict(r, value=r["value"] / POINTS) for r in points]
    card["aggregates"] = aggregate([ScoreRecord.from_json(r) for r in card["scores"]], INSTALLED)
    card["statistics"] = None
    card["model"]["model_id"] = model
    card["dataset"]["datasets"] = names
    validate("result_card", card, what=model)
    return card
