"""The Hub store, offline: fetching a revision from a prepared Hugging Face cache
(HF_HUB_OFFLINE=1), exactly as snapshot_download lays it out, then verifying every file."""

from __future__ import annotations

import shutil

import pytest

from hteb_contract.errors import IntegrityError, StoreError
from hteb_contract.stores import open_store
from hteb_contract.stores.hub import HubStore
from revision_factory import build_revision

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def hf_cache(tmp_path, shared_data, monkeypatch):
    """An HF cache holding repo hteb/test-revisions with tag `v1` -> COMMIT."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    build_revision(tmp_path / "rev", shared_data, ["STSBenchmark", "SciFact"], label="v1")
    repo = tmp_path / "cache" / "datasets--hteb--test-revisions"
    shutil.copytree(tmp_path / "rev", repo / "snapshots" / COMMIT)
    (repo / "refs").mkdir()
    (repo / "refs" / "v1").write_text(COMMIT)
    monkeypatch.setenv("HTEB_HF_CACHE", str(tmp_path / "cache"))
    return repo


def test_fetch_by_tag_offline(hf_cache):
    store = open_store("hf://hteb/test-revisions")
    assert isinstance(store, HubStore)
    revision = store.fetch("v1")
    assert revision.revision_id == COMMIT
    assert revision.dataset_names() == ["STSBenchmark", "SciFact"]
    assert len(revision.source("SciFact").tables["queries"]) == 5


def test_fetch_by_commit_and_only_the_datasets_needed(hf_cache):
    shutil.rmtree(hf_cache / "snapshots" / COMMIT / "data" / "STSBenchmark")
    revision = HubStore("hteb/test-revisions").fetch(COMMIT, datasets=["SciFact"])
    assert revision.variants("SciFact") == [("paraphrasing", 1337)]
    with pytest.raises(IntegrityError, match="STSBenchmark/paraphrasing_1337.parquet is missing"):
        HubStore("hteb/test-revisions").fetch("v1")


def test_corrupted_cached_file_is_caught(hf_cache):
    path = hf_cache / "snapshots" / COMMIT / "source" / "SciFact" / "qrels.parquet"
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(IntegrityError, match="qrels.parquet is corrupted"):
        HubStore("hteb/test-revisions").fetch("v1", datasets=["SciFact"])


def test_unknown_tag_offline_is_one_line(hf_cache):
    with pytest.raises(StoreError) as err:
        HubStore("hteb/test-revisions").fetch("v2")
    assert str(err.value).startswith("hf://hteb/test-revisions: cannot download revision 'v2'")
    assert "\n" not in str(err.value)


def test_publish_offline_fails_cleanly(tmp_path, shared_data, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_TOKEN", "hf_secretsecretsecret")
    build_revision(tmp_path / "rev", shared_data, ["STSBenchmark"], label="v1")
    with pytest.raises(StoreError) as err:
        HubStore("hteb/test-revisions").publish(tmp_path / "rev")
    assert "publish of 'v1' failed" in str(err.value)
    assert "hf_secret" not in str(err.value)


def test_bad_repo_id():
    with pytest.raises(StoreError, match="expected hf://OWNER/NAME"):
        open_store("hf://just-a-name")
    with pytest.raises(StoreError, match="unknown store"):
        open_store("s3://bucket/x")
