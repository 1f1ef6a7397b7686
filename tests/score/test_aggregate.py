"""Aggregation as docs/scoring.md states it, on a worked example computed by hand."""

from __future__ import annotations

import pytest

from hteb_contract.taxonomy import INSTALLED
from hteb_contract.errors import ContractError
from hteb_score.scoring.aggregate import POINTS, aggregate, axis_columns, main_scores, paired_level
from hteb_score.report.card.card import render_markdown
from hteb_score.scoring.score_record import ScoreRecord


def _rec(dataset, transformation, seed, value, subset="all"):
    return ScoreRecord(dataset, "STS", subset, transformation, seed, "spearman", value)


SCORES = [
    _rec("A", "original", None, 0.80),
    _rec("A", "paraphrasing", 1337, 0.70),
    _rec("A", "paraphrasing", 1338, 0.60),
    _rec("A", "style_change", 1337, 0.50),
    _rec("A", "style_change", 1338, 0.70),
    _rec("A", "expansion", 1337, 0.40),
    _rec("A", "expansion", 1338, 0.40),
    _rec("A", "translation", 1337, 0.20),
    _rec("A", "translation", 1338, 0.30),
    _rec("B", "original", None, 0.50),
    _rec("B", "paraphrasing", 1337, 0.45),
    _rec("B", "paraphrasing", 1338, 0.45),
    _rec("B", "summarisation", 1337, 0.30),
    _rec("B", "summarisation", 1338, 0.40),
    _rec("B", "cross_translation", 1337, 0.10),
    _rec("B", "cross_translation", 1338, 0.20),
    _rec("B", "paraphrasing", 1337, 0.99, subset="eng"),  # subset rows never enter aggregates
]


def test_worked_example():
    agg = aggregate(SCORES, INSTALLED)
    a, b = agg["per_dataset"]
    assert a["original"] == pytest.approx(80.0)
    assert a["transformations"]["paraphrasing"]["mean"] == pytest.approx(65.0)
    assert a["transformations"]["paraphrasing"]["sd"] == pytest.approx(7.0710678)  # sample sd of 70, 60
    assert a["transformations"]["paraphrasing"]["delta"] == pytest.approx(-15.0)
    # lexical = mean(65, 60) = 62.5; length = 40; language = 25; HTEB = 42.5
    assert a["axes"] == pytest.approx({"lexical": 62.5, "length": 40.0, "language": 25.0})
    assert a["hteb"] == pytest.approx(42.5) and a["delta"] == pytest.approx(-37.5)
    # per seed: 1337 -> mean(mean(70,50)=60, 40, 20) = 40; 1338 -> mean(65, 40, 30) = 45
    assert a["hteb_sd"] == pytest.approx(3.5355339)
    assert b["axes"] == pytest.approx({"lexical": 45.0, "length": 35.0, "language": 15.0})
    assert b["hteb"] == pytest.approx(95.0 / 3)
    assert agg["per_axis"] == pytest.approx({"lexical": 53.75, "length": 37.5, "language": 20.0})
    assert agg["original"] == pytest.approx(65.0)
    assert agg["hteb_total"] == pytest.approx((53.75 + 37.5 + 20.0) / 3)
    assert agg["delta"] == pytest.approx(agg["hteb_total"] - 65.0)
    assert agg["per_transformation"]["paraphrasing"]["mean"] == pytest.approx(55.0)
    assert agg["per_transformation"]["paraphrasing"]["datasets"] == 2
    assert list(agg["per_transformation"]) == [
        "paraphrasing",
        "style_change",
        "expansion",
        "summarisation",
        "translation",
        "cross_translation",
    ]


def test_original_only():
    agg = aggregate([_rec("A", "original", None, 0.5)], INSTALLED)
    assert agg["original"] == pytest.approx(50.0)
    assert agg["hteb_total"] is None and agg["delta"] is None and agg["per_dataset"][0]["hteb"] is None


def test_column_form_gives_the_same_numbers():
    """The form `compare` and the statistics use: {column: {dataset: score}}."""
    agg = aggregate(SCORES, INSTALLED)
    main = main_scores(SCORES, INSTALLED, scale=POINTS)
    axes = axis_columns(main.seed_means(), INSTALLED)
    assert axes == {a: {row["dataset"]: row["axes"][a] for row in agg["per_dataset"]} for a in agg["per_axis"]}
    model = paired_level(main.original, axes, INSTALLED)
    assert (model.original, model.hteb) == (agg["original"], agg["hteb_total"])
    assert {a: p.score for a, p in model.axes.items()} == agg["per_axis"]


def test_records_scored_twice_or_unknown_are_contract_errors():
    with pytest.raises(ContractError, match="two main scores for dataset 'A', paraphrasing seed 1337"):
        aggregate(SCORES + [_rec("A", "paraphrasing", 1337, 0.1)], INSTALLED)
    with pytest.raises(ContractError, match="two original main scores"):
        aggregate(SCORES + [_rec("A", "original", None, 0.1)], INSTALLED)
    with pytest.raises(ContractError, match="unknown transformation 'paraphrase' \\(did you mean 'paraphrasing'"):
        aggregate(SCORES + [_rec("A", "paraphrase", 1, 0.1)], INSTALLED)


#: A filtered card's shape: C has no transformed score left, D only a translation (issue 23 item 2).
PARTIAL = SCORES + [
    _rec("C", "original", None, 0.90),
    _rec("D", "original", None, 0.30),
    _rec("D", "translation", 1337, 0.60),
]


def test_a_partial_card_pairs_each_figure_with_the_original_of_its_datasets():
    agg = aggregate(PARTIAL, INSTALLED)
    assert agg["datasets"] == 4 and agg["original_all"] == pytest.approx((80 + 50 + 90 + 30) / 4)
    # the HTEB total rests on A, B, D (C has no transformed score): its Original is theirs
    assert agg["hteb_datasets"] == 3 and agg["original"] == pytest.approx((80 + 50 + 30) / 3)
    assert agg["delta"] == pytest.approx(agg["hteb_total"] - agg["original"])
    lexical, language = agg["axis_pairs"]["lexical"], agg["axis_pairs"]["language"]
    assert (lexical["datasets"], lexical["original"], lexical["score"]) == (
        2,
        pytest.approx(65.0),
        pytest.approx(53.75),
    )
    assert (language["datasets"], language["original"]) == (3, pytest.approx((80 + 50 + 30) / 3))
    assert language["score"] == pytest.approx((25 + 15 + 60) / 3)
    for axis, pair in agg["axis_pairs"].items():
        assert (
            pair["delta"] == pytest.approx(pair["score"] - pair["original"]) and agg["per_axis"][axis] == pair["score"]
        )


def test_a_partial_card_says_on_how_many_datasets_each_figure_rests():
    agg = aggregate(PARTIAL, INSTALLED)
    card = {
        "model": {"model_id": "m", "revision": None},
        "dataset": {"repo_id": "r", "label": "l", "revision": "x"},
        "protocol": "hteb",
        "on_error": "keep",
        "hteb_score_version": "0",
        "package_versions": {},
        "encode": {"batch_size": 1, "dtype": "float32", "device": "cpu", "prompts": None},
        "aggregates": agg,
        "statistics": None,
        "flags": [],
        "error_policy": [],
        "timings": {},
        "evaluation": {"protocol": "hteb", "description": "d", "datasets": {}},
    }
    md = render_markdown(card)
    assert (
        f"| **model** | {agg['original']:.2f} (3 of 4 datasets) | 53.75 (2 of 4 datasets) | 37.50 (2 of 4 datasets) |"
        in md
    )
    assert f"over all 4 it is {agg['original_all']:.2f}" in md
    assert "| Lexical/Stylistic | 2 of 4 | 65.00 | 53.75 | -11.25 |" in md
