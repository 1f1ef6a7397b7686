"""`hteb-score --part DS --joins DIR` refuses, before it scores anything, a unit that `hteb-score merge` would
refuse beside DIR's parts for what the environment decides (hteb-score's version, a package's): a findings round
resumed on a machine whose install took another release learns it at its first unit, not after the last.
Parts are real: the bundled sample scored by the CLI with the constant null model, kept gzipped as the findings
rounds keep them (DATASET.hteb_part.json.gz)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest
from refusal import assert_one_line, partials, run, snapshot
from scored_parts import another_release

from hteb_contract.errors import HtebError
from hteb_score import __version__
from hteb_score.scoring.parts import PACKAGES, PART_FILE, PART_SUFFIX, merge_parts, package_versions, read_part

PLANNED = "STSBenchmark,SciFact"
MODEL = "hteb:constant?dim=8"


def _score(dataset: str, out: Path, *more: object) -> tuple[int, str, str]:
    return run(MODEL, "--datasets", PLANNED, "--part", dataset, "--out", out, "--quiet", *more)


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> dict[str, dict]:
    """SciFact's and STSBenchmark's parts of one run, scored here (their JSON)."""
    root = tmp_path_factory.mktemp("units")
    found = {}
    for dataset in PLANNED.split(","):
        code, _, err = _score(dataset, root / dataset)
        assert code == 0, err
        found[dataset] = json.loads((root / dataset / PART_FILE).read_text(encoding="utf-8"))
    return found


def _kept(folder: Path, data: dict, dataset: str = "SciFact") -> Path:
    """`data` kept as a round keeps a part: FOLDER/DATASET.hteb_part.json.gz."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{dataset}{PART_SUFFIX}"
    path.write_bytes(gzip.compress(json.dumps(data).encode("utf-8"), mtime=0))
    return path


def test_a_unit_joins_parts_of_this_environment_and_they_merge(scored, tmp_path):
    joined = tmp_path / "parts"
    kept = _kept(joined, scored["SciFact"])
    code, _, err = _score("STSBenchmark", tmp_path / "unit", "--joins", joined)
    assert code == 0, err
    code, _, err = run("merge", kept, tmp_path / "unit", "--out", tmp_path / "merged")
    assert code == 0, err


def test_a_models_first_unit_joins_no_parts(tmp_path):
    code, _, err = _score("STSBenchmark", tmp_path / "unit", "--joins", tmp_path / "not-yet")
    assert code == 0, err


def _other_environments(count: int) -> list[tuple[str, str, str]]:
    """(field, name, value): hteb-score's version or an installed package's changed to a generated release."""
    rng = random.Random(45)
    here = {**package_versions(), "hteb-score-version": __version__}
    cases = []
    for _ in range(count):
        name = rng.choice(sorted(here))
        field = "hteb_score_version" if name == "hteb-score-version" else f"package_versions.{name}"
        cases.append((field, name, another_release(rng, here[name])))
    return cases


@pytest.mark.parametrize(("field", "name", "value"), _other_environments(8))
def test_parts_of_another_environment_are_refused_before_scoring_as_merge_refuses_them(
    scored, tmp_path, field, name, value
):
    other = json.loads(json.dumps(scored["SciFact"]))
    if field == "hteb_score_version":
        other["identity"]["hteb_score_version"] = value
    else:
        other["identity"]["package_versions"][name] = value
    kept = _kept(tmp_path / "parts", other)
    before = snapshot(tmp_path / "parts")
    out = tmp_path / "unit"
    code, _, err = _score("STSBenchmark", out, "--joins", tmp_path / "parts")
    assert_one_line(code, err, f"{field}:", value, f"{kept.name} was scored under another environment")
    # what makes this environment that one, to type as it is: the hteb-score it had, or the exact install
    fix = f"use hteb-score {value}, which" if field == "hteb_score_version" else f"pip install {name}=={value}"
    assert err.rstrip().endswith(fix + (" scored it" if field == "hteb_score_version" else "")), err
    assert snapshot(out) == {} and partials(tmp_path) == [] and snapshot(tmp_path / "parts") == before
    # the oracle: merge refuses the unit this environment scores beside that part (a package: naming it)
    here = tmp_path / "here"
    _kept(here, scored["STSBenchmark"], "STSBenchmark")
    with pytest.raises(HtebError, match=value if field == "hteb_score_version" else field.replace(".", r"\.")):
        merge_parts([read_part(kept), read_part(here / f"STSBenchmark{PART_SUFFIX}")])


def test_a_package_the_parts_had_and_this_environment_lacks_is_refused(scored, tmp_path):
    other = json.loads(json.dumps(scored["SciFact"]))
    other["identity"]["package_versions"]["sentence-transformers-extra"] = "1.0.0"
    assert "sentence-transformers-extra" not in PACKAGES
    _kept(tmp_path / "parts", other)
    code, _, err = _score("STSBenchmark", tmp_path / "unit", "--joins", tmp_path / "parts")
    assert_one_line(code, err, "package_versions.sentence-transformers-extra")
    assert err.rstrip().endswith("pip install sentence-transformers-extra==1.0.0"), err


@pytest.mark.parametrize("seed", range(3))
def test_a_package_this_environment_has_and_the_parts_lacked_is_refused_with_its_uninstall(scored, tmp_path, seed):
    other = json.loads(json.dumps(scored["SciFact"]))
    recorded = other["identity"]["package_versions"]
    name = random.Random(seed).choice(sorted(set(recorded) - {"hteb-score"}))
    del recorded[name]
    _kept(tmp_path / "parts", other)
    code, _, err = _score("STSBenchmark", tmp_path / "unit", "--joins", tmp_path / "parts")
    assert_one_line(code, err, f"package_versions.{name}: null vs")
    assert err.rstrip().endswith(f"uninstall what it lacked: pip uninstall {name}"), err


@pytest.mark.parametrize(
    ("setup", "needle"),
    [
        ("file", "not a folder of parts"),
        ("damaged", "not JSON"),
    ],
)
def test_a_joins_that_is_no_folder_of_parts_is_one_line(scored, tmp_path, setup, needle):
    joins = tmp_path / "joins"
    if setup == "file":
        joins.write_text("x\n", encoding="utf-8")
    else:
        kept = _kept(joins, scored["SciFact"])
        kept.write_bytes(kept.read_bytes()[:-20])
    code, _, err = _score("STSBenchmark", tmp_path / "unit", "--joins", joins)
    assert_one_line(code, err, needle)
    assert snapshot(tmp_path / "unit") == {}


def test_joins_without_part_is_refused(tmp_path):
    code, _, err = run(MODEL, "--datasets", PLANNED, "--out", tmp_path / "out", "--joins", tmp_path)
    assert_one_line(code, err, "--joins names the parts a --part will be merged with")


@pytest.mark.parametrize(("seed", "odd"), enumerate(["\n", "\x1b]0;owned\x07", "\r", "\u202e", "\n\n"]))
def test_a_part_name_with_a_control_character_is_shown_escaped_in_one_line(scored, tmp_path, seed, odd):
    """The refusal names the part by its file name, which came from the folder: a line break, an escape sequence
    or a bidi override put into it at a random place is shown as its escape, never sent (by the CLI's one error
    line, cli/app.py, as every refusal is)."""
    rng = random.Random(seed)
    other = json.loads(json.dumps(scored["SciFact"]))
    other["identity"]["hteb_score_version"] = "0.0.1"
    at = rng.randrange(len("SciFact") + 1)
    _kept(tmp_path / "parts", other, "SciFact"[:at] + odd + "SciFact"[at:])
    code, _, err = _score("STSBenchmark", tmp_path / "unit", "--joins", tmp_path / "parts")
    assert_one_line(code, err, "was scored under another environment")
    assert not any(c in err[:-1] for c in "\n\r\x1b\u202e"), err
