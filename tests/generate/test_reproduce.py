"""`hteb-generate reproduce`: the configuration a published revision was made with is rebuilt from its
manifest, and the command's exits say reproduced (0), differs (1) or bad input (2, one line)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hteb_contract.stores import open_store
from hteb_generate.reproduce import config_from_manifest

SAMPLE_STORE = Path(__file__).resolve().parents[2] / "score" / "hteb_score" / "sample" / "store"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from hteb_generate.cli import main; main()", "reproduce",
                           "--store", str(SAMPLE_STORE), *args], capture_output=True, text=True, env=os.environ,
                          timeout=300)


def test_the_bundled_samples_configuration_is_rebuilt_from_its_manifest(tmp_path, shared_data):
    manifest = open_store(str(SAMPLE_STORE)).fetch("sample-1339").manifest
    config = config_from_manifest(manifest, data_dir=str(shared_data), cache_dir=str(tmp_path), store=str(tmp_path))
    assert config.config_hash() == manifest["config_hash"] and config.profile == "cpu" and not config.publish
    assert config.datasets == tuple(s["name"] for s in manifest["sources"])


def test_a_config_this_release_does_not_know_is_one_line(tmp_path, shared_data):
    manifest = open_store(str(SAMPLE_STORE)).fetch("sample-1339").manifest
    manifest = {**manifest, "config": {**manifest["config"], "beam_width": 4}}
    with pytest.raises(Exception, match="its config has beam_width, which this release does not know"):
        config_from_manifest(manifest, data_dir=str(shared_data), cache_dir=str(tmp_path), store=str(tmp_path))


def test_exit_codes_reproduced_differs_and_bad_input(tmp_path):
    candidate = tmp_path / "candidate"
    shutil.copytree(open_store(str(SAMPLE_STORE)).fetch("sample-1339").root, candidate)
    done = _cli("--revision", "sample-1339", "--candidate", str(candidate), "--json", str(tmp_path / "r.json"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("sample-1339 (") and " reproduces sample-1339 (" in done.stdout
    assert json.loads((tmp_path / "r.json").read_text())["reproduced"] is True

    other = open_store(str(SAMPLE_STORE)).fetch("sample-1339")
    manifest = json.loads((candidate / "manifest.json").read_text())
    (candidate / "manifest.json").chmod(0o644)
    manifest["config"]["temperature"] = 0.5  # another run's configuration
    (candidate / "manifest.json").write_text(json.dumps(manifest))
    done = _cli("--revision", other.label, "--candidate", str(candidate))
    assert done.returncode == 1 and "does NOT reproduce" in done.stdout and "manifest: config:" in done.stdout

    for args, message in [
        (("--revision", "sample-9999", "--candidate", str(candidate)), "error: "),
        (("--revision", "sample-1339", "--candidate", str(tmp_path)), "is not a revision folder"),
        (("--revision", "sample-1339", "--parapluie-tolerance", "nan"), "--parapluie-tolerance must be a finite"),
    ]:
        done = _cli(*args)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert message in done.stderr
