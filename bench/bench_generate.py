"""Generator throughput: requests/s batched vs one prompt at a time on the same engine and model,
and the wall time of a fully cached pipeline rerun. On demand, not a test:

    python bench/bench_generate.py [--engine transformers|vllm] [--requests 16] [--max-tokens 32]

Prints one JSON object. Requests are real STSBenchmark sentences under the paraphrasing prompt of
the smollm2-fewshot set, greedy.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import click

REPO = Path(__file__).resolve().parents[1]


def _requests(n: int, max_tokens: int):
    from hteb_generate.setup.config import default_data_dir
    from hteb_generate.engine import ChatRequest
    from hteb_generate.transform.transformations import PROMPT_SETS
    from hteb_contract.sources import read_source_dir

    rows = read_source_dir(default_data_dir() / "STSBenchmark").eval_rows()
    texts = list(dict.fromkeys(r["sentence1"] for r in rows))[:n]
    template = PROMPT_SETS.get("smollm2-fewshot").template("paraphrase")
    return [ChatRequest(template.messages(t, "eng"), 0.0, 1.0, max_tokens, 1339) for t in texts]


@click.command()
@click.option("--engine", type=click.Choice(["transformers", "vllm"]), default="transformers", show_default=True)
@click.option("--requests", "n_requests", type=int, default=16, show_default=True)
@click.option("--max-tokens", type=int, default=32, show_default=True)
@click.option("--batch-size", type=int, default=16, show_default=True)
def main(engine: str, n_requests: int, max_tokens: int, batch_size: int) -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")

    from hteb_generate.setup.config import build_config, default_cache_dir
    from hteb_generate.engine import create_engine
    from hteb_generate.engine.models import convert_smollm2
    from hteb_generate.run.pipeline import run

    model = convert_smollm2(default_cache_dir())
    options = {"dtype": "float32", "max_model_len": 1024} if engine == "vllm" else {"batch_size": batch_size}
    started = time.perf_counter()
    llm = create_engine(engine, model_path=str(model), model_id="smollm2", revision="bench", **options)
    load_s = time.perf_counter() - started
    requests = _requests(n_requests, max_tokens)

    started = time.perf_counter()
    batched = llm.chat(requests)
    batched_s = time.perf_counter() - started
    started = time.perf_counter()
    single = [llm.chat([r])[0] for r in requests]
    single_s = time.perf_counter() - started

    # A fully cached rerun of a small cpu-profile pipeline (the first run fills a fresh cache; the
    # rerun never loads the model).
    tmp = Path(tempfile.mkdtemp(prefix="hteb-bench-"))
    try:
        (tmp / "models").mkdir()
        (tmp / "models" / model.name).symlink_to(model)
        cfg = build_config(
            seed="1339",
            profile="cpu",
            overrides={
                "datasets": "STSBenchmark,Banking77",
                "transformations": "paraphrasing,summarisation",
                "max_tokens": 16,
                "cache_dir": str(tmp),
                "store": str(tmp / "store"),
                "label": "bench",
            },
        )
        cfg = replace(cfg, judge_model=None, manifest_md=None)
        started = time.perf_counter()
        first = run(cfg, log=lambda m: None)
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        cached = run(cfg, log=lambda m: None)
        cached_s = time.perf_counter() - started
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(
        json.dumps(
            {
                "engine": engine,
                "requests": len(requests),
                "max_tokens": max_tokens,
                "batch_size": batch_size,
                "engine_load_s": round(load_s, 2),
                "batched_s": round(batched_s, 2),
                "batched_req_per_s": round(len(requests) / batched_s, 3),
                "one_at_a_time_s": round(single_s, 2),
                "one_at_a_time_req_per_s": round(len(requests) / single_s, 3),
                "speedup": round(single_s / batched_s, 2),
                "same_outputs": batched == single,
                "pipeline_first_run_s": round(first_s, 2),
                "pipeline_first_llm_calls": first.manifest["counters"]["llm_calls"],
                "pipeline_cached_rerun_s": round(cached_s, 2),
                "pipeline_cached_llm_calls": cached.manifest["counters"]["llm_calls"],
                "cpu_count": os.cpu_count(),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
