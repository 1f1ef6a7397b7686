"""`compare --mteb-results` on folders it cannot read: one line, exit 2, nothing written; and what it
skips (other tasks' files, other studies' experiment folders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hteb_score.mteb_interop.layout import model_meta, result_folder, variant_task_name

MODEL, REVISION, DATA = "org/model-a", "abc123", "sha256:5cfa68b19a9a"


def _entry(score: object, subset: str = "default") -> dict:
    return {"main_score": score, "hf_subset": subset, "languages": ["eng-Latn"]}


def write_result(
    root: Path,
    task: str,
    score: object,
    transformation: str = "original",
    seed: int | None = None,
    *,
    text: str | None = None,
    data_revision: str = "rev-1",
    selection: str = "",
    revision: str = DATA,
) -> Path:
    """One variant's task file in mteb's layout, under its HTEB name, and its folder's model_meta.json."""
    folder = result_folder(root, MODEL, REVISION)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "model_meta.json").write_text(json.dumps(model_meta(MODEL, REVISION)))
    name = variant_task_name(task, revision, transformation, seed, selection)
    result = {
        "dataset_revision": data_revision,
        "task_name": name,
        "mteb_version": "2.26.24",
        "scores": {"test": [_entry(score)]},
        "evaluation_time": 1.0,
        "kg_co2_emissions": None,
    }
    path = folder / f"{name}.json"
    path.write_text(json.dumps(result) if text is None else text)
    return path


@pytest.fixture
def results(tmp_path: Path) -> Path:
    root = tmp_path / "cache"
    write_result(root, "STSBenchmark", 0.80)
    write_result(root, "SciFact", 0.60)
    write_result(root, "STSBenchmark", 0.70, "paraphrasing", 1)
    write_result(root, "STSBenchmark", 0.60, "paraphrasing", 2)
    write_result(root, "SciFact", 0.50, "paraphrasing", 1)
    return root


def _refused(run_cli, tmp_path: Path, *args: object, needles: tuple[str, ...]) -> None:
    code, _, err = run_cli("compare", *args, "--out", tmp_path / "out", "--splits", "5")
    assert code == 2 and err.count("\n") == 1 and err.startswith("hteb-score: error: ") and "Traceback" not in err, err
    assert all(n in err for n in needles), err
    assert not (tmp_path / "out").exists()


def test_a_results_folder_is_read_as_mtebs_get_score_in_points(results, tmp_path, run_cli):
    code, _, err = run_cli("compare", "--mteb-results", results, "--out", tmp_path / "out", "--splits", "5")
    assert code == 0, err
    comparison = json.loads((tmp_path / "out" / "comparison.json").read_text())
    [row] = comparison["leaderboard"]
    assert row["model"] == MODEL and row["original"] == pytest.approx(70.0)
    assert comparison["datasets"] == ["STSBenchmark", "SciFact"]
    # paraphrasing: STSBenchmark mean over seeds 65, SciFact 50 -> lexical axis 57.5
    assert row["axes"]["lexical"] == pytest.approx(57.5)


def test_skipped_other_tasks_and_experiments(results, tmp_path, run_cli):
    folder = result_folder(results, MODEL, REVISION)
    (folder / "SciFact.json").write_text(json.dumps({"task_name": "SciFact", "scores": {"test": [_entry(0.0)]}}))
    other = folder / "experiments" / "output_dtypes_int8"
    other.mkdir(parents=True)
    (other / "STSBenchmark.hteb-5cfa68b1.translation.1.json").write_text("{}")
    assert run_cli("compare", "--mteb-results", results, "--out", tmp_path / "out", "--splits", "5")[0] == 0
    [row] = json.loads((tmp_path / "out" / "comparison.json").read_text())["leaderboard"]
    assert row["axes"]["lexical"] == pytest.approx(57.5) and "language" not in row["axes"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"selection": ".judge3"}, "hteb-5cfa68b1.judge3"),
        ({"revision": "0123456789"}, "hteb-01234567"),
    ],
)
def test_refused_variants_of_two_selections_or_revisions_in_one_folder(results, tmp_path, run_cli, extra, needle):
    write_result(results, "SciFact", 0.1, "translation", 1, **extra)
    _refused(run_cli, tmp_path, "--mteb-results", results, needles=("different HTEB revisions or selections", needle))


def test_refused_a_folder_that_does_not_exist(tmp_path, run_cli):
    _refused(run_cli, tmp_path, "--mteb-results", tmp_path / "nowhere", needles=("no such folder of mteb results",))


def test_refused_a_folder_without_htebs_results(tmp_path, run_cli):
    write_result(tmp_path / "cache", "SciFact", 0.5, "paraphrasing", 1)  # a variant, but no original
    _refused(run_cli, tmp_path, "--mteb-results", tmp_path / "cache", needles=("no mteb results of HTEB data",))


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("{not json", "not valid JSON"),
        ('{"task_name": "SciFact", "task_name": "STS12"}', "the key 'task_name' is given twice"),
        ("[1, 2]", "not a JSON object"),
        (json.dumps({"task_name": "SciFact", "dataset_revision": "r"}), "not an mteb task result (no scores)"),
        (json.dumps({"task_name": "SciFact", "scores": {"test": [{"hf_subset": "default"}]}}), "with a main_score"),
        (json.dumps({"task_name": "SciFact", "scores": {"test": [_entry("high")]}}), "not a finite number"),
        (json.dumps({"scores": {"test": [_entry(0.5)]}}), "no task_name"),
    ],
)
def test_refused_an_unreadable_task_file(results, tmp_path, run_cli, text, needle):
    bad = write_result(results, "SciFact", 0.5, text=text)
    _refused(run_cli, tmp_path, "--mteb-results", results, needles=(str(bad), needle))


def test_refused_beside_a_card_of_another_protocol_unless_forced(card_files, tmp_path, run_cli):
    """Files mteb.evaluate wrote were computed by mteb: protocol mteb, not the card's hteb."""
    card = json.loads(card_files[0].read_text())
    root = tmp_path / "cache"
    for transformation, seed in (("original", None), ("paraphrasing", 1)):
        write_result(root, "STSBenchmark", 0.7, transformation, seed, data_revision=card["dataset"]["revision"])
    _refused(
        run_cli,
        tmp_path,
        card_files[0],
        "--mteb-results",
        root,
        needles=("different evaluation protocols", f"mteb: {MODEL}", "--force"),
    )
    code, _, err = run_cli(
        "compare", card_files[0], "--mteb-results", root, "--force", "--out", tmp_path / "forced", "--splits", "5"
    )
    assert code == 0 and "FORCED" in err, err
