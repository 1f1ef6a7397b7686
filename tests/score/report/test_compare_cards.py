"""`compare` on result cards: every table against an independent computation, and the outputs."""

from __future__ import annotations

import json

import matplotlib.image
import numpy as np
import pytest
from cards import MODELS, OFFSETS, paper_rows, transformation_score
from hteb_contract.taxonomy import PAPER_AXES
from hteb_contract.validation import validate
from hteb_score.stats.hodges_lehmann import walsh_averages
from hteb_score.stats.holm import holm
from hteb_score.scoring.statistics import drift_row
from scipy import stats


@pytest.fixture(scope="module")
def compared(card_files, tmp_path_factory):
    from hteb_score.cli import main

    out = tmp_path_factory.mktemp("compare")
    assert main(["compare", *map(str, card_files), "--out", str(out), "--splits", "100"]) == 0
    return json.loads((out / "comparison.json").read_text(encoding="utf-8")), out


def expected_scores(model_index: int, model: str) -> dict[str, dict[str, float]]:
    rows = [r for r in paper_rows() if r["model"] == model]
    return {
        r["dataset"]: {t: transformation_score(r, t, model_index) for t in OFFSETS} | {"original": float(r["original"])}
        for r in rows
    }


def test_output_is_schema_valid_and_complete(compared):
    result, out = compared
    validate("comparison", result, what="comparison.json")
    assert result["columns"] == {
        "transformations": list(OFFSETS),
        "axes": list(PAPER_AXES),
        "total": ["hteb"],
    }
    for name in ("axis_dumbbell.png", "delta_heatmap.png", "comparison.md"):
        assert (out / name).stat().st_size > 0
    assert not (out / "drift_quality.png").exists()  # these cards carry no rated drift
    image = matplotlib.image.imread(out / "delta_heatmap.png")
    assert image.shape[0] > 300 and image.shape[1] > 600
    for model in MODELS:
        assert (out / "model_index" / model / "model-index.yaml").is_file()


def test_leaderboard_matches_hand_computation(compared):
    result, _ = compared
    rows = {r["model"]: r for r in result["leaderboard"]}
    for i, model in enumerate(MODELS):
        scores = expected_scores(i, model)
        axes = {
            a: np.mean([np.mean([s[t] for t in members]) for s in scores.values()]) for a, members in PAPER_AXES.items()
        }
        assert rows[model]["original"] == pytest.approx(np.mean([s["original"] for s in scores.values()]))
        assert rows[model]["axes"] == pytest.approx(axes)
        assert rows[model]["hteb"] == pytest.approx(np.mean(list(axes.values())))


def test_comparison_object_renders_what_the_command_wrote(compared, card_files):
    from hteb_score.report.compare import comparison_files
    from hteb_score.report.compare.analysis import compare
    from hteb_score.report.compare.inputs import load_inputs

    result, out = compared
    comparison = compare(load_inputs(card_files, []), n_splits=100)
    assert comparison.to_json() == result
    assert comparison.to_markdown() == (out / "comparison.md").read_text(encoding="utf-8")
    assert comparison_files.figures(comparison)["delta_heatmap.png"] == (out / "delta_heatmap.png").read_bytes()


@pytest.mark.slow  # a fresh interpreter
def test_plots_leave_matplotlib_global_state_alone(card_files, tmp_path):
    import os
    import subprocess
    import sys

    args = [*map(str, card_files[:3]), "--out", str(tmp_path), "--splits", "5"]
    code = (
        "import sys, matplotlib; from hteb_score.cli import main; "
        f"assert main(['compare', *{args!r}]) == 0; "
        "assert 'matplotlib.pyplot' not in sys.modules; "
        "assert matplotlib.rcParams._get_backend_or_none() is None"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # the hteb_score this test imports
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, env=env)
    assert (tmp_path / "delta_heatmap.png").is_file()


def test_kendall_tau_per_dataset_against_scipy(compared):
    result, _ = compared
    per_model = [expected_scores(i, m) for i, m in enumerate(MODELS)]
    taus = []
    for dataset in result["datasets"]:
        x = [s[dataset]["original"] for s in per_model]
        y = [s[dataset]["translation"] for s in per_model]
        taus.append(stats.kendalltau(x, y).statistic)
        assert result["ranking_stability"]["translation"]["per_dataset"][dataset] == pytest.approx(taus[-1])
    assert result["ranking_stability"]["translation"]["mean"] == pytest.approx(np.mean(taus))
    assert result["ranking_stability"]["translation"]["sd"] == pytest.approx(np.std(taus, ddof=1))


def test_transformation_effects_on_model_averaged_deltas(compared):
    result, _ = compared
    per_model = [expected_scores(i, m) for i, m in enumerate(MODELS)]
    p_values = []
    for t in OFFSETS:
        deltas = [np.mean([s[d][t] - s[d]["original"] for s in per_model]) for d in result["datasets"]]
        effect = result["effects"]["transformations"][t]
        assert effect["hl_shift"] == pytest.approx(np.median(walsh_averages(deltas)))
        assert effect["p_value"] == pytest.approx(stats.wilcoxon(np.round(deltas, 9)).pvalue)
        assert effect["median_abs_delta"] == pytest.approx(np.median(np.abs(deltas)))
        p_values.append(effect["p_value"])
    assert [result["effects"]["transformations"][t]["p_holm"] for t in OFFSETS] == pytest.approx(holm(p_values))


def test_each_effect_states_the_least_p_its_datasets_allow(compared):
    """comparison.md's effects table: beside each Holm p, 2 / 2^moved for the datasets whose model-averaged delta
    moved (the exact signed-rank test's floor), counted here from the deltas themselves."""
    from hteb_score.report.formatting import column_label, p_value

    result, out = compared
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    per_model = [expected_scores(i, m) for i, m in enumerate(MODELS)]
    for t in OFFSETS:
        deltas = [np.mean([s[d][t] - s[d]["original"] for s in per_model]) for d in result["datasets"]]
        moved = sum(round(v, 9) != 0 for v in deltas)
        effect = result["effects"]["transformations"][t]
        assert effect["n_datasets"] - effect["n_zero"] == moved
        row = next(
            line for line in markdown.splitlines() if line.startswith(f"| transformations | {column_label(t)} |")
        )
        assert row.split(" | ")[4:6] == [p_value(effect["p_holm"]), p_value(min(1.0, 2.0 / 2**moved))], row


def test_reliability_per_axis(compared):
    """Each axis's median rho and the level and half-gap spreads that set its sign are split_half_reliability's on
    the axis scores computed here; comparison.md prints them with the sentence that reads them."""
    from hteb_score.report.compare.comparison import SIGN_WORDS
    from hteb_score.report.formatting import column_label, number
    from hteb_score.stats.reliability import split_half_reliability

    result, out = compared
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    assert SIGN_WORDS in markdown
    per_model = [expected_scores(i, m) for i, m in enumerate(MODELS)]
    datasets = result["datasets"]
    task_types = {r["dataset"]: r["task_type"] for r in paper_rows()}
    for axis, members in PAPER_AXES.items():
        scores = {m: {d: np.mean([s[d][t] for t in members]) for d in datasets} for m, s in zip(MODELS, per_model)}
        expected = split_half_reliability(scores, {d: task_types[d] for d in datasets}, n_splits=100, seed=0)
        entry = result["reliability"]["per_axis"][axis]
        assert entry["n_splits"] == 100 and entry["n_defined"] == expected.n_defined > 0
        assert [entry[k] for k in ("median_rho", "level_sd", "gap_sd")] == pytest.approx(
            [expected.median_rho, expected.level_sd, expected.gap_sd]
        )
        section = markdown.split("## Split-half reliability", 1)[1].split("\n## ", 1)[0]
        row = next(line for line in section.splitlines() if line.startswith(f"| {column_label(axis)} | "))
        cells = row.split(" | ")
        assert cells[4:6] == [number(entry["level_sd"], 2), number(entry["gap_sd"], 2)], row


def test_stability_and_reliability_state_their_chance_as_rank_null_computes_it(compared):
    """comparison.json's `chance` of the translation tau and of each axis's reliability is stats/rank_null.py's
    on the scores computed here (the command's default seed 0), and comparison.md prints its p and level."""
    from hteb_score.report.formatting import number, p_value
    from hteb_score.stats.rank_null import reliability_chance, stability_chance

    result, out = compared
    per_model = [expected_scores(i, m) for i, m in enumerate(MODELS)]
    datasets = result["datasets"]
    original = np.array([[s[d]["original"] for s in per_model] for d in datasets])
    translated = np.array([[s[d]["translation"] for s in per_model] for d in datasets])
    stability = result["ranking_stability"]["translation"]
    chance = stability_chance(original, translated, stability["mean"], seed=0)
    assert chance is not None and stability["chance"] == {"p": chance.p, "level": chance.level, "draws": chance.draws}
    markdown = (out / "comparison.md").read_text(encoding="utf-8")
    row = f"| {stability['mean']:.3f} | {stability['sd']:.3f} | {p_value(chance.p)} | {number(chance.level, 3)} |"
    assert row in markdown
    task_types = {r["dataset"]: r["task_type"] for r in paper_rows()}
    for axis, members in PAPER_AXES.items():
        scores = {m: {d: np.mean([s[d][t] for t in members]) for d in datasets} for m, s in zip(MODELS, per_model)}
        entry = result["reliability"]["per_axis"][axis]
        types = {d: task_types[d] for d in datasets}
        chance = reliability_chance(scores, types, entry["median_rho"], n_splits=100, seed=0)
        assert chance is not None and entry["chance"] == pytest.approx(
            {"p": chance.p, "level": chance.level, "draws": chance.draws}
        )


def test_model_index_round_trips_through_huggingface_hub(compared):
    import yaml
    from huggingface_hub.repocard_data import model_index_to_eval_results

    _, out = compared
    block = yaml.safe_load((out / "model_index" / "Jasper-600M" / "model-index.yaml").read_text(encoding="utf-8"))
    name, results = model_index_to_eval_results(block["model-index"])
    assert name == "Jasper-600M"
    by_key = {(r.dataset_config, r.task_name.split(".")[1]): r.metric_value for r in results}
    row = next(r for r in paper_rows() if r["model"] == "Jasper-600M" and r["dataset"] == "SciFact")
    assert by_key[("SciFact", "original")] == pytest.approx(float(row["original"]))
    (written,) = (out / "model_index" / "Jasper-600M" / ".eval_results").glob("hteb-*.yaml")
    entries = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert {"dataset", "value"} <= set(entries[0]) and entries[0]["dataset"]["id"] == "hteb/sample"


def test_partial_coverage_is_used_and_reported(card_files, tmp_path, run_cli):
    from cards import make_card, write_card

    short = write_card(tmp_path, make_card("F2LLM-v2-4B", datasets=10, model_index=5))
    code, _, err = run_cli("compare", *card_files[:3], short, "--out", tmp_path / "short", "--splits", "5")
    assert code == 0 and "were left out" in err
    result = json.loads((tmp_path / "short" / "comparison.json").read_text(encoding="utf-8"))
    assert len(result["datasets"]) == 10

    table = tmp_path / "partial.csv"
    table.write_text(
        "model,dataset,task_type,original,paraphrasing,translation\n"
        "a,d1,STS,50,48,40\na,d2,STS,60,59,\nb,d1,STS,55,50,45\nb,d2,STS,65,60,50\n"
        "c,d1,STS,40,41,30\nc,d2,STS,45,44,35\n",
        encoding="utf-8",
    )
    code, _, err = run_cli("compare", "--scores-table", table, "--out", tmp_path / "partial", "--splits", "5")
    assert code == 0 and "Translation is scored for every model on only 1 of 2 datasets" in err
    result = json.loads((tmp_path / "partial" / "comparison.json").read_text(encoding="utf-8"))
    assert result["effects"]["transformations"]["translation"]["n_datasets"] == 1
    assert result["effects"]["transformations"]["paraphrasing"]["n_datasets"] == 2
    # language axis = translation where present; lexical = paraphrasing
    assert result["ranking_stability"]["translation"]["per_dataset"] == {"d1": pytest.approx(1.0)}


def test_original_only_table_makes_no_heatmap(tmp_path, run_cli):
    table = tmp_path / "orig.csv"
    table.write_text("model,dataset,original,hteb\na,d1,50,\nb,d1,60,\n", encoding="utf-8")
    code, _, err = run_cli("compare", "--scores-table", table, "--out", tmp_path / "out", "--splits", "5")
    assert code == 0 and "no delta heat map" in err
    assert (tmp_path / "out" / "axis_dumbbell.png").is_file()
    assert not (tmp_path / "out" / "delta_heatmap.png").exists()


def test_drift_vs_quality_plot_from_cards_with_rated_items(shared_data, tmp_path, run_cli):
    from cards import make_card, write_card

    rows = [json.loads(line) for line in (shared_data / "STSBenchmark" / "test.jsonl").read_text().splitlines()[:25]]
    paths = []
    for i, model in enumerate(MODELS[:3]):
        drift = [  # real similarity labels stand in for cosine
            drift_row(t, float(round(r["score"])) + 1, r["sentence1"], r["sentence2"], 1 - r["score"] / 5.5 + 0.01 * i)
            for t in ("paraphrasing", "translation")
            for r in rows
        ]
        paths.append(write_card(tmp_path, make_card(model, model_index=i, drift=drift)))
    code, out, _ = run_cli("compare", *paths, "--out", tmp_path / "out", "--splits", "5")
    assert code == 0 and "drift_quality.png" in out
    image = matplotlib.image.imread(tmp_path / "out" / "drift_quality.png")
    assert image.shape[0] > 300 and image.shape[1] > 600
    card = json.loads(paths[0].read_text(encoding="utf-8"))
    assert card["statistics"]["drift"]["paraphrasing"]["drift_quality_spearman"] < -0.8


def test_a_one_model_comparison_says_once_what_needs_two(card_files, tmp_path, run_cli):
    """One card: ranking stability and reliability need two ranked models; each section says so in one line,
    not in a cell per row."""
    code, _, _ = run_cli("compare", card_files[0], "--out", tmp_path / "one")
    assert code == 0
    markdown = (tmp_path / "one" / "comparison.md").read_text(encoding="utf-8")
    page = (tmp_path / "one" / "report.html").read_text(encoding="utf-8")
    for text in (markdown, page):
        assert text.count("needs two models or more") == 1 and text.count("needs three models or more") == 1
