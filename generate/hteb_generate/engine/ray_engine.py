"""Engine calls spread over a Ray cluster: one engine per worker, the chunks of a stage side by side.

Why at the engine-call level: the pipeline, the seeds and the call cache stay exactly those of a
single-process run. The call cache (`CachedEngine`, on the driver) cuts a stage's uncached
requests into the same chunks either way, and a worker answers a whole chunk with the same engine
code as one process would, so every answer and the revision's content hash are those of a
single-process run wherever answers do not depend on the batch (the transformers engine, vLLM with
batch invariance). Only the driver writes the cache, each chunk once it is back, so
nothing assumes a filesystem shared by several writers, and a killed driver loses only the chunks
in flight. A worker that dies is restarted by Ray (its constructor loads the model again) and its
chunk is retried, MAX_RESTARTS times at most: a worker that dies the same way every time (the
kernel's OOM killer, a crash in a CUDA kernel) ends the run in one line instead of reloading the
model forever. A worker whose engine fails to start (out of memory, a dtype the GPU lacks) is not
restarted by Ray, and its own error ends the run in one line, with the cause its engine printed:
vLLM's model worker runs in a child process that logs its real error ("Free memory on device ...")
and the parent raises only a pointer to it ("WorkerProc initialization failed ... See stack trace for
root cause.", v1/executor/multiproc_executor.py), while Ray
keeps a worker's output in its log files (`log_to_driver=False`), so the worker captures what its
engine prints while it starts and hands the last error line back. An engine that dies mid-run raises a
pointer too ("EngineCore encountered an issue. See stack trace (above) ..."): the worker reads the last
error line its log gained during the call, and the driver's one line names it with the log's path and node.

Scheduling: the workers must each fit on one node (an actor's GPUs are one node's), so the count
is checked against every node's resources before any starts. Their resources are then reserved
together in a placement group before any engine loads: resources held by other work end the run
after PLACE_TIMEOUT_S in one line naming them (not after the engines' START_TIMEOUT_S), and a worker
Ray restarts goes back into its own bundle, so it never waits for room another job took meanwhile.

Environment: workers of a cluster made by `ray start` run with that command's environment, not
the driver's, so the variables the engines read (`VLLM_*`, the Hugging Face ones) go to every
worker explicitly (`runtime_env={"env_vars": ...}`), VLLM_BATCH_INVARIANT always (0 when unset),
and each worker's own view of them is checked against the driver's, which the manifest records.
Two kinds stay behind: a `VLLM_*` variable that names a place on the driver's node (an address, a
port, a rank, a path: VLLM_HOST_IP on another node breaks its engine), and the Hugging Face token,
since Ray keeps a runtime_env in its control store and shows it on its dashboard. A worker finds its
own token (its node's environment or `hf auth login` there; a local cluster's workers inherit the
driver's), and only whether it has one comes back to the driver.

Chunks stream in lanes: of a stage's chunks, worker w of W gets every W-th from the w-th on (its lane) in one
call, which feeds them to its engine as one stream (`Engine.chat_results_many`: vLLM's runs each chunk beside
the tail of the one before, engine/vllm_engine.py) and hands back each chunk as soon as it is done (a Ray
generator), so the driver's cache commits it then and a worker's stage ends on one tail, not one per chunk.
Why fixed lanes rather than the next chunk to whichever worker is free: a stream batches its chunks
together, so vLLM's answers depend on which chunks share a stream; fixed by index, they are the same in every
uninterrupted run with the same workers. Chunks are cut in sha256 order, so lanes of as many chunks hold about
as much work. A worker that dies is restarted by Ray and given the chunks of its lane it had not handed back,
as a new stream (at most MAX_RESTARTS times), as is a lane whose answers were lost with their node: those
chunks are then batched as in a resumed run, and only they are answered again.

Ray Data's LLM processor was the other way: it would own batching, retries and output order, and
the cache and the transformers engine (the CPU path the tests run) would live outside it.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hteb_contract.common.escape import visible
from hteb_contract.errors import HtebError
from hteb_contract.common.ray_cluster import connect

from hteb_generate.engine.base import ChatRequest, ChatResult, Conversation, Engine

RESOURCE_NAMES = {"num_cpus": "CPU", "num_gpus": "GPU"}  # actor option -> cluster resource
#: Read by vLLM or huggingface_hub in a worker, and passed to it when the driver has them.
HF_NAMES = ("HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "HF_ENDPOINT")
#: Never passed nor sent back: a worker's own token is used, and the driver learns only whether it has one.
SECRETS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN")
#: A VLLM_* variable naming a place on the driver's node (vllm/envs.py: VLLM_HOST_IP, VLLM_PORT, VLLM_DP_RANK,
#: VLLM_DP_MASTER_IP, VLLM_NIXL_SIDE_CHANNEL_HOST, VLLM_CACHE_ROOT, VLLM_NCCL_SO_PATH, VLLM_GPU_NIC_PCIE_MAPPING...):
#: another node has its own.
NODE_LOCAL = re.compile(r"(_IPS?|_PORT|_HOST|_PATH|_ROOT)$|_RANK|_MASTER_|_NIC_")
#: Passed even when the driver lacks them, with this value: what the manifest records must hold on every node.
ALWAYS = {"VLLM_BATCH_INVARIANT": "0"}
CLOSE_TIMEOUT_S = 120  # a worker's engine shutdown; a worker still busy after it is killed all the same
#: a killed worker is restarted and given the rest of its lane again this many times, then the run ends
MAX_RESTARTS = 3
#: How long the workers' resources may take to be free for them (other work holding them).
PLACE_TIMEOUT_S = float(os.environ.get("HTEB_RAY_PLACE_TIMEOUT_S", 600))
#: How long the placed workers may take to load their engines (a 27B model loads in minutes).
START_TIMEOUT_S = float(os.environ.get("HTEB_RAY_START_TIMEOUT_S", 3600))
#: How much of a worker's log an engine call's failure reads for its root cause (the end of what it printed).
LOG_TAIL_BYTES = 1 << 20
#: A Python error's last line, as a child process's traceback or a logger prints it.
ERROR_LINE = re.compile(r"\b([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


def worker_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables every worker gets: the driver's VLLM_* ones but those of its own node, its Hugging Face
    ones but the token, and ALWAYS's."""
    passed = {k: v for k, v in environ.items() if (k.startswith("VLLM_") and not NODE_LOCAL.search(k)) or k in HF_NAMES}
    return {**ALWAYS, **passed}


def has_token() -> bool:
    """Whether this process finds a Hugging Face token (HF_TOKEN, the older name, or a saved login)."""
    from huggingface_hub import get_token

    return get_token() is not None


class EngineWorker:
    """A Ray actor holding one engine; `factory` loads it (on the worker's own node)."""

    def __init__(self, factory: Callable[[], Engine]) -> None:
        with tempfile.TemporaryFile("w+b") as printed:
            try:
                with _captured(printed):
                    self.engine = factory()
            except Exception as err:
                printed.seek(0)
                cause = last_error(printed.read().decode("utf-8", "replace"))
                first = (str(err).strip().splitlines() or [""])[0]
                if cause and cause not in first:
                    raise HtebError(f"{type(err).__name__}: {first} (its engine printed: {cause})") from None
                raise

    def environment(self, names: Sequence[str]) -> tuple[dict[str, str | None], bool, str]:
        """This worker's own values of `names`, whether it finds a Hugging Face token (never the token), its node."""
        import socket

        return {name: os.environ.get(name) for name in names}, has_token(), socket.gethostname()

    def close(self) -> None:
        self.engine.close()

    def facts(self) -> list[dict[str, Any]]:
        return self.engine.facts()

    def chat_results_lane(
        self, indices: Sequence[int], chunks: Sequence[Sequence[ChatRequest]]
    ) -> Iterator[tuple[int, list[ChatResult]]]:
        """A lane of chunks (the stage's chunks `indices`) as one stream, each chunk yielded once done."""
        yield from self._stream(self.engine.chat_results_many, indices, chunks)

    def next_token_logprobs_lane(
        self, indices: Sequence[int], chunks: Sequence[Sequence[Conversation]], candidates: Sequence[str]
    ) -> Iterator[tuple[int, list[dict[str, float]]]]:
        yield from self._stream(self.engine.next_token_logprobs_many, indices, chunks, candidates)

    @staticmethod
    def _stream(method: Callable[..., Iterator[tuple[int, Any]]], indices: Sequence[int], *args: Any) -> Any:
        """`method`'s stream, each chunk under its number in the stage, until the driver cancels the call (it stopped
        reading: closing the stream aborts what the engine had not finished).

        A failure reaches the driver on one line with its root cause: vLLM's engine raises only a pointer to it
        ("EngineCore encountered an issue. See stack trace (above) for the root cause.", v1/engine/exceptions.py
        `EngineDeadError`) while its model worker, a child process, printed the real error into this worker's
        log, which Ray keeps on the worker's node. So the error carries the last error line printed into that
        log since the call began, and the log's path and node. An HtebError is the engine's own one-line
        refusal and passes as it is."""
        import ray

        log = worker_log()
        start = log.stat().st_size if log is not None else 0
        stream = method(*args)
        try:
            for position, found in stream:
                yield indices[position], found
                if ray.get_runtime_context().is_canceled():
                    return
        except HtebError:
            raise
        except Exception as err:
            raise HtebError(engine_failure(err, log, start)) from None
        finally:
            if isinstance(stream, Generator):
                stream.close()


def worker_log() -> Path | None:
    """The file this process's standard error goes to: a Ray worker's log file under its session's `logs`
    (Ray writes a worker's output to files there; `log_to_driver=False` keeps it there), which the engine's
    child processes inherit. None where standard error is no regular file (a terminal, a pipe)."""
    try:
        target = Path(os.readlink("/proc/self/fd/2"))
    except OSError:
        return None
    return target if target.is_absolute() and target.is_file() else None


def engine_failure(err: BaseException, log: Path | None, start: int) -> str:
    """One line for an engine call that failed: the error's own first line, the last error line printed into
    `log` from byte `start` on where it says more, and where the whole log is (path and node)."""
    import socket

    first = (str(err).strip().splitlines() or [""])[0]
    line = f"{type(err).__name__}: {first}"
    if log is None:
        return visible(line)
    with open(log, "rb") as file:
        file.seek(start)
        printed = file.read()[-LOG_TAIL_BYTES:].decode("utf-8", "replace")
    cause = last_error(printed)
    if cause and cause not in first:
        line += f" (its engine printed: {cause})"
    return visible(f"{line}; the whole log: {log} on node {socket.gethostname()}")


@contextlib.contextmanager
def _captured(into: Any) -> Iterator[None]:
    """File descriptors 1 and 2 written to `into` as well as kept: what child processes print too."""
    sys.stdout.flush(), sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    try:
        os.dup2(into.fileno(), 1), os.dup2(into.fileno(), 2)
        yield
    finally:
        sys.stdout.flush(), sys.stderr.flush()
        os.dup2(saved[0], 1), os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)
        into.seek(0)
        os.write(2, into.read())  # the worker's own log keeps all of it


def last_error(printed: str) -> str | None:
    """The last "SomeError: message" line of what an engine printed (while it started, or during a call)."""
    found = [
        m.group(1).rsplit(".", 1)[-1] + ": " + m.group(2).strip()
        for line in printed.splitlines()
        if (m := ERROR_LINE.search(line))
    ]
    return found[-1] if found else None


def node_room(nodes: Sequence[Mapping[str, Any]], resources: Mapping[str, float]) -> int:
    """How many workers of `resources` the alive nodes hold, each worker on one node."""
    room = 0
    for node in nodes:
        if not node.get("Alive", True):
            continue
        held = node.get("Resources", {})
        room += min((int(held.get(RESOURCE_NAMES[k], 0) // v) for k, v in resources.items() if v), default=0)
    return room


class RayEngine(Engine):
    """`workers` actors (None: as many as the cluster's resources hold), each taking `resources`
    (e.g. {"num_gpus": 1}) and loading its engine with `factory` on its own node."""

    def __init__(
        self,
        factory: Callable[[], Engine],
        *,
        model_id: str,
        revision: str,
        address: str,
        workers: int | None,
        resources: dict[str, float],
    ) -> None:
        local_cpus = int(workers * resources.get("num_cpus", 0)) if workers else None
        ray = connect(address, num_cpus=local_cpus or None, extra="hteb-generate[ray]")
        wanted = {RESOURCE_NAMES[k]: v for k, v in resources.items() if v}
        room = node_room(ray.nodes(), resources) if wanted else (workers or 1)
        if room < (workers or 1):
            nodes = "; ".join(
                f"{n.get('NodeManagerAddress')}: { ({k: n.get('Resources', {}).get(k, 0) for k in wanted}) }"
                for n in ray.nodes()
                if n.get("Alive", True)
            )
            raise HtebError(
                f"the Ray cluster at {address!r} has room on its nodes for {room} engine worker(s) of "
                f"{wanted} each, not {workers or 1} (each worker's resources must be on one node; "
                f"nodes: {nodes})"
            )
        workers = workers or room
        self.model_id, self.revision, self._ray = model_id, revision, ray
        self.env = worker_env(os.environ)
        self._wanted = wanted
        self._group = self._placed(workers) if wanted else None
        actor = ray.remote(
            max_restarts=MAX_RESTARTS, max_task_retries=MAX_RESTARTS, runtime_env={"env_vars": self.env}, **resources
        )(EngineWorker)
        self.workers = [actor.options(**self._bundle(i)).remote(factory) for i in range(workers)]
        try:
            seen = self._get(
                [worker.environment.remote(list(self.env)) for worker in self.workers], timeout=START_TIMEOUT_S
            )
        except BaseException:
            self.close()
            raise
        token = has_token()
        for values, holds_token, node in seen:  # Ray applies runtime_env itself; the manifest's runtime relies on it
            if values != self.env:
                differ = sorted(k for k in self.env if values.get(k) != self.env[k])
                self.close()
                raise HtebError(f"a Ray worker does not see the driver's {', '.join(differ)}")
            if token and not holds_token:
                self.close()
                raise HtebError(
                    f"the Ray worker on {visible(node)} finds no Hugging Face token, and the driver's is never sent (Ray "
                    "would keep it in its control store): set HF_TOKEN where that node's `ray start` runs, or "
                    "run `hf auth login` there"
                )

    def _placed(self, workers: int) -> Any:
        """A placement group of one bundle of the workers' resources each, once the cluster has them free."""
        from ray.util.placement_group import placement_group, remove_placement_group

        group = placement_group([dict(self._wanted) for _ in range(workers)], strategy="PACK")
        try:
            self._ray.get(group.ready(), timeout=PLACE_TIMEOUT_S)
        except self._ray.exceptions.GetTimeoutError:
            remove_placement_group(group)
            raise HtebError(
                f"{workers} Ray engine worker(s) of {self._wanted} each could not be placed within "
                f"{PLACE_TIMEOUT_S:.0f} s: the cluster's nodes have room for them, but other work holds it "
                "(HTEB_RAY_PLACE_TIMEOUT_S sets the limit)"
            ) from None
        return group

    def _bundle(self, index: int) -> dict[str, Any]:
        """The actor options that put worker `index` (and its restarts) in its own bundle of the group."""
        if self._group is None:
            return {}
        from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

        return {
            "scheduling_strategy": PlacementGroupSchedulingStrategy(
                placement_group=self._group, placement_group_bundle_index=index
            )
        }

    def _get(self, refs: list[Any], timeout: float | None = None) -> list[Any]:
        with self._errors():
            try:
                return self._ray.get(refs, timeout=timeout)
            except self._ray.exceptions.GetTimeoutError:
                raise HtebError(
                    f"{len(refs)} Ray engine worker(s) of {self._wanted} each did not load their engines within "
                    f"{timeout:.0f} s of being placed (HTEB_RAY_START_TIMEOUT_S sets the limit)"
                ) from None

    @contextlib.contextmanager
    def _errors(self) -> Iterator[None]:
        """A worker's failure as its own error on one line: an engine call's error as itself, a worker
        that died (its engine's constructor raised, or its process was killed) as an HtebError."""
        exceptions = self._ray.exceptions
        try:
            yield
        except exceptions.RayTaskError as err:  # the engine itself failed: its own error, once
            if isinstance(err.cause, HtebError):  # one line already (the worker's refusal): without Ray's traceback
                raise err.cause from None
            raise err.as_instanceof_cause() from None
        except exceptions.OutOfMemoryError as err:
            raise HtebError(
                f"Ray's memory monitor killed an engine worker, its node running out of host memory: "
                f"{died_because(err)}; use fewer workers per node or more host memory"
            ) from None
        except exceptions.RayActorError as err:
            raise HtebError(f"a Ray engine worker died: {died_because(err)}") from None
        except exceptions.ObjectLostError as err:
            raise HtebError(
                f"a Ray engine worker's answers were lost (its node left the cluster): {died_because(err)}"
            ) from None

    def _many(self, method: str, chunks: Sequence[Any], *extra: Any) -> Iterator[tuple[int, Any]]:
        """Each of `chunks` answered through the workers' lanes (`method`, a lane's stream), yielded as (index,
        answers) as it comes back; a worker that died gets the rest of its lane once Ray has restarted it."""
        count = len(self.workers)
        lanes = {w: list(range(w, len(chunks), count)) for w in range(min(count, len(chunks)))}
        answered: set[int] = set()
        restarts = dict.fromkeys(lanes, 0)
        streams: dict[Any, int] = {}  # a lane's Ray generator -> its worker

        def submit(w: int) -> None:
            rest = [i for i in lanes[w] if i not in answered]
            call = getattr(self.workers[w], method).options(max_task_retries=0)  # Ray would replay the whole lane
            streams[call.remote(rest, [chunks[i] for i in rest], *extra)] = w

        with self._errors():
            for w in lanes:
                submit(w)
            try:
                while streams:
                    (stream,), _ = self._ray.wait(list(streams), num_returns=1)
                    w = streams[stream]
                    try:
                        index, found = self._ray.get(next(stream))
                    except StopIteration:
                        del streams[stream]
                        left = [i for i in lanes[w] if i not in answered]
                        if left:  # an engine's stream that ends early would leave its stage short
                            raise HtebError(
                                f"a Ray engine worker's stream ended without {len(left)} of its chunks"
                            ) from None
                        continue
                    except (self._ray.exceptions.RayActorError, self._ray.exceptions.ObjectLostError):
                        del streams[stream]
                        if restarts[w] == MAX_RESTARTS:
                            raise
                        restarts[w] += 1
                        submit(w)
                        continue
                    answered.add(index)
                    yield index, found
            finally:
                for stream in streams:  # the caller stopped reading: the workers stop feeding their engines
                    self._ray.cancel(stream)

    def chat_results_many(self, chunks: Sequence[Sequence[ChatRequest]]) -> Iterator[tuple[int, list[ChatResult]]]:
        return self._many("chat_results_lane", chunks)

    def next_token_logprobs_many(
        self, chunks: Sequence[Sequence[Conversation]], candidates: Sequence[str]
    ) -> Iterator[tuple[int, list[dict[str, float]]]]:
        return self._many("next_token_logprobs_lane", chunks, candidates)

    def chat_results(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        return next(self.chat_results_many([requests]))[1]

    def next_token_logprobs(
        self, conversations: Sequence[Conversation], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        return next(self.next_token_logprobs_many([conversations], candidates))[1]

    def facts(self) -> list[dict[str, Any]]:
        """Each live worker's engine's facts, in the workers' order (a dead worker's went with it: what the others
        found is still recorded, and closing goes on)."""
        found: list[dict[str, Any]] = []
        for worker in self.workers:
            try:
                found += self._ray.get(worker.facts.remote(), timeout=CLOSE_TIMEOUT_S)
            except self._ray.exceptions.RayError:
                continue
        return found

    def close(self) -> None:
        """Close each worker's engine, then stop the workers (the cluster itself stays up for whoever
        started it). Why close first: `ray.kill` ends the actor's process at once, and vLLM's engine
        core runs in a child process of its own, which then may live on holding GPU memory."""
        if self.workers:
            try:
                self._ray.get([worker.close.remote() for worker in self.workers], timeout=CLOSE_TIMEOUT_S)
            except self._ray.exceptions.RayError:  # a dead or hung worker: killed below all the same
                pass
            for worker in self.workers:
                self._ray.kill(worker)
            self.workers = []
        if self._group is not None:
            from ray.util.placement_group import remove_placement_group

            remove_placement_group(self._group)
            self._group = None


def died_because(err: Any) -> str:
    """The last line of a Ray actor's death message: for an engine whose constructor raised, its own
    error ("HtebError: ..."), since ActorDiedError keeps only the text of the creation task's
    RayTaskError, traceback first (ray/exceptions.py, ActorDiedError.__init__); otherwise Ray's reason."""
    lines = [line.strip() for line in str(getattr(err, "error_msg", "") or err).splitlines() if line.strip()]
    return lines[-1] if lines else type(err).__name__
