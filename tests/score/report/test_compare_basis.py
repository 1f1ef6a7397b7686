"""compare never shows a figure that differs from its card without saying so (issue 23 item 1):
a full and a filtered card of one model, compared on the common set and on each model's own."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cards import MODELS, make_card, write_card
from hteb_contract.taxonomy import INSTALLED
from hteb_contract.taxonomy import AXIS_OF, PAPER_AXES, TRANSFORMATIONS
from hteb_contract.validation import validate
from hteb_score.scoring.aggregate import aggregate
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.report.compare.analysis import compare
from hteb_score.report.compare.inputs import load_card
from hteb_score.report.compare.comparison import coverage_cell, figure_cell

MODEL = MODELS[0]
#: What the filter kept: per dataset index, the transformations left (cross_translation nowhere).
KEPT = {0: ["paraphrasing", "expansion", "translation"], 1: ["paraphrasing"], 2: ["style_change", "summarisation"]}


def filtered(card: dict) -> dict:
    """The card as `--min-judge 3` could leave it: fewer variants, datasets 3+ with none at all."""
    datasets = card["dataset"]["datasets"]
    keep = {(datasets[i], t) for i, ts in KEPT.items() for t in ts}
    scores = [
        r for r in card["scores"] if r["transformation"] == "original" or (r["dataset"], r["transformation"]) in keep
    ]
    out = dict(
        card,
        scores=scores,
        aggregates=aggregate([ScoreRecord.from_json(r) for r in scores], INSTALLED),
        selection={"preset": None, "min_judge": 3.0},
    )
    validate("result_card", out, what="filtered")
    return out


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    folder = tmp_path_factory.mktemp("basis")
    full = make_card(MODEL, datasets=6)
    (folder / "filtered").mkdir()
    return write_card(folder, full), write_card(folder / "filtered", filtered(full))


def test_on_the_common_set_each_differing_figure_has_its_card_beside_it(paths):
    comparison = compare([load_card(p) for p in paths], n_splits=10)
    result = comparison.to_json()
    assert result["basis"]["name"] == "common"
    rows = {r["model"]: r for r in result["leaderboard"]}
    full_card, filtered_card = (json.loads(p.read_text())["aggregates"] for p in paths)
    full, kept = rows[MODEL], rows[MODEL + " [judge>=3]"]
    # each row's card figures are its card's, exactly
    for row, agg in ((full, full_card), (kept, filtered_card)):
        assert (row["card"]["original"], row["card"]["hteb"], row["card"]["delta"]) == (
            agg["original"],
            agg["hteb_total"],
            agg["delta"],
        )
        assert row["card"]["axes"] == agg["per_axis"]
        assert row["card"]["axis_deltas"] == {a: p["delta"] for a, p in agg["axis_pairs"].items()}
    # the filtered card is the common set: its figures are its card's; the full card's differ, flagged
    assert not kept["differs_from_card"] and kept["hteb"] == filtered_card["hteb_total"]
    assert full["differs_from_card"] and full["hteb"] != pytest.approx(full_card["hteb_total"])
    # the full card's common figures, by hand: its per-dataset means on the cells the filter kept
    per_dataset = {r["dataset"]: r for r in full_card["per_dataset"]}
    names = list(per_dataset)
    axis = {
        a: {
            names[i]: np.mean([per_dataset[names[i]]["transformations"][t]["mean"] for t in ts if AXIS_OF[t] == a])
            for i, ts in KEPT.items()
            if any(AXIS_OF[t] == a for t in ts)
        }
        for a in PAPER_AXES
    }
    assert full["axes"] == pytest.approx({a: np.mean(list(v.values())) for a, v in axis.items()})
    for a, on in axis.items():
        original = np.mean([per_dataset[d]["original"] for d in on])
        assert full["axis_deltas"][a] == pytest.approx(full["axes"][a] - original)
    assert full["hteb"] == pytest.approx(np.mean([full["axes"][a] for a in PAPER_AXES]))
    assert full["original"] == pytest.approx(np.mean([per_dataset[names[i]]["original"] for i in KEPT]))
    assert full["coverage"]["variants"] == 6 and full["card"]["variants"] == 6 * 8


def test_every_transformation_any_card_holds_is_in_the_heat_map(paths):
    comparison = compare([load_card(p) for p in paths], n_splits=10)
    heat = comparison.to_json()["heatmap"]
    full_card, filtered_card = (json.loads(p.read_text())["aggregates"] for p in paths)
    assert heat["columns"] == list(full_card["per_transformation"]) == list(TRANSFORMATIONS[:8])
    cells, kept = heat["cells"][MODEL], heat["cells"][MODEL + " [judge>=3]"]
    for t in heat["columns"]:
        assert cells[t]["own"] == pytest.approx(full_card["per_transformation"][t]["delta"])
        assert kept[t]["own"] == (
            filtered_card["per_transformation"][t]["delta"] if t in filtered_card["per_transformation"] else None
        )
        assert cells[t]["delta"] == kept[t]["delta"]  # one card's cells are the other's on the common set
    assert cells["cross_translation"]["delta"] is None and cells["cross_translation"]["differs"]
    order, grid = comparison.heatmap_grid()
    assert grid == [[heat["cells"][m][t]["delta"] for t in heat["columns"]] for m in order]


def test_every_output_shows_the_card_figure_beside_a_differing_one(paths, tmp_path, run_cli):
    code, out, err = run_cli("compare", *paths, "--out", tmp_path / "cmp", "--splits", "10")
    assert code == 0, err
    result = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    full = next(r for r in result["leaderboard"] if r["model"] == MODEL)
    card_hteb = f"(card {full['card']['hteb']:.2f})"
    md = (tmp_path / "cmp" / "comparison.md").read_text()
    html = (tmp_path / "cmp" / "report.html").read_text()
    row = next(line for line in md.splitlines() if f"| {MODEL} † |" in line)
    assert (
        f"{full['hteb']:.2f} {card_hteb}" in row
        and f"{full['original']:.2f} (card {full['card']['original']:.2f})" in row
    )
    assert f"{full['hteb']:.2f} {card_hteb}" in html and "on the datasets x transformations all of them have" in html
    assert "`--basis common`" in md and f"{full['hteb']:.2f} {card_hteb}" in out and "basis common" in out
    heat_row = next(line for line in md.splitlines() if line.startswith(f"| {MODEL} |"))
    assert heat_row.count("(card ") == 8 and "| - (card " in heat_row  # cross_translation: missing here, not dropped


def test_on_each_models_own_set_the_figures_are_the_cards(paths):
    comparison = compare([load_card(p) for p in paths], n_splits=10, basis="own")
    result = comparison.to_json()
    assert result["basis"]["name"] == "own"
    assert any("the ranks compare different sets" in w for w in result["warnings"])
    for row, path in zip(sorted(result["leaderboard"], key=lambda r: len(r["model"])), paths, strict=True):
        agg = json.loads(path.read_text())["aggregates"]
        assert row["card"] is None and not row["differs_from_card"]
        assert (row["original"], row["hteb"], row["delta"], row["axes"]) == (
            agg["original"],
            agg["hteb_total"],
            agg["delta"],
            agg["per_axis"],
        )
    for r in comparison.leaderboard:
        assert "(card" not in figure_cell(r, "hteb") + coverage_cell(r)
