"""A revision folder is what `datasets.load_dataset(REPO, CONFIG, revision=...)` and the Hub's dataset
viewer read: every config and every split must load, which needs one Arrow schema for all item files."""

from __future__ import annotations

from dataclasses import replace

import pyarrow.parquet as pq
import pytest
from revision_factory import build_revision

from hteb_contract.arrow import arrow_schema
from hteb_contract.records import ItemRecord, Judge
from hteb_contract.revision import Revision
from hteb_contract.stores import open_store


def _load_every_split(root, manifest) -> dict[tuple[str, str], int]:
    import datasets

    rows = {}
    revision = Revision.open(root)
    for name in revision.dataset_names():
        loaded = datasets.load_dataset(str(root), name)
        assert sorted(loaded) == sorted(f"{t}_{s}" for t, s in revision.variants(name))
        for split, table in loaded.items():
            rows[(name, split)] = table.num_rows
    return rows


def test_every_item_file_has_the_schema_derived_from_the_item_json_schema(tmp_path, shared_data):
    root = tmp_path / "rev"
    build_revision(root, shared_data, ["STSBenchmark", "SciFact"], transformations=("paraphrasing", "translation"))
    files = sorted((root / "data").rglob("*.parquet"))
    assert len(files) == 4
    for path in files:
        assert pq.read_schema(path).equals(arrow_schema("item"))


def test_load_dataset_reads_every_config_and_split_even_where_columns_are_all_null(tmp_path, shared_data):
    """Judge scores null in one split and set in another, target languages set in one transformation
    only: the case that failed with "Couldn't cast array of type string to null"."""

    def judged_translation(record: ItemRecord) -> ItemRecord:
        if record.transformation == "translation" and record.seed == 1338:
            return replace(record, target_language="spa", judge=Judge("judge", 4.0, 5.0, -0.25))
        return record

    root = tmp_path / "rev"
    manifest = build_revision(
        root,
        shared_data,
        ["STSBenchmark", "Banking77"],
        edit=judged_translation,
        transformations=("paraphrasing", "translation"),
        seeds=(1337, 1338),
    )
    rows = _load_every_split(root, manifest)
    assert len(rows) == 8
    per_file = {
        (e["path"].split("/")[1], e["path"].split("/")[2][: -len(".parquet")]): e["rows"]
        for e in manifest["files"]
        if e["path"].startswith("data/")
    }
    assert rows == per_file


@pytest.mark.slow
def test_load_dataset_reads_every_config_and_split_of_the_bundled_sample():
    from hteb_score import SAMPLE_REVISION, SAMPLE_STORE

    revision = open_store(str(SAMPLE_STORE)).fetch(SAMPLE_REVISION)
    rows = _load_every_split(revision.root, revision.manifest)
    assert len(rows) == sum(len(revision.variants(n)) for n in revision.dataset_names()) == 64
