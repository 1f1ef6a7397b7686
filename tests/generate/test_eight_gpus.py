"""`make generate SEED=1339`'s dry run (`hteb-generate validate --seed 1339`, the gpu profile's doctor
first) on a simulated 8-GPU host, with no flag added: it plans 8 engines, one per GPU, and passes with
the default model's branch resolved to a commit.

The host is simulated the way the doctor reads a real one, in a fresh interpreter: a fake
`nvidia-smi` on PATH lists eight H100s, and the CUDA builds of torch and vLLM are a stand-in `torch`
package and a `vllm` distribution's metadata ahead of the installed CPU builds on PYTHONPATH. The
branch is resolved by huggingface_hub itself: from a Hugging Face cache folder holding refs/main, or
from a local HTTP server set as HF_ENDPOINT that answers the Hub's model-info API (and counts the
questions: one per run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GEMMA = "gaunernst/gemma-3-27b-it-int4-awq"
CACHED = "0123456789abcdef0123456789abcdef01234567"
ON_HUB = "89abcdef0123456789abcdef0123456789abcdef"
H100 = "NVIDIA H100 80GB HBM3, 81559, 81004, 9.0, 580.95.05"
CUDA_TORCH = '__version__ = "2.13.0+cu130"\n\n\nclass version:\n    cuda = "13.0"\n'


def _host(root: Path, gpus: int) -> dict[str, str]:
    """The environment of a GPU host with `gpus` H100s, torch's CUDA build, vLLM 0.32.0 and an empty HF cache."""
    (root / "bin").mkdir(parents=True)
    smi = root / "bin" / "nvidia-smi"
    smi.write_text("#!/bin/sh\n" + f"echo '{H100}'\n" * gpus)
    smi.chmod(0o755)
    site = root / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(CUDA_TORCH)
    (site / "vllm-0.32.0.dist-info").mkdir()
    (site / "vllm-0.32.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.32.0\n")
    paths = [site, REPO / "schemas", REPO / "score", REPO / "generate"]
    drop = ("HF_HUB_OFFLINE", "HF_ENDPOINT", "HTEB_HUB_REPO", "HF_TOKEN", "CUDA_VISIBLE_DEVICES")
    return {
        **{k: v for k, v in os.environ.items() if k not in drop},
        "PATH": f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join(map(str, paths)),
        "HF_HOME": str(root / "hf"),
        "NO_PROXY": "127.0.0.1,localhost",
    }


def _snapshot(root: Path, commit: str, branch: str | None = None) -> None:
    """What huggingface_hub leaves in the cache: snapshots/COMMIT, and refs/BRANCH when a branch was downloaded."""
    folder = root / "hf" / "hub" / f"models--{GEMMA.replace('/', '--')}"
    (folder / "snapshots" / commit).mkdir(parents=True)
    if branch is not None:
        (folder / "refs").mkdir()
        (folder / "refs" / branch).write_text(commit)


def _validate(root: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    (root / "work").mkdir(exist_ok=True)
    command = "import sys; from hteb_generate.cli import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", command, "validate", "--seed", "1339", "--cache-dir", str(root / "cache"), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=root / "work",
        timeout=300,
    )


def _doctor_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("doctor: ")]
    return line


def test_eight_gpus_plan_eight_engines_at_the_commit_the_cache_holds(tmp_path):
    _snapshot(tmp_path, CACHED, "main")
    line = _doctor_line(_validate(tmp_path, _host(tmp_path, 8)))
    assert line.startswith(
        "doctor: 8 x NVIDIA H100 80GB HBM3 (79.6 GiB, 79.1 GiB free); torch 2.13.0+cu130; vLLM 0.32.0"
    )
    assert (
        "; 8 engines, one per GPU (GPUs 0-7), on a local Ray cluster this run starts (--ray-address none: one "
        "engine in this process); "
    ) in line
    assert f"; {GEMMA}@main is {CACHED} (from the Hugging Face cache);" in line


class _Hub(BaseHTTPRequestHandler):
    """The Hub's model-info API for one model: GET /api/models/ID/revision/main -> its commit."""

    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (the base class's name)
        type(self).asked.append(self.path)
        if self.path.split("?")[0] != f"/api/models/{GEMMA}/revision/main":
            self.send_error(404)
            return
        body = json.dumps({"id": GEMMA, "sha": ON_HUB, "private": False}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def hub() -> Iterator[tuple[str, list[str]]]:
    _Hub.asked = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Hub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Hub.asked
    finally:
        server.shutdown()
        server.server_close()


def test_a_branch_the_cache_lacks_is_asked_of_the_hub_once(tmp_path, hub):
    """The weights downloaded by commit (`hf download --revision COMMIT` writes no refs/main): the Hub
    names main's commit, and the doctor needs no disk for them."""
    endpoint, asked = hub
    _snapshot(tmp_path, ON_HUB)
    line = _doctor_line(_validate(tmp_path, {**_host(tmp_path, 8), "HF_ENDPOINT": endpoint}))
    assert f"; {GEMMA}@main is {ON_HUB} (from the Hub);" in line and "; 8 engines, one per GPU" in line
    # once (huggingface_hub 2.4 also asks /api/agent-harnesses for its user agent: not about the model)
    assert [p.split("?")[0] for p in asked if p.startswith("/api/models/")] == [f"/api/models/{GEMMA}/revision/main"]


def test_a_branch_neither_the_cache_nor_the_hub_resolves_is_one_line(tmp_path):
    done = _validate(tmp_path, {**_host(tmp_path, 8), "HF_HUB_OFFLINE": "1"})
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        f"error: cannot resolve {GEMMA}@main to a commit: not in the Hugging Face cache {tmp_path / 'hf' / 'hub'} "
        "and the Hub did not answer (OfflineModeIsEnabled); run with the Hub reachable (HF_HUB_OFFLINE unset), "
        "or set HF_HOME to a cache that holds the model\n"
    )


@pytest.mark.parametrize(
    "gpus, args, planned",
    [
        (8, ("--ray-address", "none"), "; 1 engine in this process; "),
        (8, ("--tensor-parallel-size", "2"), "; 4 engines, one per 2 GPUs (GPUs 0-7), on a local Ray cluster"),
        (8, ("--ray-workers", "3"), "; 3 engines, one per GPU (GPUs 0-2), on a local Ray cluster"),
        (1, (), "; 1 engine in this process; "),
    ],
)
def test_the_user_chooses_fewer_engines_and_one_gpu_keeps_one(tmp_path, gpus, args, planned):
    _snapshot(tmp_path, CACHED, "main")
    assert planned in _doctor_line(_validate(tmp_path, _host(tmp_path, gpus), *args))


@pytest.mark.parametrize(
    "args, error",
    [
        (
            ("--ray-address", "none", "--ray-workers", "2"),
            "error: --ray-workers sizes a Ray cluster; --ray-address none runs one engine in this process\n",
        ),
        (("--ray-workers", "9"), "error: --ray-workers 9 needs 9 GPUs (1 per engine), this machine has 8\n"),
    ],
)
def test_engines_the_host_cannot_hold_are_one_line(tmp_path, args, error):
    _snapshot(tmp_path, CACHED, "main")
    done = _validate(tmp_path, _host(tmp_path, 8), *args)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", error)
