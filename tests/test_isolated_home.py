"""No test reads or writes the user's home (issue 35 item 7): the test session's home, XDG folders,
Hugging Face home, Ray's token file and every cache lie in the run's own temporary folder, in this
process and in the processes it starts, while pip keeps the machine's configuration."""

from __future__ import annotations

import os
import pwd
import subprocess
import sys
import tempfile
from pathlib import Path

USER_HOME = Path(pwd.getpwuid(os.getuid()).pw_dir)  # the account's home, whatever HOME says


def _inside(path: str | Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


def test_the_home_and_every_cache_are_the_runs_own():
    home = Path.home()
    run_parent = Path(os.environ.get("HTEB_TEST_RUN_PARENT") or tempfile.gettempdir())  # on disk: conftest.py
    assert home != USER_HOME and _inside(home, run_parent)
    for name in (
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "HF_HOME",
        "RAY_TMPDIR",
        "HTEB_CACHE_DIR",
        "HTEB_MODEL_CACHE",
        "HF_DATASETS_CACHE",
        "MPLCONFIGDIR",
        "VLLM_CACHE_ROOT",
        "TORCHINDUCTOR_CACHE_DIR",
    ):
        assert not _inside(os.environ[name], USER_HOME), name
    from huggingface_hub import constants

    assert _inside(constants.HF_HUB_CACHE, home) and _inside(constants.HF_TOKEN_PATH, home)
    assert _inside(os.path.expanduser("~/.ray/auth_token"), home)  # Ray's token file, when none is given
    assert os.environ["RAY_AUTH_TOKEN"]


def test_a_process_a_test_starts_has_the_same_home():
    code = "import os, pathlib; print(pathlib.Path.home()); print(os.path.expanduser('~/.cache/hteb'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(Path.home()), str(Path.home() / ".cache" / "hteb")]


def test_pip_keeps_the_machines_configuration():
    """What `pip config list` gives outside the tests (the user's pip.conf is copied into the run's home;
    /etc/xdg and the PIP_* variables stay), read from no file of the user's home."""
    env = {**os.environ, "HOME": str(USER_HOME)}
    env.pop("XDG_CONFIG_HOME")
    outside = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, env=env, check=True
    ).stdout
    inside = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True
    ).stdout
    # pip lists the merged files' keys in the order of their paths: a run folder under /dev/shm sorts before /etc
    assert sorted(inside.splitlines()) == sorted(outside.splitlines())
    debug = subprocess.run(
        [sys.executable, "-m", "pip", "config", "debug"], capture_output=True, text=True, check=True
    ).stdout
    assert str(USER_HOME / ".config") not in debug and str(USER_HOME / ".pip") not in debug
