"""`hteb-score verify` and `revisions`: ok on a good revision; one line and exit 2 on a bad one."""

from __future__ import annotations

import subprocess
import sys

from hteb_score.cli import main
from hteb_contract.stores.local import LocalStore
from revision_factory import build_revision


def test_verify_ok_then_corrupted(tmp_path, shared_data, capsys):
    build_revision(tmp_path / "rev", shared_data, ["TwitterSemEval2015"], label="v1")
    store = LocalStore(tmp_path / "store")
    result = store.publish(tmp_path / "rev")
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "v1"]) == 0
    assert "ok: v1" in capsys.readouterr().out
    assert main(["revisions", "--store", str(tmp_path / "store")]) == 0
    label, content_hash, published = capsys.readouterr().out.split()
    assert (label, content_hash) == ("v1", result.content_hash) and published.startswith("20")

    target = tmp_path / "store" / "objects" / result.content_hash / "source" / "TwitterSemEval2015" / "test.parquet"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes() + b"\0")
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "v1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "test.parquet is corrupted" in err


def test_console_script_has_no_traceback(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "hteb_score.cli", "verify", "--store", str(tmp_path / "none"), "--revision", "v1"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("hteb-score: error: no revision 'v1'") and "Traceback" not in proc.stderr


def test_verify_says_which_datasets_and_files_it_checked(tmp_path, shared_data, capsys):
    build_revision(
        tmp_path / "rev",
        shared_data,
        ["STSBenchmark", "TwitterSemEval2015"],
        label="v1",
        rows=3,
        transformations=("paraphrasing", "translation"),
    )
    LocalStore(tmp_path / "store").publish(tmp_path / "rev")
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "v1", "--datasets", "STSBenchmark"]) == 0
    out = capsys.readouterr().out
    # README.md, eval.yaml + STSBenchmark's dataset.json, test.parquet and two items files; 2 x 3 rows x 2 sentences a file
    assert out.endswith(
        "- 1 of 2 datasets verified: STSBenchmark; 6 files match their sha256; 2 item files "
        "(12 records) match the item schema, their file and their source texts; not verified: "
        "TwitterSemEval2015\n"
    )
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "v1"]) == 0
    out = capsys.readouterr().out
    assert "- 2 of 2 datasets verified: STSBenchmark, TwitterSemEval2015; 10 files" in out
    assert "4 item files (24 records)" in out and "not verified" not in out
