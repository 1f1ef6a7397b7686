"""`compare --scores-table` on the paper's per-dataset Tables 17-19 reproduces Table 14's
per-model Original and HTEB-total averages to 0.01."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hteb_score.report.site.published import AVERAGE, published_rows

PAPER = Path(__file__).resolve().parents[2] / "data" / "paper_tables.csv"


def table_14() -> dict[str, tuple[float, float]]:
    """model -> (Original, HTEB total) of the paper's Table 14, as the leaderboard prints it (one typed-in table)."""
    return {
        r.model: (r.scores["original"], r.scores["hteb_total"])
        for r in published_rows()
        if r.scope == "english" and r.model != AVERAGE
    }


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    from hteb_score.cli import main

    out = tmp_path_factory.mktemp("paper")
    assert main(["compare", "--scores-table", str(PAPER), "--out", str(out), "--splits", "10"]) == 0
    return json.loads((out / "comparison.json").read_text(encoding="utf-8")), out


def test_table_14_original_and_hteb_columns(comparison):
    result, _ = comparison
    rows = {r["model"]: r for r in result["leaderboard"]}
    expected = table_14()
    assert len(expected) == 11 and set(rows) == set(expected)
    for model, (original, hteb) in expected.items():
        assert rows[model]["original"] == pytest.approx(original, abs=0.01), model
        assert rows[model]["hteb"] == pytest.approx(hteb, abs=0.01), model
    # the Average row of Table 14
    assert sum(r["original"] for r in rows.values()) / 11 == pytest.approx(69.73, abs=0.01)
    assert sum(r["hteb"] for r in rows.values()) / 11 == pytest.approx(61.32, abs=0.01)


def test_rank_changes_follow_from_the_table(comparison):
    result, out = comparison
    rows = {r["model"]: r for r in result["leaderboard"]}
    # NV-Embed-v2 is first on Original (73.34) but fourth on HTEB (after F2LLM, Qwen3, Jina)
    assert (
        rows["NV-Embed-v2"]["rank_original"],
        rows["NV-Embed-v2"]["rank_hteb"],
        rows["NV-Embed-v2"]["rank_change"],
    ) == (1, 4, -3)
    assert rows["F2LLM-v2-4B"]["rank_hteb"] == 1
    assert result["datasets"] and len(result["datasets"]) == 19
    assert result["ranking_stability"]["hteb"]["n"] == 19
    assert result["reliability"]["reason"] == "no per-axis scores in the inputs"
    assert (out / "axis_dumbbell.png").stat().st_size > 10_000
    # rank, model, its rank interval and group (model against model), then the HTEB figure
    assert re.search(r"\| 1 \| F2LLM-v2-4B \| [^|]+ \| 73\.00 \|", (out / "comparison.md").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_bootstrap_ci_option(tmp_path):
    from hteb_score.cli import main
    from hteb_score.stats.hodges_lehmann import hodges_lehmann

    out = tmp_path / "boot"
    assert (
        main(
            [
                "compare",
                "--scores-table",
                str(PAPER),
                "--out",
                str(out),
                "--splits",
                "5",
                "--ci",
                "bootstrap",
                "--seed",
                "3",
            ]
        )
        == 0
    )
    effect = json.loads((out / "comparison.json").read_text(encoding="utf-8"))["effects"]["total"]["hteb"]
    assert effect["ci_method"] == "bootstrap"
    assert effect["ci_low"] < effect["hl_shift"] < effect["ci_high"]
    assert "seeded percentile bootstrap" in (out / "comparison.md").read_text(encoding="utf-8")
    # the same deltas through the statistics module give the same interval
    import csv

    with PAPER.open(encoding="utf-8") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    datasets = sorted({r["dataset"] for r in rows})
    deltas = [sum(float(r["hteb"]) - float(r["original"]) for r in rows if r["dataset"] == d) / 11 for d in datasets]
    expected = hodges_lehmann(deltas, method="bootstrap", seed=3)
    assert (effect["ci_low"], effect["ci_high"]) == pytest.approx((expected.ci_low, expected.ci_high))
