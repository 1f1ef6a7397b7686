"""bench/gpu_check.py on this CPU machine: it runs what needs no CUDA, names each step it skipped, and what the
device check carries (the repository's paths it needs and the prepared model) measures under 64 MiB."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
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
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--texts", "16", "--model", default_model_path(), "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
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
    assert (
        versus["cosine_min"] > 0.9999 and versus["max_abs_diff"] < 1e-5
    )  # the scorer's path is sentence-transformers'
    assert "hardware" not in report and "cuda_fp16" not in encode


def test_gemma_shapes_follow_its_config() -> None:
    shapes = _script().gemma_shapes(16384)
    assert shapes["gate_up_proj"] == (16384, 5376, 43008)  # 2 x 21,504: engine_plan.py's MLP intermediates
    assert shapes["qkv_proj"] == (16384, 5376, (32 + 2 * 16) * 128)


@pytest.mark.slow
def test_what_the_device_check_sends_fits_the_device_limit(tmp_path: Path) -> None:
    """The device tool sends the whole tracked tree and the carried folder (the prepared model and wheels)."""
    from models import paraphrase_minilm_l3_path

    script = _script()
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    tracked = sum((ROOT / n).stat().st_size for n in listed.stdout.decode().split("\0") if n and (ROOT / n).is_file())
    prepared = tmp_path / "gpu-check"
    assert script.prepare(prepared, paraphrase_minilm_l3_path()) == 0
    carried = sum(p.stat().st_size for p in prepared.rglob("*") if p.is_file())
    assert tracked + carried < script.CARRY_LIMIT, f"{(tracked + carried) / 2**20:.1f} MiB"
    assert (prepared / "model" / "modules.json").is_file() and (prepared / "model" / "tokenizer.json").is_file()
    unpacked = set()
    for wheel in (prepared / "wheels").glob("*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            unpacked |= {name.split("/")[0] for name in archive.namelist()}
    assert set(script.DEVICE_WHEELS.values()) <= unpacked  # every module the device image lacks travels
    from sentence_transformers import SentenceTransformer

    texts = script.sample_texts(24)
    original = SentenceTransformer(paraphrase_minilm_l3_path(), device="cpu").encode(texts)
    carried_model = script.dequantized(prepared / "model", tmp_path / "float32")
    assert script.compare(SentenceTransformer(carried_model, device="cpu").encode(texts), original)["cosine_min"] > 0.99


def test_the_docs_table_is_the_committed_runs_summary() -> None:
    """docs/gpu.md quotes the measured run through `summary`, never by hand."""
    page = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
    marker = "<!-- gpu-check summary: docs/gpu-check/h200.json -->\n"
    quoted = page[page.index(marker) + len(marker) : page.index("<!-- end gpu-check summary -->")]
    report = json.loads((ROOT / "docs" / "gpu-check" / "h200.json").read_text(encoding="utf-8"))
    assert quoted == _script().summary(report)
    assert report["skipped"] == [] and report["host"]["gpus"][0]["capability"] == "9.0"
