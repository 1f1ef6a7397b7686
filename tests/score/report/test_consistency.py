"""Every output agrees with the JSON it derives from (issue 23 item 5), on card sets Hypothesis makes:
partial and filtered cards, Noise, one to three models, datasets and variants missing.

For each card set: the card's aggregates against an independent computation from its score
records; every figure of result_card.md against result_card.json; comparison.json's card figures
and heat-map cells against the cards and against an independent restriction to the common cells;
comparison.md's and report.html's leaderboard and heat-map cells, the plots' data and the Hub
export against comparison.json and the cards. `FIGURES` counts what was compared.
"""

from __future__ import annotations

import html
import json
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hteb_contract.taxonomy import INSTALLED, RECORDED, Taxonomy
from hteb_contract.common.escape import md_unescape
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_contract.taxonomy import AXES, AXIS_LABELS, PAPER_AXES, TRANSFORMATIONS

from hteb_contract.validation import validate
from hteb_score.report.compare import html_report
from hteb_score.report.compare.analysis import compare
from hteb_score.report.card.card import render_markdown
from hteb_score.report.compare.comparison import figure_cell, heat_cell, leaderboard_cell
from hteb_score.report.formatting import number
from hteb_score.report.compare.inputs import load_card
from hteb_score.report.card.model_index import model_index_yaml
from hteb_score.scoring.aggregate import POINTS, aggregate
from hteb_score.scoring.score_record import ScoreRecord

#: The axes with a task-score mean: all but Sensitivity's minimal pairs, whose rules change meaning or keep it
#: (docs/sensitivity.md), so a mean of both says nothing.
SCORED = {axis: members for axis, members in AXES.items() if axis != "sensitivity"}
DATASETS = {"A": "STS", "B": "Classification", "C": "Retrieval", "D": "Clustering"}
METRIC = {"STS": "spearman", "Classification": "accuracy", "Retrieval": "ndcg_at_10", "Clustering": "v_measure"}
#: What the consistency test compared, over every example (reported by the test).
FIGURES: Counter[str] = Counter()

score = st.floats(0.0, 1.0, allow_nan=False).map(lambda v: round(v, 4))
variant_sets = st.dictionaries(
    st.sampled_from(TRANSFORMATIONS), st.dictionaries(st.sampled_from([1337, 1338]), score, min_size=1), max_size=5
)
model_cards = st.fixed_dictionaries(
    {
        "datasets": st.dictionaries(st.sampled_from(sorted(DATASETS)), st.tuples(score, variant_sets), min_size=1),
        "min_judge": st.sampled_from([None, 3.0]),
    }
)


def _card(name: str, spec: dict) -> dict:
    records = []
    for dataset, (original, variants) in spec["datasets"].items():
        base = {
            "dataset": dataset,
            "task_type": DATASETS[dataset],
            "subset": "all",
            "metric": METRIC[DATASETS[dataset]],
        }
        records.append({**base, "transformation": "original", "seed": None, "value": original})
        records += [
            {**base, "transformation": t, "seed": s, "value": v}
            for t, by_seed in variants.items()
            for s, v in by_seed.items()
        ]
    card = {
        "schema_version": "hteb.card/1",
        "model": {"model_id": name, "revision": "0" * 40},
        "encode": {"batch_size": 8, "dtype": "float32", "normalize": True, "device": "cpu", "prompts": {}},
        "dataset": {
            "repo_id": "hf://hteb/sample",
            "label": "sample",
            "revision": "a" * 40,
            "datasets": sorted(spec["datasets"]),
        },
        "hteb_score_version": "0",
        "protocol": "hteb",
        "evaluation": {"protocol": "hteb", "description": "d", "mteb_version": None, "datasets": {}},
        "on_error": "original",
        "selection": {"preset": None, "min_judge": spec["min_judge"]},
        "package_versions": {},
        "scores": records,
        "aggregates": aggregate([ScoreRecord.from_json(r) for r in records], INSTALLED),
        "error_policy": [],
        "statistics": None,
        "timings": {},
        "created": "2026-11-25T00:00:00Z",
        "flags": [],
        # every axis, Sensitivity's too, as a revision that holds them records them (a card without the block is
        # read by the axes of the revisions made before it)
        "taxonomy": Taxonomy(INSTALLED.axes, RECORDED).to_json(),
    }
    validate("result_card", card, what=name)
    return card


def _oracle(spec: dict) -> dict:
    """The card's headline by hand: seeds, then transformations, then axes; each figure with the
    Original of exactly its datasets."""
    per_dataset = {}
    for dataset, (original, variants) in spec["datasets"].items():
        means = {t: np.mean(list(by_seed.values())) * POINTS for t, by_seed in variants.items()}
        axes = {
            a: np.mean([means[t] for t in SCORED[a] if t in means])
            for a in SCORED
            if any(t in means for t in SCORED[a])
        }
        per_dataset[dataset] = (original * POINTS, axes)
    out = {"axes": {}}
    for axis in SCORED:
        on = [d for d, (_, axes) in per_dataset.items() if axis in axes]
        if on:
            out["axes"][axis] = (
                np.mean([per_dataset[d][1][axis] for d in on]),
                np.mean([per_dataset[d][0] for d in on]),
            )
    paper = [a for a in PAPER_AXES if a in out["axes"]]
    under = [d for d, (_, axes) in per_dataset.items() if any(a in axes for a in PAPER_AXES)]
    out["hteb"] = np.mean([out["axes"][a][0] for a in paper]) if paper else None
    out["original"] = np.mean([per_dataset[d][0] for d in (under if paper else per_dataset)])
    return out


def _count(kind: str, n: int = 1) -> None:
    FIGURES[kind] += n


def _md_rows(md: str, first_header: str) -> list[list[str]]:
    """The body rows of the Markdown table whose header starts with `first_header`, as cells."""
    lines = md.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split(" | ")])
    return rows


def _check_card_markdown(card: dict, md: str) -> None:
    agg = card["aggregates"]
    model_row = next(r for r in _md_rows(md, "| | Original") if r[0] == "**model**")
    head = lambda cell: cell.split(" (")[0]  # noqa: E731  "88.93 (6 of 8 datasets)" -> "88.93"
    assert head(model_row[1]) == number(agg["original"])
    for i, axis in enumerate(PAPER_AXES):
        assert head(model_row[2 + i]) == number(agg["axis_pairs"].get(axis, {}).get("score"))
    assert head(model_row[5]) == number(agg["hteb_total"]) and model_row[6] == number(agg["delta"], sign=True)
    _count("result_card.md headline", 6)
    for row in agg["per_dataset"]:
        cells = next(r for r in _md_rows(md, "| | Original") if r[0].startswith(f"{row['dataset']} ("))
        assert cells[1] == number(row["original"])
        assert [cells[2 + i] for i in range(3)] == [number(row["axes"].get(a)) for a in PAPER_AXES]
        assert head(cells[5].replace(" ±", " (")) == number(row["hteb"]) and cells[6] == number(row["delta"], sign=True)
        _count("result_card.md per dataset", 6)
    if agg["axis_pairs"]:
        pairs = {r[0]: r for r in _md_rows(md, "| axis | datasets |")}
        for axis, pair in agg["axis_pairs"].items():
            cells = next(v for k, v in pairs.items() if k.startswith(AXIS_LABELS[axis].split("/")[0]))
            assert cells[1] == f"{pair['datasets']} of {agg['datasets']}"
            assert cells[2:] == [number(pair["original"]), number(pair["score"]), number(pair["delta"], sign=True)]
            _count("result_card.md per axis", 4)
    if agg["per_transformation"]:
        rows = {r[0]: r for r in _md_rows(md, "| transformation | axis |")}
        for name, entry in agg["per_transformation"].items():
            assert rows[name][2:] == [number(entry["mean"]), number(entry["delta"], sign=True), str(entry["datasets"])]
            _count("result_card.md per transformation", 3)


def _check_card_against_oracle(card: dict, spec: dict) -> None:
    agg, oracle = card["aggregates"], _oracle(spec)
    assert agg["original"] == pytest.approx(oracle["original"])
    assert (
        agg["hteb_total"] == pytest.approx(oracle["hteb"]) if oracle["hteb"] is not None else agg["hteb_total"] is None
    )
    for axis, (value, original) in oracle["axes"].items():
        pair = agg["axis_pairs"][axis]
        assert (pair["score"], pair["original"]) == (pytest.approx(value), pytest.approx(original))
    assert set(agg["axis_pairs"]) == set(oracle["axes"])
    _count("card aggregates vs scores", 2 + 2 * len(oracle["axes"]))


def _check_comparison(comparison, cards: dict[str, dict], specs: dict[str, dict]) -> None:
    result = comparison.to_json()
    validate("comparison", result, what="comparison")
    md, page = comparison.to_markdown(), html.unescape(html_report.render(comparison, {}))
    held = {t for c in cards.values() for t in c["aggregates"]["per_transformation"]}
    assert set(result["heatmap"]["columns"]) == held or not held
    for row, r in zip(result["leaderboard"], comparison.leaderboard, strict=True):
        agg = cards[row["model"]]["aggregates"]
        card = row["card"]
        # equal up to the order of a float sum (the card sums per-dataset rows, compare per column)
        assert card["original"] == pytest.approx(agg["original"], abs=1e-9)
        assert card["hteb"] == (None if agg["hteb_total"] is None else pytest.approx(agg["hteb_total"], abs=1e-9))
        assert card["axes"] == pytest.approx(agg["per_axis"], abs=1e-9)
        assert card["axis_deltas"] == pytest.approx({a: p["delta"] for a, p in agg["axis_pairs"].items()})
        _count("comparison.json card figures vs card", 3 + 2 * len(card["axes"]))
        md_row = next(c for c in _md_rows(md, "| # | Model |") if md_unescape(c[1].removesuffix(" †")) == row["model"])
        assert (" †" in md_row[1]) == row["differs_from_card"]
        assert md_row[2] == comparison.rank_interval(r)  # the rank interval and group, model against model
        assert md_row[3] == figure_cell(r, "original") and md_row[3].startswith(number(row["original"]))
        if comparison.has_total:  # else its columns are left out (all would be "-")
            assert figure_cell(r, "hteb") in md_row and figure_cell(r, "delta", sign=True) in md_row
        else:
            header = next(line for line in md.splitlines() if line.startswith("| # | Model |"))
            assert row["hteb"] is None and "HTEB" not in header
        assert all(leaderboard_cell(r, a) in md_row for a in row["axes"])
        for name in ("original", "hteb", "delta"):
            if (
                row["card"][name] is not None
                and row[name] is not None
                and row["differs_from_card"]
                and abs(row["card"][name] - row[name]) >= 1e-9
            ):
                assert f"(card {number(row['card'][name], sign=name == 'delta')})" in figure_cell(
                    r, name, name == "delta"
                )
        assert figure_cell(r, "original") in page and figure_cell(r, "hteb") in page
        _count("comparison.md and report.html leaderboard", 3 + len(row["axes"]))
        for t, cell in result["heatmap"]["cells"][row["model"]].items():
            own = agg["per_transformation"].get(t)
            assert cell["own"] == (None if own is None else pytest.approx(own["delta"]))
            _count("heat map own cell vs card")
    heat_rows = {md_unescape(c[0]): c[1:] for c in _md_rows(md, "| Model | ")} if result["heatmap"]["columns"] else {}
    order, grid = comparison.heatmap_grid()
    for model, drawn in zip(order, grid if heat_rows else [], strict=False):
        cells = result["heatmap"]["cells"][model]
        assert drawn == [cells[t]["delta"] for t in result["heatmap"]["columns"]]  # the plot's data
        assert heat_rows[model] == [heat_cell(comparison.heatmap[model][t]) for t in result["heatmap"]["columns"]]
        _count("heat map cells: plot data and comparison.md", 2 * len(drawn))
    _check_common_cells(result, specs)


def _check_common_cells(result: dict, specs: dict[str, dict]) -> None:
    """The common basis by hand: datasets every model has, transformations every model has on them."""
    datasets = sorted(set.intersection(*(set(s["datasets"]) for s in specs.values())))
    for t in result["heatmap"]["columns"]:
        on = [d for d in datasets if all(t in s["datasets"][d][1] for s in specs.values())]
        for model, spec in specs.items():
            cell = result["heatmap"]["cells"][model][t]
            if not on:
                assert cell["delta"] is None
                continue
            by_hand = np.mean(
                [(np.mean(list(spec["datasets"][d][1][t].values())) - spec["datasets"][d][0]) * POINTS for d in on]
            )
            assert cell["delta"] == pytest.approx(by_hand) and cell["datasets"] == len(on)
            _count("heat map cell vs common cells by hand")


def _check_hub_export(scores, card: dict) -> None:
    """The model-index entries, one metric each (the dataset's main metric, `main_score` for the
    average): per dataset and for the average its Original, HTEB total and axis scores, as the card's
    headline and per-axis figures say; no delta (those stay in the card)."""
    entries = yaml.safe_load(model_index_yaml(scores))["model-index"][0]["results"]
    agg = card["aggregates"]
    per_dataset = {row["dataset"]: row for row in agg["per_dataset"]}
    for entry in entries:
        config = entry["dataset"].get("config")
        assert entry["dataset"]["type"] == "hteb/sample"  # the bare Hub dataset id
        (metric,) = entry["metrics"]  # each metric under its own task
        row_name, column = entry["task"]["name"].split(".")[:2]
        if config in per_dataset:
            row = per_dataset[config]
            assert metric["type"] == row["metric"] and row_name == config
            expected = {"original": row["original"], "hteb_total": row["hteb"]}
            expected |= {f"hteb_{a}": v for a, v in row["axes"].items()}
        else:
            assert metric["type"] == "main_score" and row_name == "average" and config is None
            expected = {"original": agg["original"], "hteb_total": agg["hteb_total"]}
            expected |= {f"hteb_{a}": v for a, v in agg["per_axis"].items()}
        assert metric["value"] == round(expected[column], 2), (config, column)
        assert metric["args"].get("min_judge") == card["selection"]["min_judge"]  # None is left out
        _count("Hub export vs card")


def test_every_output_agrees_with_its_json():
    # every example counts toward the 10 card sets asserted below: not cut in the fast loop (tests/fuzz.py)
    @settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(model_cards, min_size=1, max_size=3))
    def check(specs_list):
        specs = {f"m{i}": spec for i, spec in enumerate(specs_list)}
        if not set.intersection(*(set(s["datasets"]) for s in specs.values())):
            return  # nothing in common: compare refuses it (tested in test_bad_compare.py)
        cards = {name: _card(name, spec) for name, spec in specs.items()}
        for name, card in cards.items():
            _check_card_against_oracle(card, specs[name])
            _check_card_markdown(card, render_markdown(card))
        with tempfile.TemporaryDirectory() as folder:
            loaded = []
            for name, card in cards.items():
                path = Path(folder) / f"{name}.json"
                path.write_text(json.dumps(card), encoding="utf-8")
                loaded.append(load_card(path))
            # model names carry the selection (" [judge>=3]"): key the cards by the loaded names
            by_loaded = {m.model: cards[Path(m.source).stem] for m in loaded}
            comparison = compare(loaded, n_splits=5)
            _check_comparison(comparison, by_loaded, {m.model: specs[Path(m.source).stem] for m in loaded})
            for m in loaded:
                _check_hub_export(m, by_loaded[m.model])
        FIGURES["card sets"] += 1

    check()
    print(
        f"\nconsistency: {FIGURES['card sets']} card sets, {sum(FIGURES.values()) - FIGURES['card sets']} figures "
        f"compared: {dict(FIGURES)}"
    )
    assert FIGURES["card sets"] >= 10 and FIGURES["heat map cell vs common cells by hand"] > 0
