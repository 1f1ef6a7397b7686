"""MANIFEST.md is written by the publishing code: rows upserted by (store, label)."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.common.escape import visible
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


@pytest.fixture(scope="module")
def two_published(tmp_path_factory, shared_data) -> tuple[object, str]:
    """A table citing v1 and v2 of one store, as publishing wrote it; its text."""
    tmp = tmp_path_factory.mktemp("two")
    manifest = build_revision(tmp / "rev", shared_data, ["STSBenchmark"], label="v1")
    path = tmp / "MANIFEST.md"
    manifest_md.update(path, manifest, "file:///s", manifest["content_hash"])
    manifest_md.update(path, dict(manifest, label="v2", content_hash="e" * 64), "file:///s", "e" * 64)
    return manifest, path.read_text(encoding="utf-8")


@settings(max_examples=40, deadline=None)
@given(because=st.text(min_size=1, max_size=120).filter(str.strip))
def test_a_superseded_row_says_by_what_and_why_whatever_the_words(two_published, tmp_path_factory, because):
    """Any reason (pipes, backticks, line breaks, markup; controls and bidi marks shown as escapes) reads back
    as one line in its cell; the other
    rows and the text around the table are untouched; publishing the same revision again keeps the mark."""
    manifest, text = two_published
    path = tmp_path_factory.mktemp("t") / "MANIFEST.md"
    path.write_text(text, encoding="utf-8")
    manifest_md.supersede(path, "file:///s", "v1", "v2", because)
    rows = manifest_md.parse(path.read_text(encoding="utf-8"))
    assert rows[0]["superseded by"] == f"v2: {visible(' '.join(because.split()))}" and rows[1]["superseded by"] == ""
    assert [{k: v for k, v in r.items() if k != "superseded by"} for r in rows] == [
        {k: v for k, v in r.items() if k != "superseded by"} for r in manifest_md.parse(text)
    ]
    manifest_md.update(path, manifest, "file:///s", "f" * 40)  # the same content under a new revision id
    assert manifest_md.parse(path.read_text(encoding="utf-8"))[0]["superseded by"] == rows[0]["superseded by"]


@pytest.mark.parametrize(
    "label, by, because, says",
    [
        ("v9", "v2", "why", "cites no 'v9'"),
        ("v1", "v9", "why", "cites no 'v9'"),
        ("v1", "v1", "why", "cannot supersede itself"),
        ("v1", "v2", " \n ", "say why"),
    ],
)
def test_supersede_refuses_what_the_table_does_not_hold_and_writes_nothing(
    two_published, tmp_path, label, by, because, says
):
    _, text = two_published
    path = tmp_path / "MANIFEST.md"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(StoreError, match=says) as refused:
        manifest_md.supersede(path, "file:///s", label, by, because)
    assert "\n" not in str(refused.value) and path.read_text(encoding="utf-8") == text


def test_a_table_written_before_the_superseded_column_reads_every_row_as_current(two_published):
    _, text = two_published
    old = "\n".join(line.rsplit(" |", 2)[0] + " |" if line.startswith("|") else line for line in text.splitlines())
    rows = manifest_md.parse(old)
    assert len(rows) == 2 and all(r["superseded by"] == "" for r in rows)
    assert [r["label"] for r in rows] == ["v1", "v2"]


def test_the_cli_marks_the_row_of_the_store_named(two_published, tmp_path, capsys):
    from hteb_generate.cli import main

    _, text = two_published
    path = tmp_path / "MANIFEST.md"
    path.write_text(
        text.replace("file:///s", "file://s"), encoding="utf-8"
    )  # a store beside the table, as update writes it
    args = ["supersede", "v1", "--by", "v2", "--because", "remade", "--store", str(tmp_path / "s")]
    main([*args, "--manifest-md", str(path)])
    assert "v1 marked superseded by v2" in capsys.readouterr().out
    assert manifest_md.parse(path.read_text(encoding="utf-8"))[0]["superseded by"] == "v2: remade"
    with pytest.raises(SystemExit) as refused:
        main([*args[:1], "v9", *args[2:], "--manifest-md", str(path)])
    assert refused.value.code == 2 and "cites no 'v9'" in capsys.readouterr().err
