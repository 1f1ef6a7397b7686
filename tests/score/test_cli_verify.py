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
    assert capsys.readouterr().out.strip() == "v1"

    target = tmp_path / "store" / "objects" / result.content_hash / "source" / "TwitterSemEval2015" / "test.parquet"
    target.chmod(0o644)
    target.write_bytes(target.read_bytes() + b"\0")
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "v1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "test.parquet is corrupted" in err


def test_console_script_has_no_traceback(tmp_path):
    (tmp_path / "none").mkdir()  # an empty store (a missing one is refused as such: tests/score/test_bad_options.py)
    proc = subprocess.run([sys.executable, "-m", "hteb_score.cli", "verify", "--store", str(tmp_path / "none"),
                           "--revision", "v1"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("hteb-score: error: no revision 'v1'") and "Traceback" not in proc.stderr
