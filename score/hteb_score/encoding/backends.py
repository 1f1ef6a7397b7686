"""Encoding backends and precisions (`--backend`, `--precision`): torch, ONNX Runtime, OpenVINO.

Why not sentence-transformers' own `backend="onnx"|"openvino"`: it goes through optimum
(optimum-onnx, optimum-intel), whose releases pin transformers below the 5.x this project runs
(optimum-onnx 0.1.0 imports `transformers.modeling_utils.get_parameter_dtype`, gone in 5.x;
optimum-intel 2.2 pins transformers 5.5 and its own torch). So the transformer module of a
sentence-transformers model is exported here, once, with `torch.onnx.export`, and run by
onnxruntime or by OpenVINO (which reads the same ONNX file); tokenisation, pooling, normalisation
and prompts stay sentence-transformers' own, so every model sentence-transformers loads works.

Exports go to a cache folder keyed by the model identity (`<cache>/exports/<identity>/`), written
atomically and reused. int8 is onnxruntime's dynamic quantisation of that export.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hteb_contract.errors import HtebError
from hteb_contract.common.registry import Registry
from hteb_score.flags import Flag

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: --precision's choices, each with the dtype the card records.
DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16", "int8": "int8"}
REDUCED = frozenset({"fp16", "bf16", "int8"})  # precisions whose embeddings differ from fp32's


@dataclass(frozen=True)
class Backend:
    """What runs the transformer: which precisions it offers on which devices, and how it is built."""

    name: str
    precisions: Mapping[str, tuple[str, ...]]  # precision -> device kinds ("cpu", "cuda")
    extra: str | None  # the pip extra that installs it
    modules: tuple[str, ...]  # what must be importable
    attach: Callable[[Any, Path, str], None] | None  # (SentenceTransformer, export folder, precision)


BACKENDS: Registry[Backend] = Registry("backend")


def resolve_backend(backend: str, device: str, precision: str | None = None) -> tuple[str, str]:
    """The backend to run and why, for `--backend` on `device`. `auto` (the default): OpenVINO fp32
    on CPU when it is installed, else torch. Measured with bench/bench_backends.py on 2 cores (16,782
    texts of STSBenchmark, TwitterSemEval2015, Banking77): openvino fp32 1.10x torch fp32's speed with
    every score equal (largest difference 0), onnx fp32 0.92x, onnx int8 1.43x but scores off by up to
    1.6e-2, torch bf16 0.10x; so the fastest option whose scores equal torch fp32's to 1e-4 is
    openvino fp32. all-mpnet-base-v2 measured 1.01x on 2 threads and 1.00x on one (STSBenchmark): the
    gain is a small model's, never a loss. On CUDA, or for another precision: torch.

    >>> resolve_backend("onnx", "cpu")
    ('onnx', '--backend onnx')
    >>> resolve_backend("auto", "cuda:0")
    ('torch', 'auto: torch on cuda:0 (OpenVINO is chosen for fp32 on CPU only)')
    """
    if backend != "auto":
        return backend, f"--backend {backend}"
    if device.startswith(("cuda", "mps")):
        return "torch", f"auto: torch on {device} (OpenVINO is chosen for fp32 on CPU only)"
    if precision not in (None, "fp32"):
        return "torch", f"auto: torch for --precision {precision} (OpenVINO is chosen for fp32 only)"
    if not all(_importable(m) for m in BACKENDS.get("openvino").modules):
        return "torch", (
            "auto: torch, as OpenVINO is not installed (pip install 'hteb-score[openvino]': measured "
            "1.10x torch's speed on CPU for all-MiniLM-L6-v2 with every score equal)"
        )
    return "openvino", (
        "auto: OpenVINO fp32 on CPU, measured 1.10x torch fp32's speed for all-MiniLM-L6-v2 (1.0x for "
        "all-mpnet-base-v2) with every score equal "
        "(--backend torch to run torch)"
    )


def check_backend(backend: str, precision: str, device: str) -> Backend:
    """Refuse, before any model loads, a backend that is not installed or a precision it does not
    offer on this device."""
    entry = BACKENDS.get(backend)
    kind = "cuda" if device.startswith("cuda") else "cpu"
    if precision not in entry.precisions:
        raise HtebError(f"--backend {backend} offers --precision {', '.join(entry.precisions)}; not {precision}")
    if kind not in entry.precisions[precision]:
        raise HtebError(
            f"--backend {backend} --precision {precision} runs on {', '.join(entry.precisions[precision])}, "
            f"not on {device}"
        )
    missing = [m for m in entry.modules if not _importable(m)]
    if missing:
        raise HtebError(f"--backend {backend} needs {', '.join(missing)}: pip install 'hteb-score[{entry.extra}]'")
    return entry


def precision_flags(settings: Mapping[str, Any]) -> list[Flag]:
    """The card's `reduced_precision` flag for a run encoded in fp16, bf16 or int8 (none for fp32)."""
    precision = settings.get("precision", "fp32")
    if precision not in REDUCED:
        return []
    diff = settings.get("max_diff_vs_torch_fp32")
    measured = "not measured" if diff is None else f"{diff:.2e}"
    return [
        Flag(
            "reduced_precision",
            f"encoded with --backend {settings.get('backend', 'torch')} --precision "
            f"{precision}; largest embedding difference from torch fp32 on the probe set: {measured}",
        )
    ]


def precision_suffix(settings: Mapping[str, Any]) -> str:
    """How `compare` marks a row made in reduced precision: " [onnx int8]"; empty for fp32."""
    precision = settings.get("precision", "fp32")
    return f" [{settings.get('backend', 'torch')} {precision}]" if precision in REDUCED else ""


def _importable(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def export_dir(cache_root: Path, identity: str | None) -> Path:
    """Where a model's exports live: per identity under the cache; a model of unknown identity gets
    a private temporary folder (never reused, as nothing says it is the same model), removed when the
    process ends: each run exports such a model again, and an export is the model's size."""
    if identity is None:
        folder = Path(tempfile.mkdtemp(prefix="hteb-export-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        return folder
    return Path(cache_root) / "exports" / identity.replace(":", "_")


def onnx_export(model: Any, folder: Path, precision: str) -> Path:
    """The transformer module of `model` as ONNX (`model.onnx`, or `model.int8.onnx`), made once."""
    target = Path(folder) / ("model.int8.onnx" if precision == "int8" else "model.onnx")
    if target.is_file():
        return target
    if precision == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        source = onnx_export(model, folder, "fp32")
        quiet = logging.getLogger()  # onnxruntime advises pre-processing through the root logger
        level = quiet.level
        quiet.setLevel(logging.ERROR)
        try:
            return _atomic(target, lambda tmp: quantize_dynamic(source, tmp, weight_type=QuantType.QInt8))
        finally:
            quiet.setLevel(level)
    import torch

    transformer = model[0]
    names = [n for n in INPUTS if n in _forward_inputs(transformer.model)]
    sample = (model.preprocess if hasattr(model, "preprocess") else model.tokenize)(["an export sample", "two"])

    class _Hidden(torch.nn.Module):  # positional inputs in, the last hidden state out
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, *tensors: Any) -> Any:
            return self.inner(**dict(zip(names, tensors, strict=True))).last_hidden_state

    def export(tmp: Path) -> None:
        axes = {name: {0: "batch", 1: "sequence"} for name in (*names, "last_hidden_state")}
        with torch.inference_mode(False), torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript exporter's notes on tracing, not errors
            torch.onnx.export(
                _Hidden(transformer.model.float()).eval(),
                tuple(sample[n].cpu() for n in names),
                str(tmp),
                input_names=names,
                output_names=["last_hidden_state"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )

    return _atomic(target, export)


def _forward_inputs(module: Any) -> set[str]:
    import inspect

    return set(inspect.signature(module.forward).parameters)


def _atomic(target: Path, write: Callable[[Path], Any]) -> Path:
    """`write` into a temporary name beside `target`, then rename: a killed export leaves no half file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".onnx", dir=target.parent)
    os.close(handle)
    tmp = Path(name)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
        shutil.rmtree(tmp.with_suffix(".onnx.data"), ignore_errors=True)
    return target


def _runner(run: Callable[[dict[str, np.ndarray]], np.ndarray], config: Any, names: list[str]) -> Any:
    """A torch module standing in for the transformer's Hugging Face model inside sentence-transformers."""
    import torch

    class _Exported(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.config = config

        def forward(self, **features: Any) -> dict[str, Any]:
            feeds = {n: features[n].cpu().numpy() for n in names if n in features}
            return {"last_hidden_state": torch.from_numpy(np.ascontiguousarray(run(feeds), dtype=np.float32))}

    return _Exported()


def _attach_onnx(model: Any, folder: Path, precision: str) -> None:
    import onnxruntime as ort
    import torch

    path = onnx_export(model, folder, precision)
    options = ort.SessionOptions()
    options.intra_op_num_threads = torch.get_num_threads()
    session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    model[0].model = _runner(lambda feeds: session.run(None, feeds)[0], model[0].model.config, names)


def _attach_openvino(model: Any, folder: Path, precision: str) -> None:
    import openvino
    import torch

    path = onnx_export(model, folder, "fp32")
    # torch's thread count, as onnxruntime's: a Ray worker given T CPUs runs every backend on T threads
    config = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": torch.get_num_threads()}
    compiled = openvino.Core().compile_model(str(path), "CPU", config)
    names = [i.get_any_name() for i in compiled.inputs]
    model[0].model = _runner(lambda feeds: np.asarray(compiled(feeds)[0]), model[0].model.config, names)


BACKENDS.add(
    "torch", Backend("torch", {"fp32": ("cpu", "cuda"), "bf16": ("cpu", "cuda"), "fp16": ("cuda",)}, None, (), None)
)
BACKENDS.add(
    "onnx", Backend("onnx", {"fp32": ("cpu",), "int8": ("cpu",)}, "onnx", ("onnxruntime", "onnx"), _attach_onnx)
)
BACKENDS.add("openvino", Backend("openvino", {"fp32": ("cpu",)}, "openvino", ("openvino", "onnx"), _attach_openvino))
