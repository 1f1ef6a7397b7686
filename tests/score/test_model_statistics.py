"""The card's statistics block, on per-dataset numbers from the paper and real STS-B sentences."""

from __future__ import annotations

import csv
import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from hteb_contract.taxonomy import INSTALLED
from hteb_contract.errors import ContractError
from hteb_score.stats.edit_distance import normalised_word_edit_distance
from hteb_score.stats.hodges_lehmann import hodges_lehmann
from hteb_score.stats.holm import holm
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.scoring.statistics import drift_row, model_statistics
from hteb_score.stats.wilcoxon import wilcoxon_signed_rank
from scipy import stats

PAPER = Path(__file__).resolve().parents[1] / "data" / "paper_tables.csv"


def paper_rows(model: str) -> list[dict]:
    with PAPER.open(encoding="utf-8") as f:
        return [r for r in csv.DictReader(line for line in f if not line.startswith("#")) if r["model"] == model]


def score_records(model: str) -> list[ScoreRecord]:
    """Card records: original from Table 17; two transformations built from the HTEB column
    (two seeds each, mean = HTEB -/+ a fixed offset) so the expected deltas are known."""
    records = []
    for row in paper_rows(model):
        base = {"dataset": row["dataset"], "task_type": row["task_type"], "metric": "main_score"}
        records.append(dict(base, subset="all", transformation="original", seed=None, value=float(row["original"])))
        records.append(dict(base, subset="en", transformation="original", seed=None, value=0.0))
        for t, offset in (("paraphrasing", 0.0), ("translation", -5.0)):
            for seed, jitter in ((1, -0.5), (2, 0.5)):
                records.append(
                    dict(base, subset="all", transformation=t, seed=seed, value=float(row["hteb"]) + offset + jitter)
                )
    return [ScoreRecord.from_json(r) for r in records]


def test_per_transformation_effects_match_direct_computation():
    model = "All-MiniLM-L12-v2"
    out = model_statistics(score_records(model), [], INSTALLED)
    rows = paper_rows(model)
    expected = {
        "paraphrasing": [float(r["hteb"]) - float(r["original"]) for r in sorted(rows, key=lambda r: r["dataset"])],
        "translation": [
            float(r["hteb"]) - 5.0 - float(r["original"]) for r in sorted(rows, key=lambda r: r["dataset"])
        ],
    }
    p = {}
    for t, deltas in expected.items():
        entry = out["per_transformation"][t]
        hl = hodges_lehmann(deltas)
        assert entry["n_datasets"] == 19
        assert entry["hl_shift"] == pytest.approx(hl.shift)
        assert (entry["ci_low"], entry["ci_high"]) == pytest.approx((hl.ci_low, hl.ci_high))
        assert entry["p_value"] == pytest.approx(stats.wilcoxon(np.round(deltas, 9)).pvalue)
        assert entry["median_abs_delta"] == pytest.approx(np.median(np.abs(deltas)))
        p[t] = wilcoxon_signed_rank(deltas).p_value
    assert [out["per_transformation"][t]["p_holm"] for t in p] == pytest.approx(holm(list(p.values())))
    assert out["per_transformation"]["paraphrasing"]["mean_delta"] == pytest.approx(53.88 - 66.36, abs=0.01)
    # lexical axis = paraphrasing alone; language axis = translation; total = mean of the two
    assert out["per_axis"]["lexical"]["hl_shift"] == pytest.approx(
        out["per_transformation"]["paraphrasing"]["hl_shift"]
    )
    assert out["total"]["mean_delta"] == pytest.approx(53.88 - 66.36 - 2.5, abs=0.01)
    json.dumps(out)  # the block goes into a JSON card


def stsb_pairs(shared_data: Path, n: int) -> list[tuple[str, str]]:
    folder = shared_data / "STSBenchmark"
    table = next(p for p in sorted(folder.glob("*.jsonl")))
    rows = [json.loads(line) for line in table.read_text(encoding="utf-8").splitlines()[:n]]
    return [(r["sentence1"], r["sentence2"]) for r in rows]


def _row(transformation: str, original: str, transformed: str, drift: float, quality: float | None) -> dict:
    """A drift row as the scorer makes it from a transformed item's record."""
    return drift_row(transformation, quality, original, transformed, drift)


def test_drift_quality_and_edit_distance(shared_data):
    pairs = stsb_pairs(shared_data, 30)
    drift = [
        _row("paraphrasing", a, b, 0.01 * i, float(10 - (i % 10)) if i % 3 else None) for i, (a, b) in enumerate(pairs)
    ]
    entry = model_statistics(score_records("Jasper-600M"), drift, INSTALLED)["drift"]["paraphrasing"]
    rated = [(d["drift"], d["quality"]) for d in drift if d["quality"] is not None]
    assert entry["n_items"] == 30 and entry["n_rated"] == len(rated)
    assert entry["drift_quality_spearman"] == pytest.approx(stats.spearmanr(*zip(*rated)).statistic)
    assert entry["drift_quality_ci_low"] <= entry["drift_quality_spearman"] <= entry["drift_quality_ci_high"]
    assert entry["edit_distance_mean"] == pytest.approx(
        np.mean([normalised_word_edit_distance(a, b) for a, b in pairs])
    )
    assert len(entry["points"]["drift"]) == len(rated)


def test_no_quality_scores_gives_none():
    drift = [_row("expansion", "a b", "a b c", 0.1 * i, None) for i in range(5)]
    entry = model_statistics(score_records("Jasper-600M"), drift, INSTALLED)["drift"]["expansion"]
    assert entry["drift_quality_spearman"] is None and entry["points"] is None
    assert entry["edit_distance_mean"] == pytest.approx(1 / 3)


def test_unknown_transformation_and_missing_original_are_contract_errors():
    records = score_records("Jasper-600M")
    with pytest.raises(ContractError, match="unknown transformation"):
        model_statistics(records + [dataclasses.replace(records[2], transformation="shouting")], [], INSTALLED)
    with pytest.raises(ContractError, match="no original"):
        model_statistics([r for r in records if r.transformation != "original"], [], INSTALLED)


def test_the_cards_effects_state_how_many_datasets_moved_and_the_least_p_so_many_can_give():
    """Each effect row of a committed card (the whole Noise revision's, 15 datasets) ends with its n (datasets
    moved, of those it rests on) and 2 / 2^n, the exact test's floor, computed here from the card's JSON."""
    import json
    from pathlib import Path

    from hteb_score.report.card.card import render_markdown

    folder = Path(__file__).resolve().parents[2] / "docs" / "findings" / "noise-1339" / "whole-revision"
    card = json.loads((folder / "all-MiniLM-L6-v2" / "result_card.json").read_text(encoding="utf-8"))
    markdown = render_markdown(card)
    effects = card["statistics"]["per_transformation"]
    assert effects and "| transformation | HL shift | 95% CI | p | p (Holm) | moved | least p |" in markdown
    for name, effect in effects.items():
        moved = effect["n_datasets"] - effect["n_zero"]
        floor = min(1.0, 2.0 ** (1 - moved))
        shown = "<0.001" if floor < 0.001 else f"{floor:.3f}"
        row = next(line for line in markdown.splitlines() if line.startswith(f"| {name} | ") and "[" in line)
        assert row.endswith(f"| {moved} of {effect['n_datasets']} | {shown} |"), row
        assert effect["p_value"] >= floor - 1e-12  # no p below the floor its n allows
