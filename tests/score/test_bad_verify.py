"""`hteb-score verify` options that name nothing usable: one line, exit 2, nothing written."""

from __future__ import annotations

import pytest

from hteb_contract.stores.local import LocalStore
from hteb_score.cli import main
from revision_factory import build_revision


@pytest.fixture(scope="module")
def store(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("verify")
    build_revision(root / "rev", shared_data, ["STSBenchmark"], label="v1", rows=2)
    LocalStore(root / "store").publish(root / "rev")
    return root / "store"


# id -> (--datasets value, what the one line says)
DATASETS = {
    "only-commas": (",", "--datasets ',' names no dataset; leave it out to verify all"),
    "blank": ("  ", "--datasets '  ' names no dataset"),
    "empty": ("", "--datasets '' names no dataset"),
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
