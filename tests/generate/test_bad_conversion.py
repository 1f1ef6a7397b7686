"""A kill during the CPU model conversion (`models.convert_smollm2`) left a ~514 MB temporary folder
that nothing removed (issue 10). Conversions now run under a lock, name their folder
`.SmolLM2-135M-Instruct-<pid>-<hex>`, and the next conversion removes what a killed one left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hteb_generate.engine.models import convert_smollm2

NAME = "SmolLM2-135M-Instruct"


def _leftovers(cache: Path) -> list[Path]:
    return sorted((cache / "models").glob(f".{NAME}-*"))


def test_a_leftover_beside_a_converted_model_is_removed(tmp_path):
    """A folder left by a killed conversion of an earlier release (no lock then), found when the
    model has been converted since: removed on the next call, the converted model kept as it is."""
    out = tmp_path / "models" / NAME
    out.mkdir(parents=True)
    for name in ("config.json", "model.safetensors"):
        (out / name).write_bytes(b"kept")
    leftover = tmp_path / "models" / f".{NAME}-4194304-0123456789abcdef"
    leftover.mkdir()
    (leftover / "model.safetensors").write_bytes(b"\0" * 1024)

    assert convert_smollm2(tmp_path) == out
    assert _leftovers(tmp_path) == []
    assert sorted(p.name for p in out.iterdir()) == ["config.json", "model.safetensors"]
    assert (out / "model.safetensors").read_bytes() == b"kept"


@pytest.mark.slow
def test_the_folder_of_a_conversion_killed_mid_write_is_removed_by_the_next_conversion(tmp_path):
    """The real fault: kill -9 while the converted weights are being written, then convert again."""
    code = (
        "from pathlib import Path; from hteb_generate.engine.models import convert_smollm2; "
        f"convert_smollm2(Path({str(tmp_path)!r}))"
    )
    victim = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    try:
        while not _leftovers(tmp_path):
            assert victim.poll() is None, "the conversion ended before it could be killed"
            assert time.monotonic() < deadline, "no temporary folder appeared"
            time.sleep(0.02)
        os.kill(victim.pid, signal.SIGKILL)
    finally:
        victim.wait()
    left = _leftovers(tmp_path)
    assert [p.name.split("-")[3] for p in left] == [str(victim.pid)]  # recognisable: it names its process
    assert not (tmp_path / "models" / NAME).exists()

    out = convert_smollm2(tmp_path)
    assert _leftovers(tmp_path) == []
    assert (out / "config.json").is_file() and (out / "model.safetensors").is_file()
