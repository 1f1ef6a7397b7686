"""Engine calls spread over a Ray cluster: one engine per worker, the chunks of a stage side by side.

Why at the engine-call level: the pipeline, the seeds and the call cache stay exactly those of a
single-process run. The call cache (`CachedEngine`, on the driver) cuts a stage's uncached
requests into the same chunks either way, and a worker answers a whole chunk with the same engine
code as one process would, batches included, so every answer and the revision's content hash are
those of a single-process run. Only the driver writes the cache, each chunk once it is back, so
nothing assumes a filesystem shared by several writers, and a killed driver loses only the chunks
in flight. A worker that dies is restarted by Ray (its constructor loads the model again) and its
chunk is retried (`max_restarts=-1`, `max_task_retries=-1`).

Ray Data's LLM processor was the other way: it would own batching, retries and output order, and
the cache and the transformers engine (the CPU path the tests run) would live outside it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from hteb_contract.errors import HtebError

from .base import ChatRequest, ChatResult, Conversation, Engine

LOCAL = "local"  # start a Ray instance on this machine for this run
RESOURCE_NAMES = {"num_cpus": "CPU", "num_gpus": "GPU"}  # actor option -> cluster resource


class EngineWorker:
    """A Ray actor holding one engine; `factory` loads it (on the worker's own node)."""

    def __init__(self, factory: Callable[[], Engine]) -> None:
        self.engine = factory()

    def chat_results(self, index: int, requests: Sequence[ChatRequest]) -> tuple[int, list[ChatResult]]:
        return index, self.engine.chat_results(requests)

    def next_token_logprobs(self, index: int, conversations: Sequence[Conversation],
                            candidates: Sequence[str]) -> tuple[int, list[dict[str, float]]]:
        return index, self.engine.next_token_logprobs(conversations, candidates)


def connect(address: str, *, num_cpus: int | None = None) -> Any:
    """Join the cluster at `address` ("auto": the one `ray start` made here; LOCAL: a new one)."""
    try:
        import ray
    except ImportError:
        raise HtebError("--ray-address needs Ray: pip install 'hteb-generate[ray]'") from None
    if not ray.is_initialized():
        options = {"num_cpus": num_cpus} if address == LOCAL and num_cpus else {}
        try:
            ray.init(address=address, log_to_driver=False, **options)
        except (ConnectionError, RuntimeError, ValueError) as err:
            raise HtebError(f"cannot reach the Ray cluster at {address!r}: {err}") from None
    return ray


class _StdoutToStderr:
    """While any Ray engine is open, stdout goes to stderr: Ray's driver prints its raylet's error
    messages (a worker died, a task is retried) to stdout, which holds the CLI's result line."""

    open_engines = 0
    redirect: contextlib.redirect_stdout | None = None

    @classmethod
    def enter(cls) -> None:
        cls.open_engines += 1
        if cls.open_engines == 1:
            cls.redirect = contextlib.redirect_stdout(sys.stderr)
            cls.redirect.__enter__()

    @classmethod
    def leave(cls) -> None:
        cls.open_engines -= 1
        if cls.open_engines == 0 and cls.redirect is not None:
            cls.redirect.__exit__(None, None, None)
            cls.redirect = None


class RayEngine(Engine):
    """`workers` actors (None: as many as the cluster's resources hold), each taking `resources`
    (e.g. {"num_gpus": 1}) and loading its engine with `factory` on its own node."""

    def __init__(self, factory: Callable[[], Engine], *, model_id: str, revision: str, address: str,
                 workers: int | None, resources: dict[str, float]) -> None:
        local_cpus = int(workers * resources.get("num_cpus", 0)) if workers else None
        ray = connect(address, num_cpus=local_cpus or None)
        from ray.util import ActorPool

        if workers is None:
            held = ray.cluster_resources()
            workers = min(int(held.get(RESOURCE_NAMES[k], 0) // v) for k, v in resources.items() if v)
            if workers < 1:
                raise HtebError(f"the Ray cluster at {address!r} has no room for one engine ({resources}; it holds {held})")
        self.model_id, self.revision, self._ray = model_id, revision, ray
        actor = ray.remote(max_restarts=-1, max_task_retries=-1, **resources)(EngineWorker)
        self.workers = [actor.remote(factory) for _ in range(workers)]
        self._pool = ActorPool(self.workers)
        _StdoutToStderr.enter()

    def _many(self, submit: Callable[[Any, tuple[int, Any]], Any], chunks: Sequence[Any]) -> Iterator[tuple[int, Any]]:
        try:
            yield from self._pool.map_unordered(submit, list(enumerate(chunks)))
        except self._ray.exceptions.RayTaskError as err:  # the engine itself failed: its own error, once
            raise err.as_instanceof_cause() from None

    def chat_results_many(self, chunks: Sequence[Sequence[ChatRequest]]) -> Iterator[tuple[int, list[ChatResult]]]:
        return self._many(lambda worker, job: worker.chat_results.remote(*job), chunks)

    def next_token_logprobs_many(
        self, chunks: Sequence[Sequence[Conversation]], candidates: Sequence[str]
    ) -> Iterator[tuple[int, list[dict[str, float]]]]:
        return self._many(lambda worker, job: worker.next_token_logprobs.remote(*job, candidates), chunks)

    def chat_results(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        return next(self.chat_results_many([requests]))[1]

    def next_token_logprobs(self, conversations: Sequence[Conversation],
                            candidates: Sequence[str]) -> list[dict[str, float]]:
        return next(self.next_token_logprobs_many([conversations], candidates))[1]

    def close(self) -> None:
        """Stop the workers (the cluster itself stays up for whoever started it)."""
        if self.workers:
            for worker in self.workers:
                self._ray.kill(worker)
            self.workers = []
            _StdoutToStderr.leave()
