"""What is scored is what was verified (issue 24 item 1): hteb-score checks every file of a revision
before the model loads, then reads the data again dataset by dataset while scoring. A file replaced
in between (here by the same dataset's items file of another revision: sound records, other texts)
used to be scored, and the card carried its scores under the verified revision's hash. Every read
now hashes the bytes it parses and refuses others."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hteb_contract.errors import IntegrityError
from hteb_score.evaluators.protocol import PROTOCOLS
from hteb_score.scoring.data import read_data
from hteb_score.scoring.options import ScoreOptions
from revision_factory import build_revision, install

ITEMS = "data/STSBenchmark/paraphrasing_1337.parquet"


def _upper(text: str) -> str:
    return text.upper()


@pytest.fixture
def stores(tmp_path, shared_data) -> tuple[Path, Path]:
    """The store scored, and the object folder of another revision of the same datasets."""
    names = ["STSBenchmark", "TwitterSemEval2015"]
    build_revision(tmp_path / "rev", shared_data, names, label="v1", rows=4)
    build_revision(tmp_path / "other", shared_data, names, label="v1", rows=4, rule=_upper)
    digest = install(tmp_path / "store", tmp_path / "rev")
    return tmp_path / "store", tmp_path / "store" / "objects" / digest


@pytest.mark.parametrize("swapped", [ITEMS, "data/TwitterSemEval2015/paraphrasing_1337.parquet"])
def test_a_file_swapped_after_the_check_is_not_scored(stores, tmp_path, swapped):
    store, obj = stores
    options = ScoreOptions(
        model_id=None, protocol=PROTOCOLS.get("hteb"), encoder="sentence-transformers", store=str(store), ref="v1"
    )
    data = read_data(options)  # every file verified, every variant read and checked once
    target = obj / swapped
    target.chmod(0o644)
    shutil.copy(tmp_path / "other" / swapped, target)  # a sound items file, of other texts
    with pytest.raises(IntegrityError) as refused:
        for variants in data.groups:  # what the scoring loop reads, dataset by dataset
            for variant in variants:
                assert variant.dataset.tables
    assert f"file {swapped} changed after it was verified (sha256 mismatch)" in str(refused.value)
