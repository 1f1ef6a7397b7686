"""A part is checked as a revision is before `merge` (or a resumed run, or `tables`) builds anything
from it: every figure against the evaluator result it derives from and its metric's range, every
unit against its own dataset and its run's plan. Refused in one line naming the part, the dataset
and the field; nothing written. Parts are real (scored_parts.py), edited as a careless or hostile
hand would edit them."""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_contract.errors import HtebError
from hteb_score.evaluators.outcomes import Outcomes
from hteb_score.scoring.part_checks import COLUMNS, LONGEST_S, OUTCOME_COLUMNS, check_part_shape
from hteb_score.scoring.parts import DRIFT_COLUMNS, PART_FILE, PART_SUFFIX, read_part
from hteb_score.scoring.run_folder import PARTS
from hteb_score.scoring.sensitivity import COLUMNS as SENSITIVITY_COLUMNS
from hteb_score.scoring.sensitivity import HARD_COLUMNS
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


# A part whose fields have the wrong type or shape: a field anywhere in a real part (the null models' parts of one
# run, scored by the CLI) replaced by a value of another JSON type. `merge`, `--part --joins` and a resumed run of
# units read parts through one reader (parts.read_part), which holds each field to the type and shape its writer
# writes before any code uses it: a refusal is one line naming the part file and the field, and nothing is written;
# what is accepted is a part that reads back as the writer writes it (and makes a valid card).

PLANNED = "STSBenchmark,SciFact"
RANDOM, CONSTANT = "hteb:random", "hteb:constant?dim=8"


@pytest.fixture(scope="module")
def null_parts(tmp_path_factory) -> dict[tuple[str, str], Path]:
    """(model, dataset) -> the folder of its part: both datasets of hteb:random (a cosine per item, explorer rows,
    outcomes of two measures), STSBenchmark of hteb:constant (flags, null scores)."""
    root = tmp_path_factory.mktemp("null-parts")
    found = {}
    for model, dataset in ((RANDOM, "STSBenchmark"), (RANDOM, "SciFact"), (CONSTANT, "STSBenchmark")):
        folder = root / f"{model.split('?')[0].replace(':', '_')}-{dataset}"
        code, _, err = run(model, "--datasets", PLANNED, "--part", dataset, "--out", folder, "--quiet")
        assert code == 0, err
        found[model, dataset] = folder
    return found


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}[type(value)]


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=6))
#: a value of each JSON type: numbers of any size (an integer beyond a float too), text that reads as a number
VALUES = {
    "string": st.one_of(st.text(max_size=6), st.sampled_from(["0.5", "nan", "", "STSBenchmark"])),
    "number": st.one_of(st.integers(), st.integers(min_value=10**308 * 10, max_value=10**400), st.just(0)),
    "array": st.lists(_SCALARS, max_size=3),
    "object": st.dictionaries(st.text(max_size=5), _SCALARS, max_size=3),
    "null": st.none(),
    "boolean": st.booleans(),
}


def _fields(data: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every value in `data`, containers and what they hold, at any depth."""
    if path:
        yield path
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in items:
        yield from _fields(value, (*path, key))


def _kind(path: tuple[Any, ...]) -> tuple[Any, ...]:
    """A field's path with every list index as [] and every key of a mapping of names (datasets, subsets,
    metrics, packages, prompts) as *: what one draws a field by, so a column of 64 values weighs as one."""
    out = []
    for key in path:
        named = out[-1:] in (["subsets"], ["details"], ["package_versions"], ["languages"], ["prompts"], ["timings"])
        out.append("[]" if isinstance(key, int) else "*" if named or out[-2:] == ["details", "*"] else key)
    return tuple(out)


def _at(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _replaced(data: Any, path: tuple[Any, ...], value: Any) -> Any:
    edited = json.loads(json.dumps(data))
    _at(edited, path[:-1])[path[-1]] = value
    return edited


def _field_name(path: tuple[Any, ...]) -> str:
    """As a refusal names it: units[0].scores[3].value."""
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


@st.composite
def damage(draw, parts: dict[Path, dict]) -> tuple[Path, tuple[Any, ...], Any]:
    """(the part, the path of a field of it, a value of another JSON type than the field's)."""
    folder = draw(st.sampled_from(sorted(parts)))
    by_kind: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for path in _fields(parts[folder]):
        by_kind.setdefault(_kind(path), []).append(path)
    paths = by_kind[draw(st.sampled_from(sorted(by_kind, key=repr)))]
    path = draw(st.sampled_from(paths))
    other = draw(st.sampled_from(sorted(set(VALUES) - {_json_type(_at(parts[folder], path))})))
    return folder, path, draw(VALUES[other])


def assert_names_the_field(err: str, part: Path, path: tuple[Any, ...]) -> None:
    """One line naming the part (its file, or its folder as given) and the field: where the shape is wrong, the
    field's path, a block holding it or a value in it (the value put there); where what it says disagrees with the
    rest of the part, a key on its path (transformations, scores) or its unit."""
    assert str(part) in err, (str(part), err)
    if ": damaged part: " in err:
        named, field = err.split(": damaged part: ", 1)[1].split(": ", 1)[0].split(" ")[0], _field_name(path)
        assert field.startswith(named) or named.startswith(field), (path, err)  # the field, its block, or in it
    else:  # a unit's records and results disagreeing: which of them was edited, only the unit knows
        named = [key for key in path if isinstance(key, str) and key in err]
        assert named or (path[0] == "units" and "unit '" in err), (path, err)


def assert_read_as_written(part: Path) -> None:
    """An accepted part is one its writer could have written: read, it writes back the JSON it holds."""
    data = json.loads(part.read_text(encoding="utf-8"))
    assert json.loads(json.dumps(read_part(part).to_json())) == data


class Written(dict):
    """Part file -> its JSON, shown by its files alone (a failing example prints its arguments)."""

    def __repr__(self) -> str:
        return f"Written({sorted(self)})"


@pytest.fixture(scope="module")
def part_data(null_parts) -> Written:
    return Written({folder / PART_FILE: json.loads((folder / PART_FILE).read_text()) for folder in null_parts.values()})


def _partner(null_parts, part: Path) -> list[Path]:
    """The part merged beside the edited one: hteb:random's other dataset (hteb:constant's is merged alone)."""
    for (model, dataset), folder in null_parts.items():
        if folder == part.parent and model == RANDOM:
            other = "SciFact" if dataset == "STSBenchmark" else "STSBenchmark"
            return [null_parts[RANDOM, other]]
    return []


@given(data=st.data())
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_field_of_another_type_is_refused_by_merge_naming_the_part_and_the_field(
    null_parts, part_data, tmp_path_factory, data
):
    written, path, value = data.draw(damage(part_data))
    folder = tmp_path_factory.mktemp("edited")
    (folder / PART_FILE).write_text(json.dumps(_replaced(part_data[written], path, value)), encoding="utf-8")
    out = folder / "merged"
    code, _, err = run("merge", folder, *_partner(null_parts, written), "--out", out)
    if code == 0:
        assert_read_as_written(folder / PART_FILE)
        assert (out / "result_card.json").is_file()
    else:
        assert_one_line(code, err)
        assert_names_the_field(err, folder, path)
        assert snapshot(out) == {} and partials(folder) == []


def _kept(folder: Path, data: dict, dataset: str) -> Path:
    """`data` kept as a findings round keeps a part: FOLDER/DATASET.hteb_part.json.gz."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dataset}{PART_SUFFIX}"
    path.write_bytes(gzip.compress(json.dumps(data).encode("utf-8"), mtime=0))
    return path


@given(data=st.data())
@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_field_of_another_type_beside_joins_is_refused_before_the_unit_is_scored(
    null_parts, part_data, tmp_path_factory, data
):
    """`--part SciFact --joins DIR`: DIR's part of STSBenchmark with a field of another type is one line naming it
    and the field, before SciFact is scored; one still valid lets the unit be scored."""
    written = null_parts[RANDOM, "STSBenchmark"] / PART_FILE
    _, path, value = data.draw(damage(Written({written: part_data[written]})))
    root = tmp_path_factory.mktemp("joins")
    kept = _kept(root / "parts", _replaced(part_data[written], path, value), "STSBenchmark")
    out = root / "unit"
    code, _, err = run(
        RANDOM, "--datasets", PLANNED, "--part", "SciFact", "--out", out, "--quiet", "--joins", kept.parent
    )
    if code == 0:
        assert read_part(kept) and (out / PART_FILE).is_file()
    else:
        assert_one_line(code, err)
        assert_names_the_field(err, kept, path)
        assert snapshot(out) == {} and partials(root) == []


@pytest.fixture(scope="module")
def resumable(tmp_path_factory) -> tuple[tuple[str, ...], Path, dict[str, dict]]:
    """A run of two models' units, finished: its command, its folder and its cards."""
    command = (RANDOM, CONSTANT, "--datasets", PLANNED, "--quiet")
    out = tmp_path_factory.mktemp("resumable") / "out"
    code, _, err = run(*command, "--out", out)
    assert code == 0, err
    return command, out, _cards(out)


def _cards(out: Path) -> dict[str, dict]:
    cards = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/result_card.json")}
    for card in cards.values():
        card.pop("created", None), card.pop("timings", None)
    return cards


@given(data=st.data())
@settings(max_examples=examples(12), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_a_kept_part_with_a_field_of_another_type_is_scored_again_on_resume(resumable, tmp_path_factory, data):
    """A resumed run meets its kept part of hteb:random on STSBenchmark with a field of another type: a part that
    is no longer one its writer writes is scored again (as a cut-short one is) and the run ends with the cards it
    made before; one still valid is the edited part it is, refused in one line (scoring/run_folder.py)."""
    command, first, cards = resumable
    out = tmp_path_factory.mktemp("resumed") / "out"
    shutil.copytree(first, out)
    part = out / PARTS / "hteb_random" / "STSBenchmark" / PART_FILE
    written = json.loads(part.read_text())
    _, path, value = data.draw(damage(Written({part: written})))
    part.write_text(json.dumps(_replaced(written, path, value)))
    try:
        valid = read_part(part.parent) is not None
    except HtebError:
        valid = False
    code, _, err = run(*command, "--out", out)
    if valid:
        assert_one_line(code, err, str(part.parent.relative_to(out)), "swapped or edited")
    else:
        assert code == 0, err
        assert "3 kept from an earlier run, 1 to score" in err
        again = json.loads(part.read_text())
        assert {k: v for k, v in again.items() if k != "timings"} == {
            k: v for k, v in written.items() if k != "timings"
        }
        assert _cards(out) == cards


# The audit's cases (issue: a traceback where a part's field had another type), through each reader.
AUDITED = {
    "explorer": (("units", 0, "explorer"), "x", "units[0].explorer: 'x' is not of type 'array'"),
    "planned": (("identity", "planned"), 5, "identity.planned: 5 is not of type 'array'"),
    "settings": (("units", 0, "settings"), [1], "units[0].settings: [1] is not of type 'object' or 'null'"),
}


@pytest.mark.parametrize("case", AUDITED)
def test_the_audited_fields_of_another_type_are_one_line_in_merge_and_joins(case, null_parts, part_data, tmp_path):
    path, value, needle = AUDITED[case]
    written = null_parts[RANDOM, "STSBenchmark"] / PART_FILE
    edited = _replaced(part_data[written], path, value)
    folder = tmp_path / "part"
    folder.mkdir()
    (folder / PART_FILE).write_text(json.dumps(edited))
    code, _, err = run("merge", folder, null_parts[RANDOM, "SciFact"], "--out", tmp_path / "merged")
    assert_one_line(code, err, f"{folder / PART_FILE}: damaged part: {needle}")
    assert snapshot(tmp_path / "merged") == {}
    kept = _kept(tmp_path / "parts", edited, "STSBenchmark")
    code, _, err = run(
        RANDOM,
        "--datasets",
        PLANNED,
        "--part",
        "SciFact",
        "--out",
        tmp_path / "unit",
        "--quiet",
        "--joins",
        kept.parent,
    )
    assert_one_line(code, err, f"{kept}: damaged part: {needle}")
    assert snapshot(tmp_path / "unit") == {}


@pytest.mark.parametrize("case", AUDITED)
def test_the_audited_fields_of_another_type_are_scored_again_on_resume(case, resumable, tmp_path):
    command, first, cards = resumable
    path, value, _ = AUDITED[case]
    out = tmp_path / "out"
    shutil.copytree(first, out)
    part = out / PARTS / "hteb_random" / "STSBenchmark" / PART_FILE
    part.write_text(json.dumps(_replaced(json.loads(part.read_text()), path, value)))
    code, _, err = run(*command, "--out", out)
    assert code == 0 and "Traceback" not in err, err
    assert "3 kept from an earlier run, 1 to score" in err and read_part(part.parent)
    assert _cards(out) == cards


def test_a_kept_part_edited_but_still_valid_is_refused_on_resume_as_edited(resumable, tmp_path):
    """What a resumed run does not score again: a kept part that still reads as its writer writes it, edited (a
    setting null, as a unit that evaluated nothing has it) is not the part this run kept: one line."""
    command, first, _ = resumable
    out = tmp_path / "out"
    shutil.copytree(first, out)
    part = out / PARTS / "hteb_random" / "STSBenchmark" / PART_FILE
    part.write_text(json.dumps(_replaced(json.loads(part.read_text()), ("units", 0, "settings"), None)))
    assert read_part(part.parent).units[0].settings is None
    code, _, err = run(*command, "--out", out)
    assert_one_line(code, err, "parts/hteb_random/STSBenchmark holds a part this run did not keep", "swapped or edited")


def test_the_checked_columns_are_the_writers():
    """The columns a part's shape is checked by are those its writer writes, each block's and each outcome's."""
    assert list(COLUMNS["drift"]) == ["drift", *[c for c in DRIFT_COLUMNS if c != "drift"]]
    assert set(COLUMNS["sensitivity"]) == set(SENSITIVITY_COLUMNS)
    assert set(COLUMNS["hard_twins"]) == set(HARD_COLUMNS)
    assert [next(iter(COLUMNS[block])) for block in ("sensitivity", "hard_twins")] == ["pair", "pair"]
    assert OUTCOME_COLUMNS == tuple(f.name for f in dataclasses.fields(Outcomes))[1:]


def _sensitivity(data: dict) -> dict:
    """A minimal-pair block of two rows, as sensitivity.item_row writes them (of the unit's paraphrasing)."""
    rows = [
        {"item": f"i{n}", "pair": "paraphrasing", "seed": 1339, "language": "eng", "kept_cosine": 0.9,
         "changed_cosine": 0.5, "baseline_drift": 0.7, "twin_keeps_top1": None, "changed_keeps_top1": None}
        for n in range(2)
    ]  # fmt: skip
    return {column: [row[column] for row in rows] for column in SENSITIVITY_COLUMNS}


def _set(path: tuple[Any, ...], value: Any):
    return lambda data: _at(data, path[:-1]).__setitem__(path[-1], value)


def _shorter(path: tuple[Any, ...]):
    return lambda data: _at(data, path).pop()


def _with_sensitivity(change):
    def edit(data: dict) -> None:
        data["units"][0]["sensitivity"] = block = _sensitivity(data)
        change(block)

    return edit


# Shapes a value of another type does not make: columns of two lengths, numbers beyond what reads them, a float
# where the writer writes an integer, a value of the type a column of another measure holds.
SHAPES = {
    "drift column short": (
        _shorter(("units", 0, "drift", "quality")),
        "units[0].drift.quality holds 63 values, units[0].drift.drift 64",
    ),
    "outcomes column short": (
        _shorter(("units", 0, "results", 0, "outcomes", "predicted")),
        "units[0].results[0].outcomes.predicted holds 3 values, units[0].results[0].outcomes.subset 4",
    ),
    "score beyond a float": (
        _set(("units", 0, "scores", 0, "value"), 10**400),
        "units[0].scores[0].value: 1000",
    ),
    "seed beyond 64 bits": (_set(("units", 0, "scores", 1, "seed"), 2**64), "is an integer beyond 64 bits"),
    "a float for an integer": (
        _set(("units", 0, "error_policy", 0, "seed"), 1339.0),
        "units[0].error_policy[0].seed: 1339.0 is not of type 'integer'",
    ),
    "a score as text": (_set(("units", 0, "scores", 0, "value"), "0.8"), "'0.8' is not a number or the name"),
    "no gold for spearman": (
        _set(("units", 0, "results", 0, "outcomes", "gold", 2), None),
        "units[0].results[0].outcomes.gold[2]: None is not of type 'number'",
    ),
    "a minimal pair's cosine as text": (
        _with_sensitivity(lambda block: block["kept_cosine"].__setitem__(1, "0.9")),
        "units[0].sensitivity.kept_cosine[1]: '0.9' is not of type 'number'",
    ),
    "a minimal pair's column short": (
        _with_sensitivity(lambda block: block["item"].pop()),
        "units[0].sensitivity.item holds 1 values, units[0].sensitivity.pair 2",
    ),
    "no minimal pair": (
        _with_sensitivity(lambda block: block.update({column: [] for column in block})),
        "units[0].sensitivity.pair: [] should be non-empty",
    ),
}


@pytest.mark.parametrize("case", SHAPES)
def test_a_part_of_another_shape_is_refused_naming_the_field(case, null_parts, part_data, tmp_path):
    edit, needle = SHAPES[case]
    written = null_parts[RANDOM, "STSBenchmark"] / PART_FILE
    data = json.loads(json.dumps(part_data[written]))
    edit(data)
    folder = tmp_path / "part"
    folder.mkdir()
    (folder / PART_FILE).write_text(json.dumps(data))
    code, _, err = run("merge", folder, null_parts[RANDOM, "SciFact"], "--out", tmp_path / "merged")
    assert_one_line(code, err, f"{folder / PART_FILE}: damaged part: ", needle)
    assert snapshot(tmp_path / "merged") == {}


def test_the_sensitivity_block_as_written_passes_the_shape_check(part_data):
    """The hand-made minimal-pair block above is of its writer's shape (so the refusals above are the edits')."""
    data = json.loads(json.dumps(next(iter(part_data.values()))))
    data["units"][0]["sensitivity"] = _sensitivity(data)
    check_part_shape(data, "part")
