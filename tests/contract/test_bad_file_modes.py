"""Files follow the user's umask (issue 24 item 4): an atomic write made its file 0600 (the mode of
its temporary file), whatever the umask; a rewritten file kept none of its own mode; a published
object was 0444 even under umask 077."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hteb_contract.common.atomic import atomic_write_json, atomic_write_text
from hteb_contract.stores.local import LocalStore
from revision_factory import build_revision


@pytest.fixture
def umask():
    """Set the process umask for one test, and put the old one back."""
    old = os.umask(0o022)
    os.umask(old)
    yield lambda mask: os.umask(mask)
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077, 0o002], ids=oct)
def test_a_new_file_gets_the_umask(tmp_path, umask, mask):
    umask(mask)
    atomic_write_json(tmp_path / "a.json", {"a": 1})
    atomic_write_text(tmp_path / "sub" / "b.md", "b")
    assert _mode(tmp_path / "a.json") == _mode(tmp_path / "sub" / "b.md") == 0o666 & ~mask


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o600, 0o444], ids=oct)
def test_a_rewritten_file_keeps_its_mode(tmp_path, umask, mode):
    umask(0o077)
    path = tmp_path / "kept.json"
    path.write_text("{}")
    path.chmod(mode)
    atomic_write_json(path, {"b": 2})
    assert _mode(path) == mode and path.read_text().startswith("{")


@pytest.mark.parametrize("mask", [0o022, 0o077], ids=oct)
def test_a_published_revision_follows_the_umask(tmp_path, shared_data, umask, mask):
    umask(mask)
    build_revision(tmp_path / "rev", shared_data, ["STSBenchmark"], label="m1", rows=2)
    result = LocalStore(tmp_path / "store").publish(tmp_path / "rev")
    obj = tmp_path / "store" / "objects" / result.content_hash
    files = [p for p in obj.rglob("*") if p.is_file()]
    assert files and {_mode(p) for p in files} == {0o444 & ~mask}  # read-only, readable by whom the umask says
    assert _mode(obj / "manifest.json") == 0o444 & ~mask
    assert _mode(tmp_path / "store" / "labels" / "m1.json") == 0o666 & ~mask
