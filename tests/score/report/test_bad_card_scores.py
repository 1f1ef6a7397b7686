"""`compare` on cards holding undefined scores (issue 10): null scores of a current card are left
out, every output is written as strict JSON and the comparison says what was left out (never
comparison.json + .md followed by a matplotlib traceback); a bare NaN of a card an older
hteb-score wrote is refused in one line."""

from __future__ import annotations

import json
import math

import pytest
from cards import MODELS, make_card, write_card

from hteb_contract.taxonomy import INSTALLED
from hteb_contract.validation import validate
from hteb_score.scoring.aggregate import aggregate, aggregate_flags
from hteb_score.scoring.score_record import ScoreRecord

OUTPUTS = {"comparison.json", "comparison.md", "axis_dumbbell.png", "delta_heatmap.png"}


def _no_constant(name: str) -> None:
    raise ValueError(f"not strict JSON: {name}")


def _with_nulls(model: str, index: int, undefined: list[tuple[str, int | None]]) -> dict:
    """A card whose score records at the given (transformation, seed) of its first dataset are
    null, aggregated and flagged as build_card does."""
    card = make_card(model, model_index=index, datasets=8)
    first = card["scores"][0]["dataset"]
    for record in card["scores"]:
        if record["dataset"] == first and (record["transformation"], record["seed"]) in undefined:
            record["value"] = None
    records = [ScoreRecord.from_json(r) for r in card["scores"]]
    card["aggregates"] = aggregate(records, INSTALLED)
    card["flags"] = [f.to_json() for f in aggregate_flags(records, INSTALLED)]
    validate("result_card", card, what=model)
    return card


def _assert_all_written(out, code: int, err: str) -> dict:
    assert code == 0, err
    assert "Traceback" not in err
    assert OUTPUTS <= {p.name for p in out.iterdir()}
    result = json.loads((out / "comparison.json").read_text(encoding="utf-8"), parse_constant=_no_constant)
    validate("comparison", result, what="comparison")
    return result


@pytest.mark.parametrize(
    "undefined",
    [[("original", None)], [("paraphrasing", 1), ("translation", 2)]],
    ids=["original_null", "transformation_seeds_null"],
)
def test_flagged_compare_of_cards_with_null_scores(undefined, tmp_path, run_cli):
    cards = [write_card(tmp_path, _with_nulls(m, i, undefined if i == 0 else [])) for i, m in enumerate(MODELS[:3])]
    out = tmp_path / "out"
    code, _, err = run_cli("compare", *cards, "--out", out, "--splits", "5")
    result = _assert_all_written(out, code, err)
    assert any(f"{MODELS[0]}: its card carries" in w and "skipped_in_aggregates" in w for w in result["warnings"])
    if undefined == [("original", None)]:  # that dataset has no Original for one model: left out for all
        assert any("datasets not scored for every model were left out" in w for w in result["warnings"])


def test_refused_compare_of_an_older_card_with_bare_nan(tmp_path, run_cli):
    """A card written before strict JSON holds a bare NaN: no JSON reader reads it as a number, so the JSON
    door refuses it in one line naming the file, and nothing is written (rescore the model)."""
    card = make_card(MODELS[0], datasets=8)
    card["aggregates"]["per_dataset"][0]["original"] = math.nan
    old = tmp_path / "old.json"
    old.write_text(json.dumps(card), encoding="utf-8")  # Python's json writes the bare NaN
    assert "NaN" in old.read_text(encoding="utf-8")
    others = [write_card(tmp_path, make_card(m, model_index=i, datasets=8)) for i, m in enumerate(MODELS[1:3], 1)]
    out = tmp_path / "out"
    code, _, err = run_cli("compare", old, *others, "--out", out, "--splits", "5")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert f"{old}: not valid JSON (NaN is not a JSON number)" in err
    assert not out.exists()


def test_flagged_plots_skip_undefined_points():
    """The plot functions themselves, given undefined values: drawn without them."""
    from hteb_score.report.compare import plots
    from hteb_score.report.compare.comparison import LeaderboardRow

    rows = [
        LeaderboardRow("a", 80.0, {"lexical": math.nan, "language": 60.0}, None, 1, None),
        LeaderboardRow("b", math.nan, {"lexical": 70.0}, 65.0, 2, None),
    ]
    assert plots.png_bytes(plots.axis_dumbbell(rows, ["lexical", "language"], INSTALLED)).startswith(b"\x89PNG")
    heat = plots.delta_heatmap(["a", "b"], ["paraphrasing", "translation"], [[-1.0, None], [math.nan, 2.0]])
    assert plots.png_bytes(heat).startswith(b"\x89PNG")
    assert "n/a" in [t.get_text() for t in heat.axes[0].texts]
    drift = {"a": {"paraphrasing": {"points": {"drift": [0.1, math.nan, 0.3], "quality": [5.0, 4.0, None]}}}}
    assert plots.png_bytes(plots.drift_vs_quality(drift)).startswith(b"\x89PNG")
