"""Nothing asks torch about CUDA before vLLM is imported, without PYTORCH_NVML_BASED_CUDA_CHECK=1:
torch.cuda.is_available() would otherwise initialise CUDA in the process (cuInit) while
torch.cuda.is_initialized() stays False, vLLM would fork its engine core and the child would fail
with "CUDA error: initialization error". Checked without a GPU: the rate bench is run on a host
whose fake nvidia-smi lists an H100, every torch.cuda.is_available() call is recorded with the
variable's value at that moment, and the run stops where vLLM is first imported."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "bench_gpu_rates.py"
#: Records torch's CUDA checks, then stops the script at its first `import vllm`.
WATCH = """
import json, os, runpy, sys
import torch
calls = []
real = torch.cuda.is_available
torch.cuda.is_available = lambda: calls.append(os.environ.get("PYTORCH_NVML_BASED_CUDA_CHECK")) or real()

class StopAtVllm:
    def find_spec(self, name, path=None, target=None):
        if name == "vllm":
            print(json.dumps({"cuda_checks_before_vllm": calls}))
            sys.stdout.flush()
            os._exit(0)
        return None

sys.meta_path.insert(0, StopAtVllm())
sys.argv = [sys.argv[1]]
runpy.run_path(sys.argv[0], run_name="__main__")
print(json.dumps({"never_imported_vllm": calls}))
"""


def _h100_path(folder: Path) -> str:
    smi = folder / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 81559, 81004, 9.0, 580.159.04'\n")
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_the_rate_bench_reaches_vllm_without_initialising_cuda(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTORCH_NVML_BASED_CUDA_CHECK"}
    env["PATH"] = _h100_path(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", WATCH, str(BENCH)], capture_output=True, text=True, env=env, timeout=300, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert "cuda_checks_before_vllm" in seen  # the fake H100 was taken for a GPU: the script went on to vLLM
    assert all(value == "1" for value in seen["cuda_checks_before_vllm"]), seen


def test_importing_the_generator_sets_the_nvml_based_check():
    env = {k: v for k, v in os.environ.items() if k != "PYTORCH_NVML_BASED_CUDA_CHECK"}
    done = subprocess.run(
        [sys.executable, "-c", "import os, hteb_generate; print(os.environ.get('PYTORCH_NVML_BASED_CUDA_CHECK'))"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.stdout.strip() == "1", done.stderr
