"""Work units spread over a Ray cluster (`hteb-score MODEL... --ray-address local|auto|ADDRESS`): one
actor per worker, each holding one model at a time and scoring whole units with the same
`UnitScorer` as a run in one process, so every part, and every card merged from them, is that of
the sequential run. The only module of the scorer that imports Ray (the `ray` extra).

Units go out ordered by model, so a worker keeps its model for unit after unit and loads the next
only when the previous model's units are all taken. Each part comes back to the driver, which keeps
it in the run folder (scoring/run_folder.py) as it arrives: nothing assumes a filesystem the nodes
share, and a killed driver loses only the units in flight; the same command resumes from the parts
kept. A worker that dies mid-unit is restarted by Ray (its model loaded again) and the unit retried,
MAX_RESTARTS times at most (as the generator's engine workers): a unit that kills its worker the same
way every time (the kernel's OOM killer, a crash in a native library) ends the run in one line
instead of reloading the model forever.

Sizing: a worker takes `threads` CPUs (torch runs that many threads), and one GPU when the model
runs on CUDA (`--device cuda`; Ray gives each worker its own). Without `workers`, as many as the
cluster's resources hold, never more than there are units.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.common.ray_cluster import connect, session
from hteb_score.scoring.parts import ScorePart
from hteb_score.scoring.unit_scorer import Done, UnitScorer, WorkUnit

#: Read by huggingface_hub, torch or hteb-score in a worker: passed from the driver when it has them. Never the
#: Hugging Face token: Ray keeps a runtime_env in its control store and shows it on its dashboard; a worker that
#: loads a gated model uses its own node's (HF_TOKEN where `ray start` runs, or `hf auth login` there).
PASSED = (
    "HF_HOME",
    "HF_HUB_CACHE",
    "HF_HUB_OFFLINE",
    "HF_ENDPOINT",
    "HTEB_CACHE_DIR",
    "HTEB_MODEL_CACHE",
)
#: The thread pools a worker's libraries start (OpenMP, BLAS, the tokenizers' Rust pool): its threads each.
THREAD_POOLS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAYON_NUM_THREADS")
MAX_RESTARTS = 3  # a killed worker is restarted and its unit retried this many times, then the run ends


class UnitWorker:
    """A Ray actor: one model at a time (the last unit's), kept for the next unit of the same model."""

    def __init__(self, threads: int) -> None:
        import torch

        torch.set_num_threads(threads)
        self.model: str | None = None
        self.scorer: UnitScorer | None = None

    def score(self, index: int, unit: WorkUnit) -> tuple[int, ScorePart]:
        if unit.model != self.model or self.scorer is None:  # the previous model goes; the next loads in score
            self.scorer, self.model = UnitScorer(unit.options), unit.model
        return index, self.scorer.score(unit.options.part)


@dataclass
class RayCluster:
    """Where and how wide: the cluster's `address`, `workers` (None: what its resources hold), the
    CPU `threads` of each and the `device` its model runs on (cuda: a GPU of its own; auto and cpu:
    none, so the model runs on CPU). Joined for the `with` block, left after it (a cluster it
    started here stops); it is a `ray_cluster.session`, so stdout goes to stderr until then."""

    address: str
    workers: int | None = None
    threads: int = 1
    device: str = "cpu"
    ray: Any = field(default=None, init=False, repr=False)
    joined: contextlib.ExitStack = field(default_factory=contextlib.ExitStack, init=False, repr=False)

    def __post_init__(self) -> None:
        if "," in self.device or self.device.startswith("cuda:"):
            raise HtebError(f"--device {self.device}: Ray gives each worker its own GPU; pass --device cuda (or cpu)")

    @property
    def packages(self) -> None:
        """The package versions its units are scored under: unknown here, each node has its own (merge compares
        them)."""
        return None

    def __enter__(self) -> RayCluster:
        with contextlib.ExitStack() as joining:
            joining.enter_context(session())
            self.ray = connect(
                self.address, num_cpus=self.workers * self.threads if self.workers else None, extra="hteb-score[ray]"
            )
            self.joined = joining.pop_all()  # an unreachable cluster ends the session at once
        return self

    def __exit__(self, *exc: object) -> None:
        self.joined.close()

    def resources(self) -> dict[str, float]:
        """What one worker takes: its threads, and a GPU when the model runs on CUDA."""
        return {"num_cpus": self.threads, **({"num_gpus": 1} if self.device == "cuda" else {})}

    def run(self, units: Sequence[WorkUnit], done: Done) -> None:
        """Score `units` on the cluster, calling `done` in this process as each part comes back."""
        self._run(self.ray, units, done, self.resources())

    def _run(self, ray: Any, units: Sequence[WorkUnit], done: Done, need: dict[str, float]) -> None:
        from ray.util import ActorPool

        workers = self.workers
        if workers is None:
            held = ray.cluster_resources()
            names = {"num_cpus": "CPU", "num_gpus": "GPU"}
            workers = min(int(held.get(names[k], 0) // v) for k, v in need.items() if v)
            if workers < 1:
                raise HtebError(
                    f"the Ray cluster at {self.address!r} has no room for one worker ({need}; it holds {held})"
                )
        env = {name: os.environ[name] for name in PASSED if name in os.environ}
        env.update(dict.fromkeys(THREAD_POOLS, str(self.threads)))
        actor = ray.remote(
            max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS, runtime_env={"env_vars": env}, **need
        )(UnitWorker)
        actors = [actor.remote(self.threads) for _ in range(min(workers, len(units)))]
        try:
            pool = ActorPool(actors)
            jobs = list(enumerate(units))
            with _errors(ray):
                for index, part in pool.map_unordered(lambda worker, job: worker.score.remote(*job), jobs):
                    done(units[index], part)
        finally:
            for worker in actors:
                ray.kill(worker)


@contextlib.contextmanager
def _errors(ray: Any) -> Iterator[None]:
    """A unit's own error (an HtebError: bad data, a model that does not load) as itself, once."""
    try:
        yield
    except ray.exceptions.RayTaskError as err:
        raise err.as_instanceof_cause() from None
    except ray.exceptions.RayActorError as err:
        raise HtebError(
            f"a Ray scoring worker died (a worker is restarted and its unit retried {MAX_RESTARTS} "
            f"times at most): {_died_because(err)}"
        ) from None


def _died_because(err: Any) -> str:
    """Why Ray says an actor died, on one line: the first line of its message (the later ones are ids,
    addresses and advice) and the first sentence of the worker's exit detail where Ray gives one."""
    text = str(err)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = lines[0] if lines else type(err).__name__
    detail = re.search(r"Worker exit detail: [^.]*", text)
    return f"{first} {detail.group(0)}" if detail else first
