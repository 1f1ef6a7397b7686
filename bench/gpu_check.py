"""The GPU check (docs/gpu.md, "The GPU check"): what one GPU host without network or vLLM can prove, in one run
of a few minutes, written to one JSON: the host checks and the doctor's facts on the real driver and nvidia-smi,
the scorer's CUDA encode path against sentence-transformers and CPU fp32, hteb-score end to end on the bundled
sample on CUDA against CPU, and the bf16 matmul throughput and memory bandwidth `plan` rests on. Without CUDA it runs
what needs none and names each step it skipped, and why.

Why a prepared model: the device tool sends the whole tracked tree (36 MiB, most of it docs/findings' work units)
with what a check carries, 64 MiB in all, and no model's float32 or float16 weights fit beside the tree and the wheels
the device image lacks. `--prepare` stores paraphrase-MiniLM-L3-v2's weights (a findings model, 3 layers) in int8 with
a float32 scale per row (17 MiB); the check turns them back into float32 weights before anything loads, so every
comparison here runs the same weights, a real trained model's within its int8 rounding.

    python bench/gpu_check.py --prepare --model FOLDER   # here, once: out/gpu-check (make gpu-check-prepare)
    python bench/gpu_check.py --out out/gpu_check.json   # on the GPU host (make gpu-check)
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _package in ("schemas", "score", "generate"):  # the repository's packages, whether installed or not
    sys.path.insert(0, str(ROOT / _package))

PREPARED_ROOT = ROOT / "out" / "gpu-check"
PREPARED = PREPARED_ROOT / "model"
WHEELS = PREPARED_ROOT / "wheels"
INT8_WEIGHTS, SCALE = "model.int8.safetensors", ".int8_scale"
#: Distributions the scorer's contract imports that the device image lacks (device/KINDS.md's package list): carried
#: as wheels at the versions installed where --prepare runs, unpacked there by `_unpack_wheels`.
DEVICE_WHEELS = {
    "jsonschema": "jsonschema",
    "jsonschema_rs": "jsonschema_rs",
    "referencing": "referencing",
    "jsonschema-specifications": "jsonschema_specifications",
    "rpds-py": "rpds",
    "pytrec-eval-terrier": "pytrec_eval",
    "rjsmin": "rjsmin",
    "rcssmin": "rcssmin",
    "num2words": "num2words",  # the generator's configuration (the doctor's checks): sensitivity's numbers in words
}  # distribution: module
#: The sample's task types whose evaluator needs faiss (evaluators/retrieval.py), left out of the score step where
#: faiss is missing: its wheel (19 MiB) does not fit the carry beside the tree and the model.
FAISS_TASK_TYPES = ("Retrieval",)
#: (device, precision) of each hteb-score run of the score step; the first is the reference
SCORE_RUNS = (("cpu", "fp32"), ("cuda", "fp32"), ("cuda", "bf16"))
#: The device tool sends the whole tracked tree with what a run carries: all of it must fit (a test adds it up).
CARRY_LIMIT = 64 * 2**20
DEVICE_PYTHON = "3.12"
DEVICE_PLATFORMS = ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64")


def _unpack_wheels() -> None:
    """Put the carried wheels ahead on sys.path, unpacked (a wheel is a zip of its import tree; compiled modules
    cannot be imported from the zip), unless this Python has every one of them already."""
    if not WHEELS.is_dir() or all(importlib.util.find_spec(module) for module in DEVICE_WHEELS.values()):
        return
    site = tempfile.mkdtemp(prefix="gpu-check-site-")
    for wheel in sorted(WHEELS.glob("*.whl")):
        with zipfile.ZipFile(wheel) as archive:
            archive.extractall(site)
    sys.path.insert(0, site)


_unpack_wheels()
#: Gemma 3 27B's text config (config.json of google/gemma-3-27b-it, the weights gemma-3-27b-it-int4-awq
#: quantizes): hidden 5376, MLP intermediate 21504, 32 query heads and 16 KV heads of 128. engine_plan.py's
#: activations (2 x 21,504 per token) and plan.py's prefill rate (2 x 27e9 FLOPs per token) rest on them.
GEMMA3_27B = {"hidden": 5376, "intermediate": 21504, "heads": 32, "kv_heads": 16, "head_dim": 128}
#: Tokens per prefill batch: vLLM's max_num_batched_tokens default on a GPU of 70 GiB or more (engine_plan.py).
PREFILL_TOKENS = 16384
BATCHES = (1, 8, 64)  # batch sizes an embedding must not depend on
REPLICA_TOKENS = 512  # the token budget of the two-replica encode: several batches of the sample's texts


def gemma_shapes(tokens: int) -> dict[str, tuple[int, int, int]]:
    """(M, K, N) of each projection of one Gemma 3 27B layer on `tokens` tokens."""
    g = GEMMA3_27B
    qkv = (g["heads"] + 2 * g["kv_heads"]) * g["head_dim"]
    return {
        "qkv_proj": (tokens, g["hidden"], qkv),
        "o_proj": (tokens, g["heads"] * g["head_dim"], g["hidden"]),
        "gate_up_proj": (tokens, g["hidden"], 2 * g["intermediate"]),
        "down_proj": (tokens, g["intermediate"], g["hidden"]),
    }


# -- step 1: the host --------------------------------------------------------------------------------------------


def host_step() -> dict[str, Any]:
    """gpu_host.py's checks on the real nvidia-smi, and the doctor's checks that need no vLLM."""
    from hteb_generate.setup import gpu_host
    from hteb_generate.setup.machine import probe

    gpus, note, driver = gpu_host.query_gpus()
    facts = probe()
    checked: dict[str, str | None] = {}  # check -> the problem it found (None: none)
    skipped: dict[str, str] = {}
    try:  # the doctor reads the generator's whole configuration, which needs all of the generator's packages
        from hteb_generate.setup.config import build_config
        from hteb_generate.setup.doctor import CHECKS
    except ModuleNotFoundError as missing:
        skipped["doctor"] = (
            f"the generator's configuration needs {missing.name}, not installed here (a device check "
            "carries 64 MiB): make doctor on a host with `make install-gpu` runs every check"
        )
        CHECKS = {}
    else:
        cfg = build_config(seed="0", profile="gpu", overrides={"publish": False})
    for name, check in CHECKS.items():
        if name == "vllm" and facts.vllm is None:
            skipped[name] = "vLLM is not installed here: make install-gpu on a host with network installs it"
            continue
        checked[name] = check(cfg, facts)
    skipped["engine_start"] = (
        "vLLM's own start-up (its free-memory check, AWQ-Marlin kernels, Gemma 3 loading) "
        "needs vLLM and the model: make doctor, then make generate, on a host with network"
    )
    return {
        "python": platform.python_version(),
        "nvidia_smi": shutil.which("nvidia-smi"),
        "gpus": [vars(g) for g in gpus],
        "gpu_note": note,
        "driver": driver,
        "host_problems": gpu_host.host_problems(platform.python_version(), gpus, note, driver),
        "torch": facts.torch,
        "torch_cuda": facts.torch_cuda,
        "vllm": facts.vllm,
        "doctor_checked": checked,
        "doctor_skipped": skipped,
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
    """The model: --model, else the prepared copy (its int8 weights made float32 again), else the package's folder."""
    if given:
        return given
    if PREPARED.is_dir():
        return dequantized(PREPARED, Path(tempfile.mkdtemp(prefix="gpu-check-model-")) / "model")
    from hteb_score.encoding.model_files import default_model_path

    return default_model_path()


def quantized(tensors: dict[str, Any]) -> dict[str, Any]:
    """Each floating tensor as int8 with a float32 scale per row (its last axis' absolute maximum / 127)."""
    import torch

    out = {}
    for name, tensor in tensors.items():
        if not tensor.is_floating_point():
            out[name] = tensor
            continue
        values = tensor.float()
        scale = values.abs().amax(dim=-1, keepdim=True).clamp(min=1e-12) / 127
        out[name], out[name + SCALE] = (values / scale).round().to(torch.int8), scale
    return out


def dequantized(prepared: Path, target: Path) -> str:
    """A copy of the prepared folder whose model.safetensors holds the int8 weights times their scales, in float32."""
    from safetensors.torch import load_file, save_file

    shutil.copytree(prepared, target, ignore=shutil.ignore_patterns(INT8_WEIGHTS))
    stored = load_file(str(prepared / INT8_WEIGHTS))
    save_file(
        {
            name: t.float() * stored[name + SCALE] if name + SCALE in stored else t
            for name, t in stored.items()
            if not name.endswith(SCALE)
        },
        str(target / "model.safetensors"),
        metadata={"format": "pt"},
    )
    return str(target)


def compare(a: Any, b: Any) -> dict[str, float]:
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    return {
        "cosine_min": float(cos.min()),
        "cosine_mean": float(cos.mean()),
        "max_abs_diff": float(np.abs(a - b).max()),
    }


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

    runs = {
        b: np.asarray(model.encode(texts, batch_size=b, convert_to_numpy=True, show_progress_bar=False))
        for b in BATCHES
    }
    return {f"max_abs_diff_batch_{b}_vs_1": float(np.abs(runs[b] - runs[1]).max()) for b in BATCHES[1:]}


def two_replicas(model: Any, device: str, texts: list[str]) -> dict[str, Any]:
    """The several-device path (`--device cuda:0,cuda:1`: a replica per device, each fed its share of the batches
    by a thread of its own) run with two replicas on one device, against one replica: the rows must come back in
    input order and equal. Batches of REPLICA_TOKENS padded tokens, so that both replicas get some."""
    from hteb_score.encoding.batched import budget_batches, encode_batched, replicate, token_ids

    one = encode_batched([model], texts, token_budget=REPLICA_TOKENS)
    two = encode_batched(replicate(model, [device, device]), texts, token_budget=REPLICA_TOKENS)
    batches = budget_batches([len(i) for i in token_ids(model, texts, None)], REPLICA_TOKENS)
    return {"batches": len(batches), **compare(two, one)}


def encode_step(model: str, texts: list[str], cuda: bool) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """CPU fp32 (the reference) against sentence-transformers here; on CUDA, the Encoder's fp32, fp16 and bf16
    against both."""
    import torch
    from sentence_transformers import SentenceTransformer

    from hteb_score.encoding.encoder import Encoder

    result: dict[str, Any] = {"model": model, "texts": len(texts)}
    cpu = Encoder.load(model, device="cpu", precision="fp32", progress=False)
    reference, rate = timed(lambda: cpu.encode(texts, None), len(texts))
    result["cpu_fp32"] = {"weights_dtype": cpu.dtype, "texts_per_second": rate}
    plain = SentenceTransformer(model, device="cpu", model_kwargs={"dtype": torch.float32})
    result["cpu_fp32"]["vs_sentence_transformers_cpu"] = compare(
        reference, plain.encode(texts, convert_to_numpy=True, show_progress_bar=False)
    )
    result["cpu_fp32"]["two_replicas_vs_one"] = two_replicas(cpu.model, "cpu", texts)
    if not cuda:
        return result, [{"step": "encode_cuda", "why": "torch.cuda.is_available() is False: no CUDA device"}]
    st_cuda = SentenceTransformer(model, device="cuda", model_kwargs={"dtype": torch.float32})
    st_vectors = st_cuda.encode(texts, convert_to_numpy=True, show_progress_bar=False)
    result["sentence_transformers_cuda_fp32_vs_cpu_fp32"] = compare(st_vectors, reference)
    for precision in ("fp32", "fp16", "bf16"):
        encoder = Encoder.load(model, device="cuda", precision=precision, progress=False)
        vectors, rate = timed(lambda: encoder.encode(texts, None), len(texts))
        result[f"cuda_{precision}"] = {
            "weights_dtype": encoder.dtype,
            "token_budget": encoder.token_budget,
            "texts_per_second": rate,
            "max_diff_vs_torch_fp32_probe": encoder.max_diff,
            "vs_cpu_fp32": compare(vectors, reference),
            "vs_sentence_transformers_cuda_fp32": compare(vectors, st_vectors),
            "batch_dependence": batch_dependence(encoder.model, texts[:64]),
        }
        if precision == "fp32":
            result["cuda_fp32"]["two_replicas_vs_one"] = two_replicas(encoder.model, "cuda:0", texts)
    return result, []


# -- step 3: the scorer end to end ------------------------------------------------------------------------------


def score_datasets() -> tuple[list[str], list[str]]:
    """The bundled sample's datasets this Python can score, and those it leaves out: a retrieval dataset where
    faiss is missing."""
    from hteb_contract.stores import open_store
    from hteb_score import DEFAULT_STORE, SAMPLE_REVISION

    revision = open_store(DEFAULT_STORE).fetch(SAMPLE_REVISION)
    faiss = importlib.util.find_spec("faiss") is not None
    kept, left = [], []
    for name in revision.dataset_names():
        needs_faiss = revision.source(name).info.task_type in FAISS_TASK_TYPES
        (left if needs_faiss and not faiss else kept).append(name)
    return kept, left


def card_scores(card: dict[str, Any]) -> dict[str, float]:
    """A card's scores by what they score: 'dataset/subset/transformation/seed/metric' -> value (null left out)."""
    return {
        "/".join(str(r[k]) for k in ("dataset", "subset", "transformation", "seed", "metric")): r["value"]
        for r in card["scores"]
        if r["value"] is not None
    }


def versus_reference(scores: dict[str, float], reference: dict[str, float]) -> dict[str, Any]:
    """Whether two cards scored the same things, and their largest difference (in points, 0-100) over the scores
    both hold, with the score it is at (the first in order among equal ones); None where they share none."""
    shared = sorted(scores.keys() & reference.keys())
    diffs = [abs(scores[key] - reference[key]) * 100 for key in shared]
    worst = max(range(len(shared)), key=diffs.__getitem__, default=None)
    return {
        "same_scores": set(scores) == set(reference),
        "max_abs_diff_points": None if worst is None else diffs[worst],
        "at": None if worst is None else shared[worst],
    }


def score_step(model: str, cuda: bool, work: Path) -> tuple[dict[str, Any], list[dict[str, str]]]:
    """hteb-score on the bundled sample (the command's own code, in this process) on CPU fp32, the reference, and
    on CUDA in fp32 and bf16, each with an embedding cache of its own (a cache is keyed by the model's identity,
    which holds the precision but not the device); every CUDA card's scores against the reference's, in points."""
    from hteb_score.cli import main as hteb_score

    kept, left = score_datasets()
    skipped = [
        {"step": "score_retrieval", "why": f"faiss is not installed here (its wheel does not fit the carry): {name}"}
        for name in left
    ]
    result: dict[str, Any] = {"datasets": kept, "runs": {}}
    reference: dict[str, float] = {}
    for device, precision in SCORE_RUNS:
        if device == "cuda" and not cuda:
            skipped.append({"step": "score_cuda", "why": "torch.cuda.is_available() is False: no CUDA device"})
            break
        name = f"{device}_{precision}"
        out = work / name
        args = [model, "--datasets", ",".join(kept), "--device", device, "--backend", "torch", "--precision", precision]
        start = time.perf_counter()
        code = hteb_score([*args, "--cache-dir", str(work / f"{name}-cache"), "--out", str(out), "--quiet"])
        if code != 0:  # named, and the check goes on: a device's minutes are few
            why = f"hteb-score {' '.join(args)} exited {code} (its one line is on stderr)"
            skipped.append({"step": f"score_{name}", "why": why})
            if not reference:
                break
            continue
        card = json.loads((out / "result_card.json").read_text(encoding="utf-8"))
        scores = card_scores(card)
        run: dict[str, Any] = {
            "seconds": time.perf_counter() - start,
            "encode": {k: card["encode"][k] for k in ("backend", "device", "precision", "dtype")},
            "flags": sorted({flag["code"] for flag in card["flags"]}),
            "scores": len(scores),
            "original": card["aggregates"]["original"],
        }
        if not reference:
            reference = scores
        else:
            run["vs_cpu_fp32"] = versus_reference(scores, reference)
        result["runs"][name] = run
    return result, skipped


# -- step 4: the hardware numbers plan rests on ------------------------------------------------------------------


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
    source = torch.empty(2**30, dtype=torch.uint8, device="cuda")  # 1 GiB
    target = torch.empty_like(source)
    copies = rate(lambda: target.copy_(source))
    return {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gemma3_27b": GEMMA3_27B,
        "bf16_matmul": matmul,
        # a copy reads and writes every byte: 2 bytes moved per byte copied
        "copy_bandwidth_gb_per_s": 2 * source.numel() * copies / 1e9,
    }


# -- preparing and running ---------------------------------------------------------------------------------------


def prepare(target: Path, source: str | None = None) -> int:
    """`source` (default: the scorer's default model) with int8-stored weights under `target`/model, and the
    wheels of DEVICE_WHEELS under `target`/wheels: what the device check carries besides the tracked tree."""
    from safetensors.torch import load_file, save_file

    from hteb_score.encoding.model_files import default_model_path

    model = Path(source or default_model_path())
    tmp = target.with_name(target.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(model, tmp / "model", ignore=shutil.ignore_patterns("*.safetensors", "README.md", ".gitattributes"))
    save_file(
        quantized(load_file(str(model / "model.safetensors"))),
        str(tmp / "model" / INT8_WEIGHTS),
        metadata={"format": "pt"},
    )
    pins = [f"{name}=={metadata.version(name)}" for name in DEVICE_WHEELS]
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "-q",
            "--no-deps",
            "--only-binary=:all:",
            "--python-version",
            DEVICE_PYTHON,
            "--implementation",
            "cp",
            *(f"--platform={p}" for p in DEVICE_PLATFORMS),
            "-d",
            str(tmp / "wheels"),
            *pins,
        ],
        check=True,
    )
    shutil.rmtree(target, ignore_errors=True)
    tmp.rename(target)
    size = sum(p.stat().st_size for p in target.rglob("*") if p.is_file())
    print(f"{target}: {size / 2**20:.1f} MiB ({model.name} with int8-stored weights; {len(pins)} wheels)")
    return 0


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    report: dict[str, Any] = {"skipped": []}
    started = time.perf_counter()
    report["host"] = host_step()
    cuda = torch.cuda.is_available()
    texts = sample_texts(args.texts)
    model = model_folder(args.model)
    report["encode"], skipped = encode_step(model, texts, cuda)
    report["skipped"] += skipped
    with tempfile.TemporaryDirectory(prefix="gpu-check-score-") as work:
        report["score"], skipped = score_step(model, cuda, Path(work))
    report["skipped"] += skipped
    if cuda:
        report["hardware"] = hardware_step(args.seconds)
    else:
        report["skipped"].append({"step": "hardware", "why": "torch.cuda.is_available() is False: no CUDA device"})
    report["seconds"] = time.perf_counter() - started
    return report


def replicas_said(run: dict[str, Any]) -> str:
    """The two-replica encode of a summary row ('' for a run without one: another precision, an earlier check)."""
    if "two_replicas_vs_one" not in run:
        return ""
    replicas = run["two_replicas_vs_one"]
    return (
        f"; two replicas on one GPU vs one: max abs diff {replicas['max_abs_diff']:.1e} ({replicas['batches']} batches)"
    )


def summary(report: dict[str, Any]) -> str:
    """The Markdown table docs/gpu.md quotes of a check's JSON (a test holds the page to it); what the host or a
    card named (GPU, driver, versions, the score a difference is at) escaped for a table cell."""
    from hteb_contract.common.escape import md_text

    host, encode, hardware = report["host"], report["encode"], report["hardware"]
    gpu = host["gpus"][0]
    rows = [
        (
            "GPU, driver, torch",
            f"{md_text(gpu['name'])} ({gpu['memory_gib']:.0f} GiB), {md_text(host['driver'])}, {md_text(host['torch'])}",
        )
    ]
    cpu = encode["cpu_fp32"]
    rows.append(
        (
            f"Encoder CPU fp32 vs sentence-transformers ({encode['texts']} texts)",
            f"max abs diff {cpu['vs_sentence_transformers_cpu']['max_abs_diff']:.1e}",
        )
    )
    for precision in ("fp32", "fp16", "bf16"):
        if f"cuda_{precision}" not in encode:  # a check run before bf16 was measured
            continue
        cuda = encode[f"cuda_{precision}"]
        batch = max(cuda["batch_dependence"].values())
        rows.append(
            (
                f"Encoder CUDA {precision} vs CPU fp32",
                (
                    f"cosine min {cuda['vs_cpu_fp32']['cosine_min']:.7f}, max abs diff "
                    f"{cuda['vs_cpu_fp32']['max_abs_diff']:.1e}; batch 1/8/64 differ by {batch:.1e}; "
                    f"{cuda['texts_per_second']:,.0f} texts/s (CPU here: {cpu['texts_per_second']:,.0f})"
                    + replicas_said(cuda)
                ),
            )
        )
    score = report.get("score", {"runs": {}})  # a check run before the score step has none
    for run in score["runs"].values():
        if "vs_cpu_fp32" not in run:  # the reference
            continue
        versus, cpu_run, settings = run["vs_cpu_fp32"], score["runs"]["cpu_fp32"], run["encode"]
        if versus["at"] is None:  # no score in common: nothing to print but that
            rows.append((f"hteb-score on the sample, {settings['device']} {settings['precision']}", "no score shared"))
            continue
        rows.append(
            (
                f"hteb-score on the sample ({len(score['datasets'])} dataset{'s' * (len(score['datasets']) != 1)}), "
                f"{settings['device']} "
                f"{settings['precision']} vs CPU fp32",
                (
                    f"largest score difference {versus['max_abs_diff_points']:.2f} points of {run['scores']} "
                    f"({md_text(versus['at'])}); original {run['original']:.2f} vs {cpu_run['original']:.2f}; "
                    f"{run['seconds']:.0f} s (CPU here: {cpu_run['seconds']:.0f} s)"
                ),
            )
        )
    for tokens in (16384, 256):
        rates = [v["tflops"] for k, v in hardware["bf16_matmul"].items() if k.endswith(f"_M{tokens}")]
        rows.append(
            (f"bf16 matmul, Gemma 3 27B projections, {tokens:,} tokens", f"{min(rates):.0f}-{max(rates):.0f} TFLOP/s")
        )
    rows.append(("device-to-device copy", f"{hardware['copy_bandwidth_gb_per_s']:,.0f} GB/s (read + written)"))
    return "\n".join(["| measured | value |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows)]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "out" / "gpu_check.json")
    parser.add_argument("--texts", type=int, default=512, help="texts of the bundled sample to embed")
    parser.add_argument("--model", help="a sentence-transformers folder (default: the prepared copy, else the package)")
    parser.add_argument("--seconds", type=float, default=1.0, help="time each matmul shape and the copy this long")
    parser.add_argument(
        "--prepare",
        action="store_true",
        help=f"write the int8-stored model (--model, else the default) and the wheels to {PREPARED_ROOT}",
    )
    parser.add_argument("--summary", type=Path, help="print the Markdown table docs/gpu.md quotes of this JSON")
    args = parser.parse_args(argv)
    if args.summary:
        print(summary(json.loads(args.summary.read_text(encoding="utf-8"))), end="")
        return 0
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.prepare:
        return prepare(PREPARED_ROOT, args.model)
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
