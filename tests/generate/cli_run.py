"""`hteb-generate` run in the test process as its console entry point runs it: exit code, stdout and
stderr, without the second a fresh interpreter costs (tests that need one start it themselves)."""

from __future__ import annotations

import io
import os
import subprocess
from contextlib import chdir, redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

from hteb_generate.cli import main


def generate(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`hteb-generate ARGS` in `cwd` with `env` added to the environment."""
    out, err = io.StringIO(), io.StringIO()
    with chdir(cwd), mock.patch.dict(os.environ, env or {}), redirect_stdout(out), redirect_stderr(err):
        try:
            main(list(args))
            code = 0
        except SystemExit as exit_:
            code = exit_.code
    return subprocess.CompletedProcess(["hteb-generate", *args], code, out.getvalue(), err.getvalue())
