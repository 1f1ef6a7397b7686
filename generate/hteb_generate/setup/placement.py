"""Where a run's engines go: by default one per GPU (per tensor-parallel group) of this machine.

Why by default: the gpu profile on an 8-GPU host with one engine leaves seven GPUs idle and turns
25-45 GPU-hours into as many wall-clock hours. Several engines on this machine are a local Ray
cluster the run starts (ray_engine.py: one engine per worker, a stage's chunks side by side, the
answers a single process gives); a host with one GPU (or one tensor-parallel group) keeps the
engine in this process. The user stays in charge: `--ray-address none` runs one engine here,
`--ray-workers N` starts N, and a named cluster (`--ray-address local|auto|ADDRESS`) holds as many
as its resources do (or `--ray-workers`). The doctor's summary says which, from this same function.
"""

from __future__ import annotations

from dataclasses import dataclass

from hteb_contract.common.ray_cluster import LOCAL

from hteb_generate.setup.config import NO_RAY, GenerateConfig
from hteb_generate.setup.machine import Facts


@dataclass(frozen=True)
class Placement:
    """The engines of each stage: on which Ray cluster (None: one, in this process), how many and how wide."""

    address: str | None
    workers: int | None  # engines on the cluster (None: as many as its resources hold)
    gpus_per_engine: int  # --tensor-parallel-size
    per_gpu: bool = False  # chosen from this machine's GPUs, not named by the user

    def describe(self) -> str:
        """The summary's words: "8 engines, one per GPU (GPUs 0-7), on a local Ray cluster ..."."""
        width = self.gpus_per_engine
        if self.address is None:
            return "1 engine in this process" + (f" (tensor parallel over {width} GPUs)" if width > 1 else "")
        if not self.per_gpu:
            count = f"{self.workers} engine(s)" if self.workers else "as many engines as its nodes hold"
            return f"{count} on the Ray cluster at {self.address}"
        each = "one per GPU" if width == 1 else f"one per {width} GPUs"
        used = self.workers * width if self.workers else 0
        return (
            f"{self.workers} engines, {each} (GPUs 0-{used - 1}), on a local Ray cluster this run starts "
            f"(--ray-address {NO_RAY}: one engine in this process)"
        )


def placement(cfg: GenerateConfig, facts: Facts) -> Placement:
    """Where `cfg`'s engines run on the machine of `facts` (see the module's docstring)."""
    width = int(cfg.engine_options.get("tensor_parallel_size") or 1)
    if not cfg.engine_per_gpu:
        address = None if cfg.ray_address == NO_RAY else cfg.ray_address
        return Placement(address, cfg.ray_workers if address else None, width)
    engines = cfg.ray_workers or len(facts.gpus) // width
    if engines <= 1:
        return Placement(None, None, width)
    return Placement(LOCAL, engines, width, per_gpu=True)


def placement_problem(cfg: GenerateConfig, facts: Facts) -> str | None:
    """Why the engines per GPU cannot start here: more asked for than the GPUs hold, or no Ray."""
    where = placement(cfg, facts)
    if not where.per_gpu or not where.workers:
        return None
    need = where.workers * where.gpus_per_engine
    if need > len(facts.gpus):
        return (
            f"--ray-workers {where.workers} needs {need} GPUs ({where.gpus_per_engine} per engine), this machine "
            f"has {len(facts.gpus)}"
        )
    if facts.ray is None:
        return (
            f"{len(facts.gpus)} GPUs take {where.workers} engines on a local Ray cluster, and Ray is not installed: "
            f"pip install 'hteb-generate[ray]' (make generate installs it), or --ray-address {NO_RAY} for one engine"
        )
    return None
