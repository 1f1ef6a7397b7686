"""What every refused input must show: exit 2, one line on stderr naming what was wrong, nothing
written. The CLI runs in-process (usable inside Hypothesis tests, no fixtures), or as an
unprivileged user where a permission must really be missing (root writes into read-only folders).
Broken models are real copies of all-MiniLM-L6-v2 with files removed or edited."""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

from hteb_score.cli import main
from hteb_score.cli.output import PARTIAL
from models import minilm_path

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "vocab.txt", "special_tokens_map.json")


def copy_model(target: Path, *, without: tuple[str, ...] = ()) -> Path:
    """all-MiniLM-L6-v2 as a local folder of its own (weights linked, not copied), minus `without`."""
    source = Path(minilm_path())
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.safetensors", *without))
    (target / "model.safetensors").symlink_to(source / "model.safetensors")
    return target


def run(*args: object) -> tuple[int, str, str]:
    """`hteb-score ARGS` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def run_unprivileged(*args: object) -> tuple[int, str, str]:
    """`hteb-score ARGS` in a subprocess; as user nobody when this process is root."""
    command = [sys.executable, "-m", "hteb_score.cli", *map(str, args)]
    if os.geteuid() == 0:
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    done = subprocess.run(command, capture_output=True, text=True, cwd="/", timeout=120)
    return done.returncode, done.stdout, done.stderr


def assert_one_line(code: int, err: str, *needles: str) -> None:
    """Exit 2 and exactly one line on stderr, the error, holding every needle."""
    assert code == 2, (code, err)
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("hteb-score: error: "), err
    for needle in needles:
        assert needle in err, (needle, err)


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (relative path -> bytes); {} when it does not exist."""
    if not folder.exists():
        return {}
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def partials(parent: Path) -> list[str]:
    """Partial output folders left beside an output folder."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(PARTIAL)) if parent.is_dir() else []
