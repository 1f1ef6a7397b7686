"""Generation over Ray workers: requests/s of 2 Ray workers against 1, and against the single-process
engine, on the same requests, as ratios measured in one run; and what Ray adds per request. On
demand, not a test:

    python bench/bench_ray.py [--requests 64] [--max-tokens 16] [--chunk 8]

The requests are real STSBenchmark sentences under the smollm2-fewshot paraphrasing prompt, greedy,
cut into chunks of --chunk as the call cache cuts a stage (each chunk one batch of the transformers
engine). Every engine runs with one torch thread, so each Ray worker has one core of this machine;
the single-process engine is also timed with every core. Model loading is timed apart. Prints one
JSON object; every variant's answers are checked equal to the single-process engine's.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from functools import partial


def _requests(n: int, max_tokens: int):
    from hteb_contract.sources import read_source_dir
    from hteb_generate.setup.config import default_data_dir
    from hteb_generate.engine import ChatRequest
    from hteb_generate.transform.transformations import PROMPT_SETS

    rows = read_source_dir(default_data_dir() / "STSBenchmark").eval_rows()
    texts = list(dict.fromkeys(r["sentence1"] for r in rows))[:n]
    template = PROMPT_SETS.get("smollm2-fewshot").template("paraphrase")
    return [ChatRequest(template.messages(t, "eng"), 0.0, 1.0, max_tokens, 1339) for t in texts]


def _answer(engine, chunks) -> tuple[float, list]:
    """Seconds to answer every chunk, and the answers in request order."""
    started = time.perf_counter()
    done = dict(engine.chat_results_many(chunks))
    seconds = time.perf_counter() - started
    return seconds, [result for index in range(len(chunks)) for result in done[index]]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--chunk", type=int, default=8)
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")

    import ray

    from hteb_generate.setup.config import default_cache_dir
    from hteb_generate.engine import create_engine
    from hteb_generate.engine.ray_engine import RayEngine
    from hteb_generate.engine.models import convert_smollm2

    model = str(convert_smollm2(default_cache_dir()))
    requests = _requests(args.requests, args.max_tokens)
    chunks = [requests[i : i + args.chunk] for i in range(0, len(requests), args.chunk)]
    cores = os.cpu_count() or 1
    results: dict[str, dict[str, float]] = {}

    def factory(threads: int):
        return partial(
            create_engine,
            "transformers",
            model_path=model,
            model_id="smollm2",
            revision="bench",
            batch_size=args.chunk,
            threads=threads,
        )

    reference = None
    for name, threads in (("single_process_1_thread", 1), (f"single_process_{cores}_threads", cores)):
        started = time.perf_counter()
        engine = factory(threads)()
        load = time.perf_counter() - started
        seconds, answers = _answer(engine, chunks)
        reference = reference or answers
        assert answers == reference, f"{name}: answers differ from the single-process engine's"
        results[name] = {
            "load_s": round(load, 2),
            "answer_s": round(seconds, 2),
            "requests_per_s": round(len(requests) / seconds, 2),
        }
        del engine

    for workers in (1, 2):
        started = time.perf_counter()
        engine = RayEngine(
            factory(1),
            model_id="smollm2",
            revision="bench",
            address="local",
            workers=workers,
            resources={"num_cpus": 1},
        )
        _answer(engine, chunks[:workers])  # the workers have loaded their models
        load = time.perf_counter() - started
        seconds, answers = _answer(engine, chunks)
        assert answers == reference, f"ray {workers}: answers differ from the single-process engine's"
        results[f"ray_{workers}_workers"] = {
            "start_and_load_s": round(load, 2),
            "answer_s": round(seconds, 2),
            "requests_per_s": round(len(requests) / seconds, 2),
        }
        engine.close()
        ray.shutdown()

    one, two = results["ray_1_workers"], results["ray_2_workers"]
    single = results["single_process_1_thread"]
    print(
        json.dumps(
            {
                "requests": len(requests),
                "chunks": len(chunks),
                "max_tokens": args.max_tokens,
                "cores": cores,
                "results": results,
                "ratios": {
                    "ray_2_vs_ray_1_workers": round(two["requests_per_s"] / one["requests_per_s"], 2),
                    "ray_2_workers_vs_single_process_1_thread": round(
                        two["requests_per_s"] / single["requests_per_s"], 2
                    ),
                    f"ray_2_workers_vs_single_process_{cores}_threads": round(
                        two["requests_per_s"] / results[f"single_process_{cores}_threads"]["requests_per_s"], 2
                    ),
                    "ray_1_worker_vs_single_process_1_thread": round(
                        one["requests_per_s"] / single["requests_per_s"], 2
                    ),
                },
                "ray_overhead_ms_per_request": round(1000 * (one["answer_s"] - single["answer_s"]) / len(requests), 1),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
