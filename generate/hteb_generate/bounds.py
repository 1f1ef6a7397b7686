"""The range of every numeric option of a run, checked before any work.

Why a table: a number out of range (`--temperature inf`, `--max-texts 0`, a seed of 2**70) used
to pass `validate` and fail mid-run or after it, or be accepted silently. Each option's range
comes from where its value ends up:

- Integers recorded in the revision (seeds, `max_tokens` in every item; the others in the
  manifest's config) are at most 2**63 - 1: item parquet columns are int64 (`hteb_contract.arrow`).
  Seeds are also at least 0: numpy's seeding refuses negative seeds, and a Hub split name
  `<transformation>_<seed>` must match `^\\w+$` (no '-').
- Counts (`--max-tokens`, `--max-attempts`, `--batch-size`, `--sample`, `--max-texts`,
  `--max-list`, `--tensor-parallel-size`, `--max-model-len`) are at least 1: 0 gives an empty
  or broken run.
- A temperature is 0 (greedy) or from 0.01 to 100: vLLM raises anything in (0, 0.01) to 0.01
  without a word, and the transformers engine divides float32 logits by it (1e-40 overflows to
  inf, then NaN probabilities); past 100 sampling is noise. NaN and inf are refused everywhere.
- `--top-p` and `--gpu-memory-utilization` are shares in (0, 1], vLLM's ranges.
- `--threads` is from 1 to this machine's CPU count (torch takes up to 2**31 - 1 threads, and
  more threads than cores only slow a run down).
- `plan --tokens-per-second` is positive and `reproduce`'s tolerances at least 0, both finite.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any

from hteb_contract.errors import HtebError

INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Bounds:
    """The values a numeric option may take: from `low` to `high` (`low` itself excluded when
    `low_open`), integers only when `integer`, and `also` besides (temperature 0: greedy)."""

    low: float
    high: float
    integer: bool = True
    low_open: bool = False
    also: float | None = None

    def admits(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.integer and not isinstance(value, int):
            return False
        if isinstance(value, float) and not math.isfinite(value):
            return False
        if self.also is not None and value == self.also:
            return True
        above = self.low < value if self.low_open else self.low <= value
        return above and value <= self.high

    def describe(self) -> str:
        low, high = (f"{v:g}" if isinstance(v, float) else str(v) for v in (self.low, self.high))
        if self.integer:
            return f"an integer from {low} to {high}"
        if math.isinf(self.high):
            return f"a finite number {'above' if self.low_open else 'of at least'} {low}"
        if self.low_open:
            return f"in ({low}, {high}]"
        also = f"{self.also:g} or " if self.also is not None else ""
        return f"{also}a number from {low} to {high}"


SEED = Bounds(0, INT64_MAX)
COUNT = Bounds(1, INT64_MAX)
TEMPERATURE = Bounds(0.01, 100.0, integer=False, also=0.0)
SHARE = Bounds(0.0, 1.0, integer=False, low_open=True)
POSITIVE = Bounds(0.0, math.inf, integer=False, low_open=True)  # `plan --tokens-per-second`
TOLERANCE = Bounds(0.0, math.inf, integer=False)  # `reproduce`: a NaN tolerance would make every number differ

#: GenerateConfig field -> (the option as the command line spells it, its range); None = not set.
CONFIG_BOUNDS: dict[str, tuple[str, Bounds]] = {
    "temperature": ("--temperature", TEMPERATURE),
    "retry_temperature": ("--retry-temperature", TEMPERATURE),
    "top_p": ("--top-p", SHARE),
    "max_tokens": ("--max-tokens", COUNT),
    "max_tokens_ceiling": ("--max-tokens-ceiling", COUNT),
    "max_attempts": ("--max-attempts", COUNT),
    "batch_size": ("--batch-size", COUNT),
    "sample": ("--sample", COUNT),
    "max_texts": ("--max-texts", COUNT),
    "max_list": ("--max-list", COUNT),
    "ray_workers": ("--ray-workers", COUNT),
}

#: Engine option -> (option, range).
ENGINE_BOUNDS: dict[str, tuple[str, Bounds]] = {
    "tensor_parallel_size": ("--tensor-parallel-size", COUNT),
    "gpu_memory_utilization": ("--gpu-memory-utilization", SHARE),
    "max_model_len": ("--max-model-len", COUNT),
    "threads": ("--threads", Bounds(1, os.cpu_count() or 1)),
}


def check_number(option: str, value: Any, bounds: Bounds) -> None:
    """A one-line HtebError naming `option` unless `bounds` admits `value`."""
    if not bounds.admits(value):
        raise HtebError(f"{option} must be {bounds.describe()}, got {value!r}")


def check_seeds(seeds: tuple[int, ...]) -> None:
    """Each seed in SEED's range (see the module docstring for why)."""
    for seed in seeds:
        check_number("--seed", seed, SEED)
