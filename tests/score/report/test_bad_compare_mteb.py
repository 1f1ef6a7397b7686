"""`compare --mteb-results` on folders it cannot read: one line, exit 2, nothing written; and what it
skips (other tasks' files, other studies' experiment folders)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fuzz import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
        (json.dumps({"task_name": "SciFact", "scores": {"test": [_entry("high")]}}), "is not a number: 'high'"),
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


#: mteb's main scores, on its 0-1 scale, by task: a correlation (STS), a rate (Retrieval), and of a task HTEB's
#: table does not name, any main score's.
MAIN_SCORE_RANGES = {"STSBenchmark": (-1.0, 1.0), "SciFact": (0.0, 1.0), "MyTask": (-1.0, 1.0)}


def bad_main_score(low: float, high: float) -> st.SearchStrategy:
    """A main score mteb never writes: outside its metric's range (50.0: points), true or false, text, or an
    integer beyond a float."""
    outside = st.floats(min_value=high, exclude_min=True, allow_infinity=False) | st.floats(
        max_value=low, exclude_max=True, allow_infinity=False
    )
    return outside | st.integers(2, 100) | st.booleans() | st.sampled_from(["0.5", "high"]) | st.integers(2**1024)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), task=st.sampled_from(sorted(MAIN_SCORE_RANGES)), after_null=st.booleans())
def test_fuzz_a_main_score_outside_its_range_or_no_number_is_refused(tmp_path_factory, run_cli, data, task, after_null):
    """Any variant's main score made one mteb never writes, alone or after a null one (a file mteb_interop reads as
    undefined): one line naming the file and the entry, nothing written; never 5,000 points."""
    tmp_path = tmp_path_factory.mktemp("mteb")
    root = tmp_path / "cache"
    write_result(root, task, 0.5)
    bad = data.draw(bad_main_score(*MAIN_SCORE_RANGES[task]))
    entries = [_entry(None), _entry(bad, "other")] if after_null else [_entry(bad)]
    transformation, seed = data.draw(st.sampled_from([("original", None), ("paraphrasing", 1)]))
    path = write_result(root, task, 0.5, transformation, seed)
    result = json.loads(path.read_text())
    result["scores"]["test"] = entries
    path.write_text(json.dumps(result))
    at = 1 if after_null else 0
    _refused(run_cli, tmp_path, "--mteb-results", root, needles=(f"{path}: scores.test[{at}].main_score",))


def test_a_negative_correlation_is_a_main_score(tmp_path, run_cli):
    """An STS main score below 0 lies in its correlation's range: compared, in points."""
    root = tmp_path / "cache"
    write_result(root, "STSBenchmark", -0.25)
    write_result(root, "STSBenchmark", -1.0, "paraphrasing", 1)
    code, _, err = run_cli("compare", "--mteb-results", root, "--out", tmp_path / "out", "--splits", "5")
    assert code == 0, err
    [row] = json.loads((tmp_path / "out" / "comparison.json").read_text())["leaderboard"]
    assert row["original"] == pytest.approx(-25.0) and row["axes"]["lexical"] == pytest.approx(-100.0)
