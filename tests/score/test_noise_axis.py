"""The Noise axis (issue 12, item 2) in the scorer: per transformation and per axis, in the card,
its statistics and `compare`, reported beside the HTEB total and never in it.

The revision is built from real rows of shared/data; its Noise texts are made by the generator's
own perturbations (`hteb_generate.transform.noise.perturb`, keyed by seed, dataset, transformation and item),
the paper's three transformations by plain rules on the words (`PAPER_RULES`). The fast
tests score it with the real evaluators and hashed bag-of-words embeddings of three sizes: three
deterministic "models" that noise hurts (a perturbed word hashes elsewhere). The slow test runs
the real `hteb-score` with all-MiniLM-L6-v2.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from hteb_contract.taxonomy import INSTALLED
from hteb_contract.records import ItemRecord
from hteb_contract.revision import Revision
from hteb_contract.stores.local import LocalStore
from hteb_contract.taxonomy import AXES, PAPER_AXES
from hteb_contract.validation import validate
from hteb_generate.transform.noise import perturb
from hteb_score.scoring.aggregate import POINTS, aggregate
from hteb_score.report.card.card import CardResults, CardSubject, build_card, render_markdown
from hteb_score.report.card.outputs import write_outputs
from hteb_score.report.compare import comparison_files, plots
from hteb_score.report.compare.analysis import compare
from hteb_score.report.compare.inputs import load_inputs
from hteb_score.report.compare.inputs import load_scores_table
from hteb_score.evaluators.protocol import PROTOCOLS
from hteb_score.scoring.data import revision_variants
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.stats.hodges_lehmann import walsh_averages
from hteb_score.stats.holm import holm
from hteb_score.scoring.statistics import model_statistics
from revision_factory import build_revision

sys.path.insert(0, str(Path(__file__).resolve().parent / "evaluators"))
from evaluator_embeddings import context, evaluate, hashed_bow  # noqa: E402

NAMES = ["STSBenchmark", "STS12", "STS13", "STS14", "STS15", "STS16", "TwitterSemEval2015"]
PAPER = ("paraphrasing", "expansion", "translation")  # one transformation of each paper axis
NOISE = AXES["noise"]
SEED = 1339
MODELS = {"bow-16": 16, "bow-64": 64, "bow-256": 256}  # hashed bag-of-words dimensions
BESIDE = "Noise is reported beside HTEB, not in its total"


PAPER_RULES = {
    "paraphrasing": lambda words: words[: max(1, 2 * len(words) // 3)],
    "expansion": lambda words: words + words[: len(words) // 2],
    "translation": lambda words: words[len(words) // 3 :],
}


def transformed(record: ItemRecord) -> ItemRecord:
    """The record with its text made by its transformation's rule; a Noise transformation's by the
    generator's perturbation."""
    if record.transformation in NOISE:
        key = (record.seed, record.dataset, record.transformation, record.original_text)  # as the generator keys it
        text = perturb(record.transformation, record.original_text, key=key)
    else:
        text = " ".join(PAPER_RULES[record.transformation](record.original_text.split()))
    attempt = dataclasses.replace(record.attempts[0], steps=(text,), output=text)
    return dataclasses.replace(record, transformed_text=text, attempts=(attempt,))


def build(root: Path, shared_data: Path, transformations: tuple[str, ...], label: str, rows: int = 24) -> Revision:
    build_revision(
        root,
        shared_data,
        NAMES,
        label=label,
        rows=rows,
        transformations=transformations,
        seeds=(SEED,),
        edit=transformed,
    )
    return Revision.open(root)


@pytest.fixture(scope="module")
def revision(tmp_path_factory, shared_data) -> Revision:
    return build(tmp_path_factory.mktemp("noise") / "rev", shared_data, (*PAPER, *NOISE), "noise-1")


def score(revision: Revision, dim: int) -> list[ScoreRecord]:
    """Score records (0-1 scale) of every variant of every dataset, as `hteb-score` writes them."""
    run, embed = context("hteb"), functools.partial(hashed_bow, dim=dim)
    records = []
    for name in revision.dataset_names():
        variants, _ = revision_variants(revision, name, transformations=None, seeds=None, on_error="original")
        for variant in variants:
            result = evaluate(variant.dataset, embed, run)
            records.append(
                ScoreRecord(
                    name,
                    variant.dataset.info.task_type,
                    "all",
                    variant.transformation,
                    variant.seed,
                    result.main_metric,
                    result.value,
                )
            )
    return records


@pytest.fixture(scope="module")
def scores(revision) -> dict[str, list[ScoreRecord]]:
    return {model: score(revision, dim) for model, dim in MODELS.items()}


def without(records: list[ScoreRecord], names: tuple[str, ...]) -> list[ScoreRecord]:
    return [r for r in records if r.transformation not in names]


def make_card(model: str, records: list[ScoreRecord], revision: Revision) -> dict[str, Any]:
    """A result card by the real `build_card`, as `hteb-score` makes one."""
    transformed = any(r.transformation != "original" for r in records)
    return build_card(
        CardSubject(
            model={"model_id": model, "revision": None, "embedding_dim": MODELS[model] + 1, "similarity": "cosine"},
            encode={"batch_size": 32, "dtype": "float32", "normalize": False, "device": "cpu", "prompts": {}},
            dataset={
                "repo_id": "file://test",
                "label": revision.label,
                "revision": revision.revision_id,
                "datasets": revision.dataset_names(),
            },
            protocol=PROTOCOLS.get("hteb"),
            on_error="original",
        ),
        CardResults(
            records,
            {"total_s": 0.0},
            statistics=model_statistics([r.in_points() for r in records], [], INSTALLED) if transformed else None,
        ),
    )


def card_files(folder: Path, scores: dict[str, list[ScoreRecord]], revision: Revision, drop: tuple[str, ...] = ()):
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for model, records in scores.items():
        path = folder / f"{model}.json"
        path.write_text(json.dumps(make_card(model, without(records, drop), revision)), encoding="utf-8")
        paths.append(path)
    return paths


def seed_means(records: list[ScoreRecord]) -> dict[str, dict[str, float]]:
    """`{dataset: {transformation or "original": score in points}}` (one seed here)."""
    out: dict[str, dict[str, float]] = {}
    for r in records:
        out.setdefault(r.dataset, {})[r.transformation] = r.value * POINTS
    return out


def nonzero(deltas: list[float]) -> list[float]:
    """The differences the HL shift and Wilcoxon use: rounded to 9 decimals, zeros dropped."""
    return [d for d in np.round(deltas, 9) if d != 0]


# --- aggregation --------------------------------------------------------------------------------


def test_the_noise_axis_is_scored_per_transformation_and_per_axis(scores):
    records = scores["bow-64"]
    agg = aggregate(records, INSTALLED)
    assert list(agg["per_transformation"]) == [*PAPER, *NOISE]
    assert all(agg["per_transformation"][t]["datasets"] == len(NAMES) for t in NOISE)
    by_dataset = seed_means(records)
    noise = {d: np.mean([row[t] for t in NOISE]) for d, row in by_dataset.items()}
    for row in agg["per_dataset"]:
        assert row["axes"]["noise"] == pytest.approx(noise[row["dataset"]])
    assert agg["per_axis"]["noise"] == pytest.approx(np.mean(list(noise.values())))
    # the perturbations change what a bag of words sees: the axis is measured, not a copy of Original
    assert any(abs(agg["per_transformation"][t]["delta"]) > 0.5 for t in NOISE)


@pytest.mark.parametrize("model", list(MODELS))
def test_noise_variants_leave_the_hteb_total_unchanged(scores, model):
    both, paper_only = aggregate(scores[model], INSTALLED), aggregate(without(scores[model], NOISE), INSTALLED)
    assert both["hteb_total"] == paper_only["hteb_total"] and both["delta"] == paper_only["delta"]
    assert both["hteb_total"] == pytest.approx(np.mean([both["per_axis"][a] for a in PAPER_AXES]))
    assert both["hteb_total"] != pytest.approx(np.mean(list(both["per_axis"].values())))  # Noise not in it
    for row, old in zip(both["per_dataset"], paper_only["per_dataset"], strict=True):
        assert (row["hteb"], row["hteb_sd"], row["delta"]) == (old["hteb"], old["hteb_sd"], old["delta"])
    assert {a: v for a, v in both["per_axis"].items() if a != "noise"} == paper_only["per_axis"]


def test_a_revision_with_only_noise_has_no_hteb_total(scores):
    agg = aggregate(without(scores["bow-64"], PAPER), INSTALLED)
    assert list(agg["per_axis"]) == ["noise"]
    assert agg["hteb_total"] is None and agg["delta"] is None
    assert all(row["hteb"] is None and row["delta"] is None for row in agg["per_dataset"])


# --- statistics ---------------------------------------------------------------------------------


def test_statistics_test_the_noise_axis_as_the_others(scores):
    records = scores["bow-64"]
    block = model_statistics([r.in_points() for r in records], [], INSTALLED)
    assert set(block["per_transformation"]) == {*PAPER, *NOISE} and set(block["per_axis"]) == {*PAPER_AXES, "noise"}
    by_dataset = seed_means(records)
    for t in NOISE:
        deltas = [by_dataset[d][t] - by_dataset[d]["original"] for d in sorted(by_dataset)]
        effect = block["per_transformation"][t]
        assert effect["n_datasets"] == len(NAMES)
        if not nonzero(deltas):  # random capitalisation: a bag of words lower-cases every word
            assert t == "random_capitalisation" and (effect["hl_shift"], effect["ci_low"], effect["ci_high"]) == (
                0,
                0,
                0,
            )
            continue
        assert effect["hl_shift"] == pytest.approx(np.median(walsh_averages(nonzero(deltas))))
        assert effect["p_value"] == pytest.approx(stats.wilcoxon(np.round(deltas, 9)).pvalue)
    noise_axis = [np.mean([by_dataset[d][t] for t in NOISE]) - by_dataset[d]["original"] for d in sorted(by_dataset)]
    assert block["per_axis"]["noise"]["hl_shift"] == pytest.approx(np.median(walsh_averages(nonzero(noise_axis))))
    pooled = [by_dataset[d][t] - by_dataset[d]["original"] for t in NOISE for d in by_dataset]
    assert block["per_axis"]["noise"]["median_abs_delta_pooled"] == pytest.approx(np.median(np.abs(pooled)))


def test_holm_corrects_the_noise_family_apart_and_the_paper_numbers_do_not_move(scores):
    records = scores["bow-64"]
    both = model_statistics([r.in_points() for r in records], [], INSTALLED)
    paper_only = model_statistics([r.in_points() for r in without(records, NOISE)], [], INSTALLED)
    for t in PAPER:
        assert both["per_transformation"][t] == paper_only["per_transformation"][t]
    for a in PAPER_AXES:
        assert both["per_axis"][a] == paper_only["per_axis"][a]
    assert both["total"] == paper_only["total"]
    noise = [both["per_transformation"][t] for t in NOISE]
    assert [e["p_holm"] for e in noise] == pytest.approx(holm([e["p_value"] for e in noise]))
    assert both["per_axis"]["noise"]["p_holm"] == both["per_axis"]["noise"]["p_value"]  # a family of one


def test_statistics_of_a_noise_only_revision_have_no_total(scores):
    block = model_statistics([r.in_points() for r in without(scores["bow-64"], PAPER)], [], INSTALLED)
    assert set(block["per_transformation"]) == set(NOISE) and list(block["per_axis"]) == ["noise"]
    assert block["total"] is None


@pytest.fixture(scope="module")
def generated(tmp_path_factory, shared_data) -> Revision:
    """A noise-only revision made by `hteb-generate`'s noise profile (the rules alone, no model)."""
    from hteb_contract.stores import open_store
    from hteb_generate.setup.config import build_config
    from hteb_generate.run.pipeline import run

    tmp = tmp_path_factory.mktemp("generated")
    cfg = build_config(
        seed=str(SEED),
        profile="noise",
        overrides={
            "datasets": ",".join(NAMES),
            "max_texts": 40,
            "data_dir": str(shared_data),
            "cache_dir": str(tmp / "cache"),
            "store": str(tmp / "store"),
            "manifest_md": str(tmp / "MANIFEST.md"),
        },
    )
    run(cfg, log=lambda message: None)
    return open_store(cfg.store).fetch(cfg.label)


def test_a_revision_of_the_noise_profile_is_scored_on_the_noise_axis_alone(generated):
    assert generated.manifest["transformations"] == list(NOISE)
    records = score(generated, 64)
    card = make_card("bow-64", records, generated)
    agg, block = card["aggregates"], card["statistics"]
    assert list(agg["per_transformation"]) == list(NOISE) and list(agg["per_axis"]) == ["noise"]
    assert agg["hteb_total"] is None and block["total"] is None and list(block["per_axis"]) == ["noise"]
    assert "the HTEB total is undefined (-)" in render_markdown(card)


# --- the card -----------------------------------------------------------------------------------


def test_the_card_shows_noise_beside_the_total(scores, revision):
    card = make_card("bow-64", scores["bow-64"], revision)
    agg = card["aggregates"]
    md = render_markdown(card)
    assert BESIDE in md
    assert "| | Original | Lexical/Stylistic | Length | Language | HTEB | delta | Noise | Noise delta |" in md
    model_row = next(line for line in md.splitlines() if line.startswith("| **model** |"))
    cells = [c.strip() for c in model_row.strip("|").split("|")]
    assert cells[5] == f"{agg['hteb_total']:.2f}"
    assert cells[7:] == [f"{agg['per_axis']['noise']:.2f}", f"{agg['per_axis']['noise'] - agg['original']:+.2f}"]
    for t in NOISE:
        assert f"| {t} | Noise | {agg['per_transformation'][t]['mean']:.2f} |" in md
    effects = md[md.index("## Effects across datasets") :]
    assert "Holm corrects the paper's transformations and Noise's apart." in effects
    assert all(f"| {t} |" in effects for t in NOISE)


def test_a_card_without_noise_reads_as_before(scores, revision):
    md = render_markdown(make_card("bow-64", without(scores["bow-64"], NOISE), revision))
    assert "Noise" not in md
    assert (
        "| | Original | Lexical/Stylistic | Length | Language | HTEB | delta |\n|---|---|---|---|---|---|---|\n" in md
    )


def test_a_noise_only_card_states_that_the_total_is_undefined(scores, revision, tmp_path):
    card = make_card("bow-64", without(scores["bow-64"], PAPER), revision)
    assert card["aggregates"]["hteb_total"] is None and card["statistics"]["total"] is None
    written = write_outputs(tmp_path, card, {})
    md = (tmp_path / "result_card.md").read_text(encoding="utf-8")
    assert BESIDE in md and "the HTEB total is undefined (-)" in md
    model_row = next(line for line in md.splitlines() if line.startswith("| **model** |"))
    assert [c.strip() for c in model_row.strip("|").split("|")][2:7] == ["-", "-", "-", "-", "-"]
    validate("result_card", json.loads(written[0].read_text(encoding="utf-8")), what="card")


# --- compare ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def compared(scores, revision, tmp_path_factory):
    folder = tmp_path_factory.mktemp("cards")
    with_noise_ = compare(load_inputs(card_files(folder / "all", scores, revision), []), n_splits=50)
    paper_only = compare(load_inputs(card_files(folder / "paper", scores, revision, NOISE), []), n_splits=50)
    return with_noise_, paper_only


def test_compare_has_the_noise_axis_in_every_analysis(compared, scores):
    comparison, _ = compared
    assert comparison.columns.transformations == [*PAPER, *NOISE]
    assert comparison.columns.axes == [*PAPER_AXES, "noise"] and comparison.columns.total == ["hteb"]
    assert set(comparison.effects["transformations"]) == {*PAPER, *NOISE} and "noise" in comparison.effects["axes"]
    assert {*NOISE, "noise"} <= set(comparison.ranking_stability)
    assert comparison.reliability.reason is None and "noise" in comparison.reliability.per_axis
    assert all("noise" in row.axes for row in comparison.leaderboard)
    result = comparison.to_json()  # validated against comparison.v1
    assert result["columns"]["axes"][-1] == "noise"
    # Kendall tau of one Noise transformation, per dataset, against scipy
    per_model = [seed_means(scores[m]) for m in MODELS]
    for dataset in comparison.datasets:
        expected = stats.kendalltau(
            [s[dataset]["original"] for s in per_model], [s[dataset]["numerisation"] for s in per_model]
        ).statistic
        found = comparison.ranking_stability["numerisation"].per_dataset[dataset]
        if found is None:
            assert np.isnan(expected)
        else:
            assert found == pytest.approx(expected)
    # the model-averaged effect of a Noise transformation
    deltas = [np.mean([s[d]["character_deletion"] - s[d]["original"] for s in per_model]) for d in comparison.datasets]
    assert comparison.effects["transformations"]["character_deletion"]["hl_shift"] == pytest.approx(
        np.median(walsh_averages(nonzero(deltas)))
    )


def test_compare_leaves_the_paper_results_as_they_were(compared):
    comparison, paper_only = compared
    for row, old in zip(comparison.leaderboard, paper_only.leaderboard, strict=True):
        assert (row.model, row.hteb, row.rank_hteb, row.rank_original) == (
            old.model,
            old.hteb,
            old.rank_hteb,
            old.rank_original,
        )
        assert {a: v for a, v in row.axes.items() if a != "noise"} == old.axes
    for family in ("transformations", "axes", "total"):
        for name, effect in paper_only.effects[family].items():
            assert comparison.effects[family][name] == effect
    noise = [comparison.effects["transformations"][t] for t in NOISE]
    assert [e["p_holm"] for e in noise] == pytest.approx(holm([e["p_value"] for e in noise]))


def test_compare_markdown_puts_noise_after_the_total(compared):
    comparison, paper_only = compared
    md = comparison.to_markdown()
    assert "Noise is reported beside the HTEB total, not in it" in md
    assert "Holm-corrected within each family (the paper's and Noise's apart)" in md
    header = next(line for line in md.splitlines() if line.startswith("| # | Model |"))
    assert header.endswith("| HTEB total | Δ | Noise (Δ) | Rank Original → HTEB | Rests on |")
    assert "| transformations | Random capitalisation |" in md and "| axes | Noise |" in md
    assert "Noise" not in paper_only.to_markdown()
    assert comparison_files.figures(comparison)["axis_dumbbell.png"].startswith(b"\x89PNG")
    model_index = comparison_files.model_index(comparison)["model_index/bow-64/model-index.yaml"]
    assert "HTEB Noise axis (not in the HTEB total)" in model_index and "HTEB total" in model_index


def test_compare_of_noise_only_cards_has_no_total(scores, revision, tmp_path):
    comparison = compare(load_inputs(card_files(tmp_path, scores, revision, PAPER), []), n_splits=20)
    assert comparison.columns.axes == ["noise"] and comparison.columns.total == []
    assert all(row.hteb is None and row.rank_hteb is None for row in comparison.leaderboard)
    assert comparison.to_json()["effects"]["total"] == {}
    markdown = comparison.to_markdown()
    assert "Noise (Δ)" in markdown
    assert set(comparison_files.figures(comparison)) >= {"axis_dumbbell.png", "delta_heatmap.png"}
    drawn = plots.axis_dumbbell(comparison.leaderboard, comparison.leaderboard_axes(), comparison.taxonomy)
    assert drawn.axes[0].get_title().startswith("Original vs Noise scores per model")  # the axes drawn, no HTEB
    # the headline is the lead under Noise, and the HTEB columns (all "-") are left out
    lead = comparison.lead
    noise = {row.model: row.axes["noise"] for row in comparison.leaderboard}
    assert lead is not None and lead.first == max(noise, key=noise.get)
    assert [row.model for row in comparison.leaderboard] == lead.order
    assert f"**{lead.sentence()}**" in markdown and lead.runner_up in lead.sentence()
    header = next(line for line in markdown.splitlines() if line.startswith("| # | Model |"))
    assert header == "| # | Model | Rank interval, group | Original | Noise (Δ) | Rank Original → Noise | Rests on |"


def test_a_scores_table_derives_the_noise_axis_but_never_puts_it_in_the_total(tmp_path):
    path = tmp_path / "scores.csv"
    rows = [
        {
            "model": "m",
            "dataset": "A",
            "original": 80,
            "paraphrasing": 70,
            "expansion": 60,
            "translation": 50,
            "numerisation": 30,
            "keyboard_typos": 20,
        },
        {"model": "m", "dataset": "B", "original": 70, "numerisation": 40, "keyboard_typos": 30},
    ]
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    (m,) = load_scores_table(path)
    assert m.axes["noise"] == {"A": 25.0, "B": 35.0}
    assert m.hteb == {"A": 60.0}  # mean of the paper's three axes; B has none of them


# --- end to end ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_hteb_score_reports_the_noise_axis_end_to_end(revision, tmp_path, capsys):
    from hteb_score.cli import main
    from models import minilm_path

    LocalStore(tmp_path / "store").publish(revision.root)
    common = [
        minilm_path(),
        "--store",
        str(tmp_path / "store"),
        "--revision",
        "noise-1",
        "--datasets",
        "STSBenchmark,STS12,TwitterSemEval2015",
        "--quiet",
    ]
    assert main([*common, "--out", str(tmp_path / "all")]) == 0
    assert "; Noise " in capsys.readouterr().out
    assert main([*common, "--transformations", ",".join(PAPER), "--out", str(tmp_path / "paper")]) == 0
    assert "Noise" not in capsys.readouterr().out
    card, paper_only = (json.loads((tmp_path / d / "result_card.json").read_text()) for d in ("all", "paper"))
    assert set(card["aggregates"]["per_axis"]) == {*PAPER_AXES, "noise"}
    assert card["aggregates"]["hteb_total"] == paper_only["aggregates"]["hteb_total"]
    assert set(card["statistics"]["per_transformation"]) == {*PAPER, *NOISE}
    assert BESIDE in (tmp_path / "all" / "result_card.md").read_text()
    assert "Noise" not in (tmp_path / "paper" / "result_card.md").read_text()
