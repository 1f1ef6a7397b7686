"""bench/gpu_check.py on this CPU machine: it runs what needs no CUDA, names each step it skipped, and what the
device check carries (the repository's paths it needs and the prepared model) measures under 64 MiB."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "gpu_check.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_cpu_run_writes_what_it_did_and_names_what_it_skipped(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this test is the CPU path")
    from hteb_score.encoding.model_files import default_model_path

    out = tmp_path / "check.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, str(SCRIPT), "--texts", "16", "--model", default_model_path(),
                           "--out", str(out)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert [s["step"] for s in report["skipped"]] == ["encode_cuda", "hardware"]
    assert all("CUDA" in s["why"] for s in report["skipped"])
    host = report["host"]
    assert host["gpus"] == [] and host["host_problems"]  # no nvidia-smi here: said as the doctor says it
    assert host["doctor_checked"]["gpu"].startswith("no NVIDIA GPU")
    assert "engine_start" in host["doctor_skipped"]
    encode = report["encode"]
    assert encode["texts"] == 16 and encode["cpu_fp32"]["weights_dtype"] == "float32"
    versus = encode["cpu_fp32"]["vs_sentence_transformers_cpu"]
    assert versus["cosine_min"] > 0.9999 and versus["max_abs_diff"] < 1e-5  # the scorer's path is sentence-transformers'
    assert "hardware" not in report and "cuda_fp16" not in encode


def test_gemma_shapes_follow_its_config() -> None:
    shapes = _script().gemma_shapes(16384)
    assert shapes["gate_up_proj"] == (16384, 5376, 43008)  # 2 x 21,504: engine_plan.py's MLP intermediates
    assert shapes["qkv_proj"] == (16384, 5376, (32 + 2 * 16) * 128)


def test_carried_files_fit_the_device_limit(tmp_path: Path) -> None:
    script = _script()
    listed = subprocess.run(["git", "ls-files", "-z", *script.CARRIED], cwd=ROOT, capture_output=True, check=True)
    files = [ROOT / name for name in listed.stdout.decode().split("\0") if name]
    assert any(f.name == "gpu_check.py" for f in files) and any("sample/store" in str(f) for f in files)
    repository = sum(f.stat().st_size for f in files if f.is_file())
    model = tmp_path / "model"
    assert script.prepare(model) == 0
    weights = sum(p.stat().st_size for p in model.rglob("*") if p.is_file())
    assert repository + weights < script.CARRY_LIMIT, f"{(repository + weights) / 2**20:.1f} MiB"
    assert (model / "modules.json").is_file() and (model / "tokenizer.json").is_file()
