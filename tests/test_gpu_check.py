"""bench/gpu_check.py on this CPU machine: it runs what needs no CUDA, names each step it skipped, and what the
device check carries (the repository's paths it needs and the prepared model) measures under 64 MiB."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bench" / "gpu_check.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


#: The script as the device runs it: no faiss or lingua there, and the repository's packages on sys.path, not
#: installed
AS_ON_THE_DEVICE = """
import importlib.metadata, runpy, sys
sys.modules["faiss"] = None
sys.modules["lingua"] = None
installed = importlib.metadata.version
def version(name):
    if name.startswith("hteb") or name == "faiss-cpu":
        raise importlib.metadata.PackageNotFoundError(name)
    return installed(name)
importlib.metadata.version = version
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@pytest.mark.slow
def test_cpu_run_writes_what_it_did_and_names_what_it_skipped(tmp_path: Path) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this test is the CPU path")
    from models import paraphrase_minilm_l3_path

    out = tmp_path / "check.json"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", AS_ON_THE_DEVICE, str(SCRIPT), "--texts", "16", "--model", paraphrase_minilm_l3_path()]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    steps = [s["step"] for s in report["skipped"]]
    assert steps == ["encode_cuda", "score_retrieval", "score_cuda", "hardware"]
    assert all("CUDA" in s["why"] for s in report["skipped"] if s["step"] != "score_retrieval")
    assert report["skipped"][1]["why"].endswith(
        "faiss is not installed here (its wheel does not fit the carry): SciFact"
    )
    score = report["score"]
    assert "SciFact" not in score["datasets"] and len(score["datasets"]) == 7  # every other dataset of the sample
    assert list(score["runs"]) == ["cpu_fp32"] and score["runs"]["cpu_fp32"]["encode"]["backend"] == "torch"
    host = report["host"]
    assert host["gpus"] == [] and host["host_problems"]  # no nvidia-smi here: said as the doctor says it
    assert host["doctor_checked"]["gpu"].startswith("no NVIDIA GPU")
    assert "engine_start" in host["doctor_skipped"] and "doctor" not in host["doctor_skipped"]
    from hteb_generate.setup.doctor import CHECKS

    assert set(host["doctor_checked"]) == set(CHECKS)  # every check, though lingua is missing
    encode = report["encode"]
    assert encode["texts"] == 16 and encode["cpu_fp32"]["weights_dtype"] == "float32"
    versus = encode["cpu_fp32"]["vs_sentence_transformers_cpu"]
    assert (
        versus["cosine_min"] > 0.9999 and versus["max_abs_diff"] < 1e-5
    )  # the scorer's path is sentence-transformers'
    assert "hardware" not in report and "cuda_fp16" not in encode
    replicas = encode["cpu_fp32"]["two_replicas_vs_one"]  # the several-device path, two replicas on one device
    assert replicas["batches"] >= 2 and replicas["max_abs_diff"] < 1e-6 and replicas["cosine_min"] > 0.999999


@pytest.mark.slow
def test_the_score_step_compares_each_cards_scores_with_the_reference(tmp_path: Path, monkeypatch) -> None:
    """The score step as the device runs it, the CPU in bf16 standing in for CUDA: each card's encode settings and
    flags, and its largest difference from the reference card, equal to what the two cards written say; the docs'
    table prints it; a run that fails is named and the check goes on."""
    from models import paraphrase_minilm_l3_path

    script = _script()
    # fp16 is CUDA's only (a one-line refusal on the CPU): a run that fails is named and the next one still runs
    monkeypatch.setattr(script, "SCORE_RUNS", (("cpu", "fp32"), ("cpu", "fp16"), ("cpu", "bf16")))
    monkeypatch.setattr(script, "score_datasets", lambda: (["STSBenchmark"], []))
    result, skipped = script.score_step(paraphrase_minilm_l3_path(), False, tmp_path)
    assert [s["step"] for s in skipped] == ["score_cpu_fp16"] and "exited 2" in skipped[0]["why"]
    assert result["datasets"] == ["STSBenchmark"]
    cards = {
        name: json.loads((tmp_path / name / "result_card.json").read_text(encoding="utf-8"))
        for name in ("cpu_fp32", "cpu_bf16")
    }
    runs = result["runs"]
    assert list(runs) == ["cpu_fp32", "cpu_bf16"] and "vs_cpu_fp32" not in runs["cpu_fp32"]
    assert runs["cpu_bf16"]["encode"] == {"backend": "torch", "device": "cpu", "precision": "bf16", "dtype": "bfloat16"}
    assert "reduced_precision" in runs["cpu_bf16"]["flags"] and "reduced_precision" not in runs["cpu_fp32"]["flags"]
    scores = {
        name: {
            tuple(map(str, (r["dataset"], r["subset"], r["transformation"], r["seed"], r["metric"]))): r["value"]
            for r in card["scores"]
            if r["value"] is not None
        }
        for name, card in cards.items()
    }
    diffs = {key: abs(value - scores["cpu_fp32"][key]) * 100 for key, value in scores["cpu_bf16"].items()}
    versus = runs["cpu_bf16"]["vs_cpu_fp32"]
    assert versus["same_scores"] and runs["cpu_bf16"]["scores"] == len(diffs) > 5
    assert versus["max_abs_diff_points"] == max(diffs.values()) == diffs[tuple(versus["at"].split("/"))]
    assert runs["cpu_bf16"]["original"] == cards["cpu_bf16"]["aggregates"]["original"]
    report = json.loads((ROOT / "docs" / "gpu-check" / "h200.json").read_text(encoding="utf-8"))
    row = next(line for line in script.summary({**report, "score": result}).splitlines() if "hteb-score" in line)
    assert row.startswith("| hteb-score on the sample (1 dataset), cpu bf16 vs CPU fp32 | largest score difference")
    assert f"{versus['max_abs_diff_points']:.2f} points of {len(diffs)}" in row


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1)),
    st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0, 1)),
)
def test_a_cards_largest_difference_is_over_the_scores_both_hold(scores, reference) -> None:
    said = _script().versus_reference(scores, reference)
    shared = scores.keys() & reference.keys()
    assert said["same_scores"] == (scores.keys() == reference.keys())
    if not shared:
        assert said["max_abs_diff_points"] is None and said["at"] is None
        return
    largest = max(abs(scores[k] - reference[k]) * 100 for k in shared)
    assert said["max_abs_diff_points"] == largest
    assert said["at"] == min(k for k in shared if abs(scores[k] - reference[k]) * 100 == largest)


@settings(max_examples=100, deadline=None)
@given(st.text(), st.text())
def test_names_the_host_and_a_card_gave_stay_in_their_cell(gpu: str, at: str) -> None:
    """Whatever the GPU's name or the score a difference is at, each row of the table keeps its two cells."""
    from hteb_contract.common.escape import md_unescape

    report = json.loads((ROOT / "docs" / "gpu-check" / "h200.json").read_text(encoding="utf-8"))
    report["host"]["gpus"][0]["name"] = gpu
    run = {"encode": {"device": "cuda", "precision": "bf16"}, "scores": 3, "original": 50.0, "seconds": 1.0}
    runs = {"cpu_fp32": {**run, "encode": {"device": "cpu", "precision": "fp32"}}}
    runs["cuda_bf16"] = {**run, "vs_cpu_fp32": {"same_scores": True, "max_abs_diff_points": 0.5, "at": at}}
    lines = _script().summary({**report, "score": {"datasets": ["D"], "runs": runs}}).splitlines()
    assert len(lines) == 2 + 8  # header, rule, and every row: none split into two
    for line in lines[2:]:
        assert re.sub(r"\\.", "", line).count("|") == 3, line  # | cell | cell |: every other | escaped
    if gpu.isprintable():  # what md_text keeps as it is reads back (line breaks and controls it shows as escapes)
        assert md_unescape(lines[2].removeprefix("| GPU, driver, torch | ")).startswith(f"{gpu} (140 GiB)")
    score_row = next(line for line in lines if line.startswith("| hteb-score"))
    if at.isprintable():
        assert f"({at}); original" in md_unescape(score_row)


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
            unpacked |= {name.split("/")[0].split(".")[0] for name in archive.namelist()}  # a package or a module
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
