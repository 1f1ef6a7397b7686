"""`hteb-score merge` refuses parts that are not of one run, in one line naming the difference, and
writes nothing; a dataset given twice is refused unless identical; a planned dataset no part holds
is named and flagged in the card. Parts are real: the bundled sample read, scored and split by the
scorer's own code, with a hashed bag-of-words encoder instead of a model (scored_parts.py)."""

from __future__ import annotations

import gzip
import json

import pytest

from hteb_score import __version__
from hteb_score.scoring.parts import PART_FILE
from refusal import assert_one_line, partials, run, snapshot
from scored_parts import ENCODE, SMALL, scored_part, with_identity, write_part


@pytest.fixture(scope="module")
def units(tmp_path_factory):
    """One part per small dataset of the sample, and the whole run as one part."""
    root = tmp_path_factory.mktemp("parts")
    return {name: write_part(scored_part([name]), root / name) for name in SMALL}


def _merge(*parts, out):
    return run("merge", *parts, "--out", out)


def test_parts_merge_and_name_every_dataset(units, tmp_path):
    code, out, err = _merge(*units.values(), out=tmp_path / "merged")
    assert code == 0, err
    card = json.loads((tmp_path / "merged" / "result_card.json").read_text())
    assert card["dataset"]["datasets"] == SMALL and not [f for f in card["flags"] if f["code"] == "missing_dataset"]
    assert "MISSING" not in out


# Each case: a part of STSBenchmark scored or stated otherwise than the other parts, and what the error names.
OTHER_RUNS = {
    "revision": (
        lambda: with_identity(
            scored_part(["STSBenchmark"]),
            dataset={"repo_id": "file:///elsewhere", "label": "sample-1339", "revision": "0" * 64},
        ),
        "dataset.repo_id",
    ),
    "protocol": (lambda: scored_part(["STSBenchmark"], protocol="mteb"), 'protocol: "hteb" vs "mteb"'),
    "model identity": (
        lambda: with_identity(
            scored_part(["STSBenchmark"]),
            model={**scored_part(["STSBenchmark"]).identity.model, "identity": "sha256:" + "1" * 64},
        ),
        "model.identity",
    ),
    "backend": (lambda: scored_part(["STSBenchmark"], encode={**ENCODE, "backend": "onnx"}), "encode.backend"),
    "precision": (lambda: scored_part(["STSBenchmark"], encode={**ENCODE, "precision": "fp16"}), "encode.precision"),
    "min_judge": (lambda: scored_part(["STSBenchmark"], min_judge=3.0), "selection.min_judge"),
    "on_error": (lambda: scored_part(["STSBenchmark"], on_error="keep"), "on_error"),
    "transformations": (lambda: scored_part(["STSBenchmark"], transformations=["paraphrasing"]), "transformations"),
    "seeds": (lambda: scored_part(["STSBenchmark"], seeds=[1339]), "seeds"),
    "planned datasets": (lambda: scored_part(["STSBenchmark"], planned=SMALL[:2]), "planned"),
}


@pytest.mark.parametrize("case", OTHER_RUNS)
def test_a_part_of_another_run_is_refused_naming_the_difference(case, units, tmp_path):
    make, needle = OTHER_RUNS[case]
    other = write_part(make(), tmp_path / "other")
    out = tmp_path / "merged"
    code, _, err = _merge(units["SciFact"], other, out=out)
    assert_one_line(code, err, needle, str(units["SciFact"]), str(other), "not parts of one run")
    assert snapshot(out) == {} and partials(tmp_path) == []


@pytest.mark.slow
def test_the_same_unit_twice_is_merged_once_when_identical(units, tmp_path):
    again = write_part(scored_part(["STSBenchmark"]), tmp_path / "again")  # scored again: the same unit
    code, _, err = _merge(*units.values(), out=tmp_path / "once")
    assert code == 0, err
    code, _, err = _merge(*units.values(), again, out=tmp_path / "twice")
    assert code == 0, err
    once, twice = (json.loads((tmp_path / n / "result_card.json").read_text()) for n in ("once", "twice"))
    assert [once[k] for k in ("scores", "aggregates", "statistics", "flags", "error_policy")] == [
        twice[k] for k in ("scores", "aggregates", "statistics", "flags", "error_policy")
    ]


def test_the_same_unit_twice_with_other_results_is_refused(units, tmp_path):
    changed = tmp_path / "changed"
    changed.mkdir()
    data = json.loads((units["STSBenchmark"] / PART_FILE).read_text())
    record = data["units"][0]["scores"][0]  # changed with the evaluator result it derives from
    result = next(
        r
        for r in data["units"][0]["results"]
        if (r["transformation"], r["seed"]) == (record["transformation"], record["seed"])
    )
    assert record["subset"] == "all" and result["value"] == record["value"]
    record["value"] = result["value"] = record["value"] + 0.01
    (changed / PART_FILE).write_text(json.dumps(data))
    code, _, err = _merge(*units.values(), changed, out=tmp_path / "merged")
    assert_one_line(code, err, "both hold STSBenchmark with different results", str(changed))
    assert snapshot(tmp_path / "merged") == {}


@pytest.mark.slow
def test_a_missing_dataset_is_stated_and_flagged_never_averaged_away(units, tmp_path):
    code, out, err = _merge(units["STSBenchmark"], units["SciFact"], units["SemRel2024"], out=tmp_path / "merged")
    assert code == 0, err
    assert "MISSING 1 dataset(s): TwitterSemEval2015" in out
    card = json.loads((tmp_path / "merged" / "result_card.json").read_text())
    assert [(f["code"], f["dataset"]) for f in card["flags"] if f["code"] == "missing_dataset"] == [
        ("missing_dataset", "TwitterSemEval2015")
    ]
    assert card["dataset"]["datasets"] == ["STSBenchmark", "SemRel2024", "SciFact"]
    assert {row["dataset"] for row in card["aggregates"]["per_dataset"]} == {"STSBenchmark", "SemRel2024", "SciFact"}
    assert "missing_dataset" in (tmp_path / "merged" / "result_card.md").read_text()
    # the aggregates are those of the three datasets scored, as one run over them has them
    code, _, err = _merge(
        write_part(scored_part(None, planned=["STSBenchmark", "SemRel2024", "SciFact"]), tmp_path / "three"),
        out=tmp_path / "three-run",
    )
    assert code == 0, err
    three = json.loads((tmp_path / "three-run" / "result_card.json").read_text())
    assert card["aggregates"] == three["aggregates"] and card["statistics"] == three["statistics"]


def _damaged(tmp_path, text):
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / PART_FILE).write_text(text)
    return folder


@pytest.mark.parametrize(
    "text, needle",
    [
        ("{not json", "not valid JSON"),
        ('{"format": "hteb-score part/1", "format": "x"}', "the key 'format' is given twice"),
        ("[]", "not a part of this hteb-score"),
        (json.dumps({"format": "hteb-score part/0"}), "format 'hteb-score part/0'"),
        (
            json.dumps({"format": "hteb-score part/1", "identity": {}, "units": [{"dataset": "X"}], "timings": {}}),
            "damaged part",
        ),
    ],
)
def test_a_damaged_part_is_refused(text, needle, units, tmp_path):
    folder = _damaged(tmp_path, text)
    code, _, err = _merge(units["SciFact"], folder, out=tmp_path / "merged")
    assert_one_line(code, err, needle, str(folder))
    assert snapshot(tmp_path / "merged") == {}


def test_a_damaged_gzipped_part_is_refused(units, tmp_path):
    part = tmp_path / "part.hteb_part.json.gz"
    part.write_bytes(gzip.compress(b'{"format": "hteb-score part/1"')[:-4])  # cut short
    code, _, err = _merge(units["SciFact"], part, out=tmp_path / "merged")
    assert_one_line(code, err, "not JSON", str(part))
    assert snapshot(tmp_path / "merged") == {}


def test_a_part_of_another_hteb_score_version_is_refused(units, tmp_path):
    data = json.loads((units["SciFact"] / PART_FILE).read_text())
    data["identity"]["hteb_score_version"] = "0.0.1"
    folder = _damaged(tmp_path, json.dumps(data))
    code, _, err = _merge(folder, units["STSBenchmark"], out=tmp_path / "merged")
    assert_one_line(code, err, "written by hteb-score 0.0.1", __version__)


def test_a_unit_outside_its_runs_plan_is_refused(units, tmp_path):
    data = json.loads((units["SciFact"] / PART_FILE).read_text())
    data["units"][0]["dataset"] = "Banking77"
    folder = _damaged(tmp_path, json.dumps(data))
    code, _, err = _merge(folder, out=tmp_path / "merged")
    assert_one_line(code, err, "Banking77 is not one of its run's planned datasets")


def test_a_folder_that_is_no_part_and_no_parts_at_all_are_refused(units, tmp_path):
    code, _, err = _merge(units["SciFact"], tmp_path, out=tmp_path / "merged")
    assert_one_line(code, err, f"no {PART_FILE}")
    code, _, err = run("merge", "--out", tmp_path / "merged")
    assert_one_line(code, err, "PARTS")


def test_merge_never_replaces_a_folder_that_holds_no_result(units, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    code, _, err = _merge(*units.values(), out=tmp_path / "taken")
    assert_one_line(code, err, "non-empty folder without result_card.json")
    assert snapshot(tmp_path / "taken") == {"notes.txt": b"mine"}


def test_part_must_name_datasets_of_the_run(tmp_path):
    """--part names the run's own datasets; refused before any model loads."""
    code, _, err = run("--datasets", "STSBenchmark,SciFact", "--part", "Banking77", "--out", tmp_path / "p", "--quiet")
    assert_one_line(code, err, "--part Banking77 is not one of the run's datasets: STSBenchmark, SciFact")
    code, _, err = run("--datasets", "STSBenchmark", "--part", "", "--out", tmp_path / "p", "--quiet")
    assert_one_line(code, err, "--part is empty")
    assert snapshot(tmp_path / "p") == {}
