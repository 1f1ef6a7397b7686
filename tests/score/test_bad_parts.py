"""A part is checked as a revision is before `merge` (or a resumed run, or `tables`) builds anything
from it: every figure against the evaluator result it derives from and its metric's range, every
unit against its own dataset and its run's plan. Refused in one line naming the part, the dataset
and the field; nothing written. Parts are real (scored_parts.py), edited as a careless or hostile
hand would edit them."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_score.scoring.part_checks import LONGEST_S
from hteb_score.scoring.parts import PART_FILE
from refusal import assert_one_line, partials, run, snapshot
from scored_parts import scored_part, write_part


@pytest.fixture(scope="module")
def part_json(tmp_path_factory):
    folder = write_part(
        scored_part(["STSBenchmark"], transformations=["paraphrasing"]), tmp_path_factory.mktemp("part")
    )
    return (folder / PART_FILE).read_text()


def _original(unit):
    """The unit's main score of the original data, and the evaluator result it derives from."""
    record = next(r for r in unit["scores"] if (r["transformation"], r["subset"]) == ("original", "all"))
    result = next(r for r in unit["results"] if r["transformation"] == "original")
    return record, result


def _shift(data):
    record, _ = _original(data["units"][0])
    record["value"] = -0.1  # shown as -10.0 where its own evaluator result says otherwise


def _out_of_range(data):
    record, result = _original(data["units"][0])
    record["value"] = result["value"] = 7.5  # a Spearman of 7.5, both saying it


def _no_scores(data):
    data["units"][0]["scores"] = []


def _renamed(data):
    data["units"][0]["dataset"] = "SciFact"  # planned, but not what the unit holds


def _renamed_with_task(data):
    data["units"][0]["dataset"] = data["units"][0]["task"]["name"] = "SciFact"


def _other_variant(data):
    for row in data["units"][0]["scores"] + data["units"][0]["results"]:
        if row["transformation"] == "paraphrasing":
            row["transformation"] = "typos"


def _metric(data):
    record, _ = _original(data["units"][0])
    record["metric"] = "pearson"


CASES = {
    "record vs result": (
        _shift,
        (
            "unit 'STSBenchmark': scores: original/None all says spearman -0.1",
            "its evaluator result (results) spearman",
        ),
    ),
    "range": (
        _out_of_range,
        ("unit 'STSBenchmark': scores: original/None all spearman is 7.5", "outside spearman's range [-1, 1]"),
    ),
    "no score records": (_no_scores, ("unit 'STSBenchmark': no score records (scores is empty)",)),
    "renamed": (_renamed, ("unit 'SciFact': task.name is 'STSBenchmark'; the unit was renamed",)),
    "renamed with its task": (_renamed_with_task, ("unit 'SciFact': scores hold dataset 'STSBenchmark'",)),
    "variant not planned": (_other_variant, ("scores: variant typos/", "is not one its run planned")),
    "metric": (_metric, ("says pearson", "(results) spearman")),
}


@pytest.mark.parametrize("case", CASES)
def test_a_part_that_disagrees_with_itself_is_refused(case, part_json, tmp_path):
    edit, needles = CASES[case]
    data = json.loads(part_json)
    edit(data)
    folder = tmp_path / "part"
    folder.mkdir()
    (folder / PART_FILE).write_text(json.dumps(data))
    out = tmp_path / "merged"
    code, _, err = run("merge", folder, "--out", out)
    assert_one_line(code, err, str(folder), *needles)
    assert snapshot(out) == {} and partials(tmp_path) == []


def test_the_part_as_written_merges(part_json, tmp_path):
    folder = tmp_path / "part"
    folder.mkdir()
    (folder / PART_FILE).write_text(part_json)
    code, _, err = run("merge", folder, "--out", tmp_path / "merged")
    assert code == 0, err


@given(
    key=st.sampled_from(["total_s", "embed_s", "evaluate_s"]),
    value=st.one_of(
        st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False),
        st.floats(min_value=LONGEST_S * 1.001, allow_nan=False, allow_infinity=False),
        st.integers(min_value=10**308 * 10**10, max_value=10**2000),  # JSON's integers: beyond any float
        st.text(max_size=5),
        st.booleans(),
        st.none(),
    ),
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_stated_time_outside_a_year_or_not_a_number_is_refused(part_json, tmp_path_factory, key, value):
    """A part's timings are times: negative, beyond a year, or not a number is one line naming the part and the
    field (issue 46: a merge kept -1e9 s and 1e300 s), and nothing is written."""
    data = json.loads(part_json)
    data["timings"][key] = value
    folder = tmp_path_factory.mktemp("part")
    (folder / PART_FILE).write_text(json.dumps(data))
    out = folder.parent / (folder.name + "-merged")
    code, _, err = run("merge", folder, "--out", out)
    assert_one_line(code, err, str(folder), "timings")
    assert snapshot(out) == {}


def test_an_earlier_cards_timings_are_kept_only_where_they_are_times(part_json, tmp_path):
    folder = tmp_path / "part"
    folder.mkdir()
    (folder / PART_FILE).write_text(part_json)
    out = tmp_path / "merged"
    assert run("merge", folder, "--out", out)[0] == 0
    card = json.loads((out / "result_card.json").read_text())
    card["timings"]["total_s"] = -1e9
    (out / "result_card.json").write_text(json.dumps(card))
    code, stdout, err = run("merge", folder, "--out", out, "--overwrite", "--keep-timings")
    assert code == 0, err
    assert json.loads((out / "result_card.json").read_text())["timings"]["total_s"] >= 0 and "kept" not in stdout
