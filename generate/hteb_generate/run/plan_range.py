"""The range of a plan's GPU hours (issue 47 point 9): what a run pays beyond the model's own work.

`Plan.gpu_hours` is the model's work at two rates: output tokens at the decode rate, prefilled tokens at the
prefill rate. A real run also pays for what those rates leave out, and each of those parts is named here with a
low and a high end and what each end rests on, so a maintainer sees which figure to measure first:

- prefill: no kernel prefills faster than the bf16 matmul ceiling measured on an H200 (622 TFLOP/s, the low
  end of docs/gpu-check/h200.json's range, over Gemma 3 27B's 2 x 27e9 FLOPs per token); the high end is the
  plan's rate (its utilisation is derived, and the int4 AWQ model runs Marlin kernels, not Hopper's wgmma).
- retries: a unit whose output has an error is generated again; Gemma 3 27B int4 AWQ's total error rate is
  3.0% on STS-B (the paper's App. A.2, Table 5). Low: each retry fails as often as a first attempt (p + p^2 + ...
  up to `max_attempts`, of the generation); high: every failing unit fails every attempt (p x (attempts - 1)).
- chunk tails: each stage (an attempt's step) is sent in chunks of `--batch-size` requests, cut in sha256 order.
  An engine feeds its chunks of a stage to vLLM as one stream (engine/vllm_engine.py), each beside the tail of
  the one before, so only the stream's end is a tail: one engine in this process streams the whole stage, and
  with several GPUs each Ray worker streams its lane of the stage's chunks (engine/ray_engine.py), a tail per
  GPU that has a chunk of the stage. A sequence decoding alone is bound by memory: it reads the weights once per
  token, 16.3 GB for the int4 model with its bf16 embeddings, at an H100 SXM's 3.35 TB/s (NVIDIA datasheet): at
  most 205 tokens/s. Low: a tail per first-attempt stage and lane as long as a mean generation request's
  output; high: also a tail per retry stage and lane (a retry stage holds the error rate's share of the
  requests, as under retries), each as long as the most a request may write (`--max-tokens-ceiling`, else
  `--max-tokens`). The judge's chunks answer 1-2 tokens: no tail counted.
- barriers: with several GPUs, a stage ends when its last chunk does; meanwhile the other GPUs wait. Low: the
  chunks share out evenly (none); high: every stage waits one mean chunk on each other GPU.
- cold starts: each GPU starts the generator and then the judge (two vLLM starts: weights read, memory profiled,
  CUDA graphs captured, FlashInfer's kernels compiled unless downloaded). 2 to 10 minutes each: assumed, not
  measured here (no GPU with vLLM has been lent to this project).
- template rendering: before each synchronous call the chat template is rendered and tokenized on the CPU while
  the GPU waits: from 36 us to render one paraphrase prompt to 505 us to render and tokenize it, with SmolLM2's
  tokenizer on this project's CPU over two runs (`python bench/bench_template_rendering.py`), per request.

The low end of the whole is the sum of the low ends and likewise the high end: a range of what is known, not
a confidence interval. Wall-clock hours are the GPU hours over `--gpus`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hteb_generate.run.plan import Plan
from hteb_generate.setup.config import GenerateConfig
from hteb_generate.transform.transformations import TRANSFORMATIONS

#: Gemma 3 27B's FLOPs per prompt token (2 per parameter), and the bf16 matmul ceiling measured on an H200.
FLOPS_PER_TOKEN = 2 * 27e9
MATMUL_CEILING = 622e12
#: Gemma 3 27B int4 AWQ's total error rate on STS-B (the paper's App. A.2, Table 5).
ERROR_RATE = 0.030
#: Bytes read per decoded token by one sequence alone (int4 weights + bf16 embeddings) and an H100 SXM's HBM3.
WEIGHT_BYTES = 16.3e9
MEMORY_BANDWIDTH = 3.35e12
SINGLE_SEQUENCE_TOKENS_PER_SECOND = MEMORY_BANDWIDTH / WEIGHT_BYTES
#: Minutes per vLLM start of the 27B model (assumed), and starts per GPU (the generator, then the judge).
START_MINUTES = (2.0, 10.0)
STARTS_PER_GPU = 2
#: Seconds per request: the fastest render and the slowest render + tokenize of two runs of
#: bench/bench_template_rendering.py on this project's CPU (36 / 275 us and 62 / 505 us).
RENDER_SECONDS = (36e-6, 505e-6)


@dataclass(frozen=True)
class RunShape:
    """What the range needs of a run beyond its costs: how it is chunked, retried and spread."""

    batch_size: int
    max_attempts: int
    most_tokens: int  # the most a request may write
    steps: int  # the longest transformation's steps: a stage per attempt and step
    judge_stages: int  # one per seed and judge request kind (quality, fluency, ParaPLUIE); 0 without a judge
    gpus: int = 1


def run_shape(cfg: GenerateConfig, gpus: int = 1) -> RunShape:
    """The shape of the run `cfg` describes, on `gpus` GPUs."""
    steps = [len(TRANSFORMATIONS.get(name).steps) for name in cfg.llm_transformations]
    return RunShape(
        batch_size=cfg.batch_size,
        max_attempts=cfg.max_attempts,
        most_tokens=cfg.max_tokens_ceiling or cfg.max_tokens,
        steps=max(steps, default=0),
        judge_stages=3 * len(cfg.seeds) if cfg.judge_model is not None else 0,
        gpus=gpus,
    )


@dataclass(frozen=True)
class Part:
    """One named part of a run's GPU hours, with its low and high end and what they rest on."""

    name: str
    low: float
    high: float
    rests_on: str


def parts(plan: Plan, run: RunShape) -> list[Part]:
    """The parts of `plan`'s GPU hours, the model's own work first."""
    total = plan.total
    decode = plan.decode_hours
    floor_rate = max(plan.prefill_tokens_per_second, MATMUL_CEILING / FLOPS_PER_TOKEN)
    prefill = (total.prefill_tokens / floor_rate / 3600, plan.prefill_hours)
    generation = (
        total.generation_output_tokens / plan.tokens_per_second
        + total.generation_prefill_tokens / plan.prefill_tokens_per_second
    ) / 3600
    first_chunks = math.ceil(total.generation / run.batch_size)
    mean_output = total.generation_output_tokens / total.generation if total.generation else 0.0
    # each engine streams its share of a stage's chunks, a tail each (one engine: all of them; Ray: a lane per
    # GPU, on as many GPUs as the stage has chunks)
    first_lanes = min(run.gpus, math.ceil(total.generation / run.steps / run.batch_size))
    retry_lanes = min(run.gpus, max(1, math.ceil(total.generation * ERROR_RATE / run.steps / run.batch_size)))
    retry_stages = (run.max_attempts - 1) * run.steps
    tails = (
        (run.steps * first_lanes, run.steps * first_lanes + retry_stages * retry_lanes) if total.generation else (0, 0)
    )
    lanes = f", {first_lanes} lane(s) each" if run.gpus > 1 else ""
    retried = f", {retry_lanes} lane(s) each" if run.gpus > 1 else ""
    tails_are = (
        f"{run.steps:,} first-attempt stages{lanes}",
        f"those and {retry_stages:,} retry stages{retried} ({tails[1]:,} tails)",
    )
    tail = (
        tails[0] * min(mean_output, run.most_tokens) / SINGLE_SEQUENCE_TOKENS_PER_SECOND / 3600,
        tails[1] * run.most_tokens / SINGLE_SEQUENCE_TOKENS_PER_SECOND / 3600,
    )
    all_chunks = first_chunks + math.ceil(total.judge / run.batch_size)
    mean_chunk = plan.gpu_hours / all_chunks if all_chunks else 0.0
    stages = run.max_attempts * run.steps + run.judge_stages
    requests = total.generation + total.judge
    return [
        Part(
            "decode", decode, decode, f"output tokens at {plan.tokens_per_second:,.0f} tokens/s (--tokens-per-second)"
        ),
        Part(
            "prefill",
            *prefill,
            f"low: the bf16 matmul ceiling measured on an H200 ({MATMUL_CEILING / 1e12:.0f} TFLOP/s, "
            f"{floor_rate:,.0f} tokens/s); high: {plan.prefill_tokens_per_second:,.0f} tokens/s "
            "(--prefill-tokens-per-second)",
        ),
        Part(
            "retries",
            generation * sum(ERROR_RATE**k for k in range(1, run.max_attempts)),
            generation * ERROR_RATE * (run.max_attempts - 1),
            f"Gemma 3 27B int4 AWQ's {ERROR_RATE:.1%} error rate on STS-B (paper, App. A.2), of the generation's "
            f"{generation:,.1f} hours; low: a retry fails as often as a first attempt; high: a failing unit "
            f"fails all {run.max_attempts} attempts",
        ),
        Part(
            "chunk tails",
            *tail,
            f"one sequence alone decodes at most {SINGLE_SEQUENCE_TOKENS_PER_SECOND:,.0f} tokens/s (16.3 GB read "
            f"per token at 3.35 TB/s); low: {tails_are[0]} ending on a mean request ({mean_output:,.0f} tokens); "
            f"high: {tails_are[1]} ending on the most a request may write ({run.most_tokens:,} tokens)",
        ),
        Part(
            "barriers",
            0.0,
            stages * (run.gpus - 1) * mean_chunk,
            f"{stages} stages; high: each waits one mean chunk ({mean_chunk * 60:,.1f} min) on each of the other "
            f"{run.gpus - 1} GPUs (--gpus {run.gpus})",
        ),
        Part(
            "cold starts",
            run.gpus * STARTS_PER_GPU * START_MINUTES[0] / 60,
            run.gpus * STARTS_PER_GPU * START_MINUTES[1] / 60,
            f"{STARTS_PER_GPU} vLLM starts per GPU (generator, judge) of {START_MINUTES[0]:.0f}-"
            f"{START_MINUTES[1]:.0f} min each: assumed, not measured",
        ),
        Part(
            "template rendering",
            requests * RENDER_SECONDS[0] / 3600,
            requests * RENDER_SECONDS[1] / 3600,
            f"{requests:,} requests, each rendered ({RENDER_SECONDS[0] * 1e6:.0f} us) or rendered and tokenized "
            f"({RENDER_SECONDS[1] * 1e6:.0f} us) while the GPU waits (bench/bench_template_rendering.py)",
        ),
    ]


def render_range(plan: Plan, run: RunShape) -> str:
    """The parts as a Markdown table, then the range in GPU hours and in wall-clock hours on `run.gpus` GPUs."""
    found = parts(plan, run)
    lines = ["| part | low (GPU h) | high (GPU h) | rests on |", "|---|---|---|---|"]
    lines += [f"| {p.name} | {p.low:,.1f} | {p.high:,.1f} | {p.rests_on} |" for p in found]
    low, high = sum(p.low for p in found), sum(p.high for p in found)
    lines += [
        "",
        f"GPU hours: {low:,.1f} to {high:,.1f} (the point estimate above, {plan.gpu_hours:,.1f}, is decode + prefill "
        f"at the given rates); wall-clock on {run.gpus} GPU{'s' if run.gpus > 1 else ''}: "
        f"{low / run.gpus:,.1f} to {high / run.gpus:,.1f} hours.",
    ]
    return "\n".join(lines)
