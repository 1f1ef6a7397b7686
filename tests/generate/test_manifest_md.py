"""MANIFEST.md is written by the publishing code: rows upserted by (store, label)."""

from __future__ import annotations

import copy

import pytest
from hteb_contract.errors import StoreError
from hteb_generate.revision import manifest_md
from revision_factory import build_revision


def test_rows_are_added_and_refreshed(tmp_path, shared_data):
    manifest = build_revision(tmp_path / "rev", shared_data, ["STSBenchmark", "SciFact"], label="v1")
    path = tmp_path / "MANIFEST.md"
    manifest_md.update(path, manifest, "hf://hteb/htEB", "c0ffee" * 6 + "abcd")
    second = copy.deepcopy(manifest)
    second["label"] = "v2"
    manifest_md.update(path, second, "hf://hteb/htEB", "1" * 40)
    manifest_md.update(path, manifest, "hf://hteb/htEB", "2" * 40)  # same content, another commit: refreshed
    text = path.read_text()
    rows = manifest_md.parse(text)
    assert [r["label"] for r in rows] == ["v1", "v2"]
    assert rows[0]["revision"] == "2" * 40
    assert rows[0]["datasets"] == "STSBenchmark, SciFact"
    assert rows[0]["seeds"] == "1337" and rows[0]["content hash"] == manifest["content_hash"]
    assert text.startswith("# Published HTEB revisions")
    assert manifest_md.render(rows) == text


def test_a_store_inside_the_repository_is_shown_relative(tmp_path, shared_data):
    manifest = build_revision(tmp_path / "rev", shared_data, ["STSBenchmark"], label="sample-1339")
    path = tmp_path / "MANIFEST.md"
    manifest_md.update(path, manifest, f"file://{tmp_path / 'score' / 'sample' / 'store'}", manifest["content_hash"])
    manifest_md.update(path, dict(manifest, label="elsewhere"), "file:///somewhere/else", manifest["content_hash"])
    rows = manifest_md.parse(path.read_text())
    assert [r["store"] for r in rows] == ["file://score/sample/store", "file:///somewhere/else"]


def test_the_same_revision_made_again_keeps_its_first_date(tmp_path, shared_data):
    """Rebuilding a revision on another day (same content hash) must not move the date papers cite."""
    manifest = build_revision(tmp_path / "rev", shared_data, ["STSBenchmark"], label="noise-1339")
    path = tmp_path / "MANIFEST.md"
    manifest_md.update(path, dict(manifest, created="2026-11-24T10:00:00+00:00"), "file:///s", manifest["content_hash"])
    manifest_md.update(path, dict(manifest, created="2026-11-25T09:00:00+00:00"), "file:///s", manifest["content_hash"])
    assert [r["date"] for r in manifest_md.parse(path.read_text())] == ["2026-11-24"]
    before = path.read_bytes()
    changed = dict(manifest, created="2026-11-26T09:00:00+00:00", content_hash="f" * 64)
    with pytest.raises(StoreError, match="a cited label never moves"):  # other content under a cited label
        manifest_md.update(path, changed, "file:///s", "f" * 64)
    assert path.read_bytes() == before
    manifest_md.update(path, changed, "file:///elsewhere", "f" * 64)  # the same label in another store: its own row
    assert [r["store"] for r in manifest_md.parse(path.read_text())] == ["file:///s", "file:///elsewhere"]
