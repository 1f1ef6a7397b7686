"""`hteb-generate remake`: a published revision made again from its committed folder and published as
published (its manifest's own run, not today's defaults), or refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hteb_contract.revision import MANIFEST, content_hash
from hteb_contract.stores import open_store
from hteb_generate.cli import main
from hteb_generate.run.pipeline import run
from hteb_generate.setup.config import build_config

ROOT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, shared_data: Path, store: Path, **overrides):
    """A small Noise run (two datasets, six texts each): what a revision made before its rows were recorded
    is, with record_specs=False."""
    given = {
        "datasets": "STSBenchmark,SciFact",
        "max_texts": 6,
        "cache_dir": str(tmp_path / "cache"),
        "store": str(store),
        "data_dir": str(shared_data),
        "manifest_md": str(tmp_path / "MANIFEST.md"),
        **overrides,
    }
    return build_config(seed="1339", profile="noise", overrides=given)


def _remake(published: Path, store: Path, tmp_path: Path, shared_data: Path) -> int:
    args = ["remake", str(published), "--store", str(store)]
    args += ["--cache-dir", str(tmp_path / "cache"), "--data-dir", str(shared_data)]
    try:
        main(args)
    except SystemExit as done:
        return int(done.code)
    return 0


@pytest.fixture(scope="module")
def committed(tmp_path_factory, shared_data):
    """The committed folder (manifest.json alone) of a revision made without its rows recorded."""
    tmp = tmp_path_factory.mktemp("remake")
    made = run(_config(tmp, shared_data, tmp / "first", record_specs=False), log=lambda m: None).manifest
    made = json.loads(json.dumps(made))  # as committed
    assert "specs" not in made
    folder = tmp / "docs" / made["label"]
    folder.mkdir(parents=True)
    (folder / MANIFEST).write_text(json.dumps(made), encoding="utf-8")
    return tmp, folder, made


def test_a_revision_is_remade_as_its_manifest_records_not_as_today_makes_it(committed, shared_data, tmp_path, capsys):
    tmp, folder, made = committed
    store = tmp_path / "store"
    assert _remake(folder, store, tmp, shared_data) == 0
    held = open_store(str(store)).fetch(made["label"]).manifest
    differ = sorted(k for k in held.keys() | made.keys() if held.get(k) != made.get(k))
    assert set(differ) <= {"created", "repo_id"}  # when and where; what it was made from and holds: the same
    assert capsys.readouterr().out.strip() == (
        f"remade {made['label']} ({made['content_hash'][:12]}) as published into {open_store(str(store)).uri}"
    )
    # today's defaults record the rows: the same files, but another run (and another citation)
    today = run(_config(tmp, shared_data, tmp_path / "today"), log=lambda m: None).manifest
    assert today["content_hash"] == made["content_hash"] and today["config_hash"] != made["config_hash"]


def test_a_store_holding_the_label_as_another_run_made_it_is_one_line(committed, shared_data, tmp_path, capsys):
    tmp, folder, made = committed
    store = tmp_path / "store"
    run(_config(tmp, shared_data, store), log=lambda m: None)  # today's run: same files, rows recorded
    assert _remake(folder, store, tmp, shared_data) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: store {open_store(str(store)).uri} already holds {made['label']} with its files")
    assert err.endswith("remake it into a new store")


@pytest.mark.parametrize("edited", [1, 3])
def test_a_manifest_this_run_does_not_remake_is_refused_naming_its_files(
    committed, shared_data, tmp_path, capsys, edited
):
    tmp, folder, made = committed
    files = [dict(f) for f in made["files"]]
    data = [f for f in files if f["path"].startswith("data/")][:edited]
    for entry in data:
        entry["sha256"] = "0" * 64
    other = tmp_path / "docs" / made["label"]
    other.mkdir(parents=True)
    (other / MANIFEST).write_text(json.dumps({**made, "files": files, "content_hash": content_hash(files)}))
    store = tmp_path / "store"
    assert _remake(other, store, tmp, shared_data) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    first = sorted(f["path"] for f in data)[0]
    assert f"does not remake {made['label']} ({edited} of its {len(files)} files differ (first: {first}))" in err
    assert not (store / "labels").exists() or made["label"] not in open_store(str(store)).labels()


@pytest.mark.parametrize("given", ["missing", "file", "not-a-revision"])
def test_a_folder_that_is_no_revision_is_one_line(tmp_path, shared_data, capsys, given):
    path = tmp_path / "folder"
    if given == "file":
        path.write_text("x")
    elif given == "not-a-revision":
        path.mkdir()
        (path / MANIFEST).write_text("[1, 2")
    assert _remake(path, tmp_path / "store", tmp_path, shared_data) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and str(path) in err[0]


@pytest.mark.slow
@pytest.mark.parametrize("label", ["noise2-1339", "noise3-1339"])
def test_the_documented_command_remakes_a_published_noise_revision_as_published(tmp_path, shared_data, label):
    """`hteb-generate remake docs/revisions/LABEL` (what `make noise-findings` scores) holds the very
    manifest committed (noise2-1339's rows unrecorded as they were then), so the parts scored on it cite as the
    committed ones; its content hash, card and eval.yaml included, is the one MANIFEST.md cites (about 40 s on
    2 cores). noise3-1339 is rules version 3's, today's default, made with the rows recorded."""
    from hteb_generate.revision import manifest_md

    folder = ROOT / "docs" / "revisions" / label
    published = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    table = manifest_md.parse((ROOT / "MANIFEST.md").read_text(encoding="utf-8"))
    (row,) = [r for r in table if r["label"] == label]
    assert row["superseded by"] == "" and row["content hash"] == published["content_hash"]
    store = tmp_path / "store"
    assert _remake(folder, store, tmp_path, shared_data) == 0
    held = open_store(str(store)).fetch(label).manifest
    assert {k for k in held.keys() | published.keys() if held.get(k) != published.get(k)} <= {"created", "repo_id"}
