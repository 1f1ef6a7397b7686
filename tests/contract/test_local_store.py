"""The local store: atomic, immutable, addressed by label and content hash; survives kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from hteb_contract.errors import StoreError
from hteb_contract.stores import open_store
from hteb_contract.stores.local import LocalStore
from revision_factory import build_revision


@pytest.fixture(scope="module")
def staged(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("staged") / "rev"
    build_revision(root, shared_data, ["STSBenchmark", "Banking77"], label="v1")
    return root


def test_publish_fetch_by_label_and_hash(tmp_path, staged):
    store = open_store(f"file://{tmp_path / 'store'}")
    result = store.publish(staged)
    assert result.created and result.label == "v1"
    assert store.labels() == ["v1"]
    by_label = store.fetch("v1")
    by_hash = store.fetch(result.content_hash[:12])
    assert by_label.root == by_hash.root and by_label.revision_id == result.content_hash
    assert by_label.dataset_names() == ["STSBenchmark", "Banking77"]


def test_identical_publish_is_a_noop_and_other_content_is_refused(tmp_path, staged, shared_data):
    store = LocalStore(tmp_path / "store")
    first = store.publish(staged)
    again = store.publish(staged)
    assert not again.created and again.revision_id == first.revision_id
    other = tmp_path / "other"
    build_revision(other, shared_data, ["STSBenchmark"], label="v1")
    with pytest.raises(StoreError, match="label 'v1' already holds other content"):
        store.publish(other)
    assert store.fetch("v1").revision_id == first.revision_id


def test_unknown_revision_and_unwritable_store(tmp_path, staged):
    store = LocalStore(tmp_path / "store")
    with pytest.raises(StoreError, match="no revision 'v9'"):
        store.fetch("v9")
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("x")
    with pytest.raises(StoreError, match="not writable"):
        LocalStore(blocked / "store").publish(staged)


def test_unsealed_folder_is_not_published(tmp_path, staged):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(staged, broken)
    (broken / "data" / "Banking77" / "paraphrasing_1337.parquet").write_bytes(b"not parquet")
    with pytest.raises(Exception, match="corrupted"):
        LocalStore(tmp_path / "store").publish(broken)
    assert LocalStore(tmp_path / "store").labels() == []


PUBLISH = """
import sys
from hteb_contract.stores.local import LocalStore
print("start", flush=True)
LocalStore(sys.argv[1]).publish(sys.argv[2])
print("done", flush=True)
"""


@pytest.mark.parametrize("delay", [0.0, 0.002, 0.01, 0.03, 0.1])
def test_kill_during_publish_leaves_nothing_partial(tmp_path, staged, delay):
    store_root = tmp_path / "store"
    proc = subprocess.Popen(
        [sys.executable, "-c", PUBLISH, str(store_root), str(staged)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "start"
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = LocalStore(store_root)
    for label in store.labels():  # whatever is visible is complete and verified
        store.fetch(label)
    objects = store_root / "objects"
    if objects.is_dir():
        for folder in objects.iterdir():  # published objects are whole
            assert (folder / "manifest.json").is_file()
    result = store.publish(staged)
    assert store.fetch("v1").revision_id == result.content_hash
    leftovers = [p.name for p in (store_root / ".tmp").iterdir() if p.name != "publish.lock"]  # the lock stays
    assert not leftovers  # leftovers of the killed publisher are gone


def test_published_files_are_read_only(tmp_path, staged):
    store = LocalStore(tmp_path / "store")
    revision = store.fetch(store.publish(staged).label)
    for entry in revision.manifest["files"]:
        assert not os.access(revision.root / entry["path"], os.W_OK) or os.geteuid() == 0
        assert (revision.root / entry["path"]).stat().st_mode & 0o222 == 0
