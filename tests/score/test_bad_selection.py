"""--preset and --min-judge: refused in one line, before any model loads, when they cannot apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from hteb_contract.stores.local import LocalStore
from refusal import assert_one_line, run, snapshot
from revision_factory import build_revision


@pytest.fixture(scope="module")
def unjudged_store(shared_data, tmp_path_factory) -> Path:
    """A rule-made revision (no judge scores), paraphrasing only."""
    root = tmp_path_factory.mktemp("unjudged")
    build_revision(root / "rev", shared_data, ["STSBenchmark"], label="rules-1")
    LocalStore(root / "store").publish(root / "rev")
    return root / "store"


def test_refused_min_judge_on_a_revision_no_judge_rated(unjudged_store, tmp_path):
    code, _, err = run("--store", unjudged_store, "--revision", "rules-1", "--min-judge", "3", "--out", tmp_path / "o")
    assert_one_line(code, err, "--min-judge 3", "no judge scores")
    assert snapshot(tmp_path / "o") == {}


def test_refused_preset_on_a_revision_without_its_transformations(unjudged_store, tmp_path):
    code, _, err = run(
        "--store", unjudged_store, "--revision", "rules-1", "--preset", "minimal", "--out", tmp_path / "o"
    )
    assert_one_line(code, err, "--preset minimal", "expansion / summarisation")
    assert snapshot(tmp_path / "o") == {}


@pytest.mark.parametrize(
    "args, needle",
    [
        (("--preset", "minimal", "--datasets", "SciFact"), "drop --datasets/--transformations"),
        (("--preset", "minimal", "--transformations", "paraphrasing"), "drop --datasets/--transformations"),
        (("--min-judge", "0"), "--min-judge"),
        (("--min-judge", "5.5"), "--min-judge"),
        (("--min-judge", "nan"), "--min-judge': nan is not a number from 1 to 5"),
        (("--preset", "quick"), "--preset"),
    ],
)
def test_refused_selection_option(args, needle, tmp_path):
    code, _, err = run(*args, "--out", tmp_path / "o")
    assert_one_line(code, err, needle)
    assert snapshot(tmp_path / "o") == {}


def test_refused_selection_with_source_dir(shared_data, tmp_path):
    code, _, err = run("--source-dir", shared_data, "--min-judge", "3", "--out", tmp_path / "o")
    assert_one_line(code, err, "--source-dir", "--min-judge")
