"""`hteb-score verify` options that name nothing usable: one line, exit 2, nothing written."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hteb_contract.stores.local import LocalStore
from hteb_contract.errors import HtebError
from hteb_score.cli import main
from hteb_score.cli.options import names
from refusal import run
from revision_factory import build_revision


@pytest.fixture(scope="module")
def store(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("verify")
    build_revision(root / "rev", shared_data, ["STSBenchmark"], label="v1", rows=2)
    LocalStore(root / "store").publish(root / "rev")
    return root / "store"


# id -> (--datasets value, what the one line says)
DATASETS = {
    "only-commas": (",", "--datasets ',' names nothing; leave it out for the default"),
    "blank": ("  ", "--datasets is empty; leave it out for the default"),
    "empty": ("", "--datasets is empty; leave it out for the default"),
    "empty-between": ("STSBenchmark,,STSBenchmark", "has an empty name between commas"),
    "twice": ("STSBenchmark,STSBenchmark", "--datasets names 'STSBenchmark' twice"),
    "unknown": ("STSBenchmark,Nope", "revision v1 has no dataset 'Nope'; it has: STSBenchmark"),
    "case-differs": ("stsbenchmark", "revision v1 has no dataset 'stsbenchmark'"),
}


@pytest.mark.parametrize("case", DATASETS)
def test_refused_verify_datasets(store, capsys, case):
    value, expected = DATASETS[case]
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    assert main(["verify", "--store", str(store), "--revision", "v1", "--datasets", value]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith("hteb-score: error: ") and expected in captured.err
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before


@given(st.lists(st.sampled_from(["", " ", "STSBenchmark", "SciFact", "x"]), min_size=1, max_size=4).map(",".join))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_verify_and_merge_read_a_list_of_datasets_through_one_door(store, tmp_path_factory, value):
    """`verify --datasets` and `merge --datasets` refuse a list in the words of the one reader of a list of names
    (cli/options.names: nothing named, an empty name between commas, a name twice), before anything is read."""
    try:
        names(value, "--datasets")
    except HtebError as err:
        expected = f"hteb-score: error: {err}\n"
    else:
        assume(False)  # a list the door lets through: what happens next is each command's own
    assert run("verify", "--store", store, "--revision", "v1", "--datasets", value)[1:] == ("", expected)
    out = tmp_path_factory.mktemp("merged") / "out"
    assert run("merge", store, "--datasets", value, "--out", out)[1:] == ("", expected) and not out.exists()
