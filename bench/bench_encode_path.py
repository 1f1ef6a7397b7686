"""The batched encode path (score/hteb_score/encoding/batched.py) against SentenceTransformer.encode,
measured in one run on SciFact documents (../shared/data), on whatever device is here.

On CUDA both run in fp16 (hteb-score's default there) and the path uses every visible GPU as well;
on CPU, fp32. Prints docs/s of each, their ratio, and the largest embedding difference.

    python bench/bench_encode_path.py [--docs 5183] [--model PATH] [--token-budget 16384] [--batch-size 32]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("HTEB_DATA_DIR", REPO.parent / "shared" / "data"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--model", default=None, help="default: the PyPI-shipped all-MiniLM-L6-v2")
    parser.add_argument("--token-budget", type=int, default=16384)
    parser.add_argument("--batch-size", type=int, default=32, help="SentenceTransformer.encode's batch size")
    args = parser.parse_args()
    import numpy as np
    import torch
    from sentence_transformers import SentenceTransformer

    from hteb_score.encoding.batched import encode_batched, replicate
    from hteb_score.encoding.model_files import default_model_path

    rows = [json.loads(line) for line in (DATA / "SciFact" / "corpus.jsonl").open()][: args.docs]
    docs = [f"{r.get('title') or ''} {r['text']}".strip() for r in rows]
    cuda = torch.cuda.is_available()
    devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())] if cuda else ["cpu"]
    model = SentenceTransformer(args.model or default_model_path(), device=devices[0])
    if cuda:
        model.half()
    model.encode(docs[:64], batch_size=args.batch_size)  # warm-up: kernels, allocator
    started = time.perf_counter()
    reference = model.encode(docs, batch_size=args.batch_size, convert_to_numpy=True)
    plain = time.perf_counter() - started
    results = [("SentenceTransformer.encode", plain, 0.0)]
    for count in sorted({1, len(devices)}):
        replicas = replicate(model, devices[:count])
        encode_batched(replicas, docs[:64], token_budget=args.token_budget)
        started = time.perf_counter()
        out = encode_batched(replicas, docs, token_budget=args.token_budget)
        took = time.perf_counter() - started
        results.append((f"batched path, {count} device(s)", took, float(np.abs(out - reference).max())))
    print(
        f"{len(docs)} SciFact documents, {devices[0]}{' x' + str(len(devices)) if len(devices) > 1 else ''}, "
        f"{'fp16' if cuda else 'fp32'}, {os.cpu_count()} CPU(s)"
    )
    for name, took, diff in results:
        print(f"{name:<32} {len(docs) / took:>9.1f} docs/s  {plain / took:>5.2f}x  max diff {diff:.1e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
