"""The Ray engine on a real local Ray cluster (2 workers, SmolLM2 through the transformers engine):
every answer equals the single-process engine's, chunk by chunk; a whole run gives the single-process
run's content hash when a worker is killed mid-stage, and when the driver is killed halfway and rerun (the
rerun a plain run over two workers: a third run with nothing killed would add two minutes and no check)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from hteb_generate.engine import CachedEngine, CallCache, ChatRequest, create_engine
from hteb_generate.run.pipeline import run
from ray_cluster import descendants
from tiny_runs import cached_calls, fresh_cache, run_args, run_config, wait_for_calls

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray-clusters")]

TEXTS = [
    "A man is playing a guitar.",
    "What is the capital of France?",
    "Name a colour.",
    "The cat sat on the mat.",
    "How do I reset my card PIN?",
    "Rain is expected tomorrow.",
    "She reads a book in the park.",
    "Where is the nearest station?",
]


def _requests() -> list[ChatRequest]:
    return [
        ChatRequest((("system", "Rephrase the text."), ("user", t)), 0.0 if i % 2 else 0.8, 0.9, 10, 1339 + i)
        for i, t in enumerate(TEXTS)
    ]


@pytest.fixture(scope="module")
def ray_engine(smollm2_dir):
    from hteb_generate.engine.ray_engine import RayEngine

    factory = partial(
        create_engine,
        "transformers",
        model_path=str(smollm2_dir),
        model_id="smollm2-test",
        revision="test",
        batch_size=4,
        threads=1,
    )
    engine = RayEngine(
        factory, model_id="smollm2-test", revision="test", address="local", workers=2, resources={"num_cpus": 1}
    )
    yield engine
    engine.close()
    ray.shutdown()


def test_chunks_answered_by_two_workers_equal_the_single_process_engine(tmp_path, smollm2_engine, ray_engine):
    single = CachedEngine(
        smollm2_engine,
        CallCache(tmp_path / "one.sqlite"),
        model_id="m",
        revision="r",
        name="transformers",
        commit_every=3,
    )
    spread = CachedEngine(
        ray_engine, CallCache(tmp_path / "ray.sqlite"), model_id="m", revision="r", name="transformers", commit_every=3
    )
    reported: list[int] = []
    spread.on_progress = reported.append
    assert spread.chat_results(_requests()) == single.chat_results(_requests())
    assert sum(reported) == len(TEXTS) and spread.calls == len(TEXTS)
    conversations = [r.messages for r in _requests()]
    assert spread.next_token_logprobs(conversations, ["The", "A"]) == single.next_token_logprobs(
        conversations, ["The", "A"]
    )


def test_an_engine_error_in_a_worker_is_raised_as_itself(ray_engine):
    from hteb_contract.errors import HtebError

    with pytest.raises(HtebError):
        ray_engine.next_token_logprobs([_requests()[0].messages], [""])  # a candidate without tokens


def test_a_worker_whose_engine_cannot_start_ends_in_one_line_with_its_own_error(tmp_path):
    """An engine's constructor that raises (vLLM: out of memory, too little free memory, a dtype the
    GPU lacks) kills the worker: the driver gets ActorDiedError, not RayTaskError, and says the engine's
    own error on one line, at once (no restart loop), leaving no worker behind."""
    from hteb_contract.errors import HtebError
    from hteb_generate.engine.ray_engine import RayEngine

    was_up, before = ray.is_initialized(), set(_engine_workers(os.getpid()))  # the module's other engine's
    missing = tmp_path / "no-model"
    factory = partial(create_engine, "transformers", model_path=str(missing), model_id="m", revision="r", threads=1)
    try:
        with pytest.raises(HtebError) as refused:
            RayEngine(factory, model_id="m", revision="r", address="local", workers=2, resources={"num_cpus": 0})
        deadline = time.monotonic() + 30
        while set(_engine_workers(os.getpid())) - before and time.monotonic() < deadline:
            time.sleep(0.5)
        alive = set(_engine_workers(os.getpid())) - before
    finally:
        if not was_up:
            ray.shutdown()
    assert str(refused.value) == (
        "a Ray engine worker died: hteb_contract.errors.HtebError: transformers engine needs "
        f"a local model folder; {missing} is not one"
    )
    assert alive == set()


def _refused(factory, **options) -> str:
    """The one-line error a RayEngine of `factory` ends with on this module's local cluster."""
    from hteb_contract.errors import HtebError
    from hteb_generate.engine.ray_engine import RayEngine

    options = {"workers": 1, "resources": {"num_cpus": 0}, **options}
    with pytest.raises(HtebError) as refused:
        RayEngine(factory, model_id="m", revision="r", address="local", **options)
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_a_worker_that_dies_the_same_way_every_time_ends_the_run_in_one_line(ray_engine):
    """A process killed while its engine loads (the OOM killer, a crash in a kernel) is restarted by Ray
    a bounded number of times, then the run ends; unbounded, this test never returns."""
    from hteb_generate.engine.ray_engine import MAX_RESTARTS

    started = time.monotonic()
    message = _refused(partial(os._exit, 1))
    assert message.startswith("a Ray engine worker died: ") and time.monotonic() - started < 120
    assert MAX_RESTARTS >= 1  # a worker killed once is still restarted (the mid-stage kill test)


def test_an_engine_start_up_failure_arrives_with_what_its_child_process_printed(ray_engine):
    """vLLM's engine core logs its real error in a child process and the parent raises only "Engine core
    initialization failed. See root cause above."; the driver's line carries the child's error."""
    child = (
        "import sys; print('ERROR [core.py:1] EngineCore failed to start.', file=sys.stderr); "
        "print('Value' + 'Error: Free memory on device cuda:0 (10.0/79.2 GiB) on startup is less than desired GPU "
        "memory utilization (0.9, 71.3 GiB).'); sys.exit(1)"
    )
    message = _refused(partial(subprocess.run, [sys.executable, "-c", child], check=True))
    assert "CalledProcessError" in message
    assert message.endswith(
        "(its engine printed: ValueError: Free memory on device cuda:0 (10.0/79.2 GiB) on startup "
        "is less than desired GPU memory utilization (0.9, 71.3 GiB).)"
    )


ROOT_CAUSE = "RuntimeError: CUDA error: an illegal memory access was encountered"


def test_an_engine_that_dies_mid_run_reaches_the_driver_with_its_root_cause_and_its_log(ray_engine):
    """vLLM's engine dying mid-run raises only a pointer ("See stack trace (above)") while the root cause is in
    the worker's log on its node: the driver's one line carries the cause printed during that call (not an
    earlier one) and the log's path and node."""
    from hteb_contract.errors import HtebError
    from hteb_generate.engine.ray_engine import RayEngine

    def _dying_engine():
        """An engine that dies in its second call as vLLM's does: its model worker, a child process, prints the root
        cause into the worker's log and the engine raises only a pointer to it (v1/engine/exceptions.py)."""
        from hteb_generate.engine.base import ChatResult, Engine

        class Dying(Engine):
            calls = 0
            model_id = revision = "dying"

            def next_token_logprobs(self, conversations, candidates):
                raise NotImplementedError

            def chat_results(self, requests):
                Dying.calls += 1
                if Dying.calls == 1:
                    child = "import sys; print('earlier: ValueError: a warning already handled', file=sys.stderr)"
                else:
                    child = (
                        "import sys; print('ERROR [multiproc_executor.py:1] WorkerProc hit an exception.', "
                        f"file=sys.stderr); print({ROOT_CAUSE!r}, file=sys.stderr)"
                    )
                subprocess.run([sys.executable, "-c", child], check=True)
                if Dying.calls == 1:
                    return [ChatResult("ok", "stop") for _ in requests]
                raise RuntimeError("EngineCore encountered an issue. See stack trace (above) for the root cause.")

            def close(self):
                pass

        return Dying()

    engine = RayEngine(_dying_engine, model_id="m", revision="r", address="local", workers=1, resources={"num_cpus": 0})
    try:
        assert [r.text for r in engine.chat_results(_requests()[:2])] == ["ok", "ok"]
        with pytest.raises(HtebError) as died:
            engine.chat_results(_requests()[:2])
    finally:
        engine.close()
    line = str(died.value)
    assert "\n" not in line and line.startswith(
        "RuntimeError: EngineCore encountered an issue. See stack trace (above) for the root cause. "
        f"(its engine printed: {ROOT_CAUSE}); the whole log: "
    )
    log = Path(line.split("; the whole log: ")[1].rsplit(" on node ", 1)[0])
    assert log.is_file() and ROOT_CAUSE in log.read_text(encoding="utf-8", errors="replace")
    assert line.endswith(f" on node {os.uname().nodename}")


def _lanes(folder: Path, texts: list[str], paced: bool = True):
    """A RayEngine of two `_lane_engine` workers, and the chunks of one request each with `texts`."""
    from hteb_generate.engine.ray_engine import RayEngine

    def _lane_engine(folder: Path, paced: bool):
        """An engine that answers each request with its own text and its process, and writes into `folder` what it
        is asked (one line per call: the first text of each chunk it gets), what it hands back, and when a stream
        of it is closed. It dies (its process killed) the first time it reaches a chunk whose first text is
        "die", and ends its stream at a chunk whose first text is "stop". `paced`: it waits before each chunk
        after its first for the driver to have read the chunk before it ("read-TEXT"), so a driver that waited
        for a whole lane would never let it go on; else it takes a tenth of a second per chunk."""
        import time as clock

        from hteb_generate.engine.base import ChatResult, Engine

        class Lane(Engine):
            model_id = revision = "lane"

            def chat_results(self, requests):
                return dict(self.chat_results_many([requests]))[0]

            def next_token_logprobs(self, conversations, candidates):
                raise NotImplementedError

            def chat_results_many(self, chunks):
                firsts = [chunk[0].messages[-1][1] for chunk in chunks]
                with open(folder / "calls", "a") as calls:
                    calls.write(" ".join(firsts) + "\n")
                try:
                    for position, chunk in enumerate(chunks):
                        if not paced:
                            clock.sleep(0.1)
                        elif position:
                            deadline = clock.monotonic() + 60
                            while not (folder / f"read-{firsts[position - 1]}").exists():
                                if clock.monotonic() > deadline:
                                    raise RuntimeError("the driver did not read a chunk before its lane ended")
                                clock.sleep(0.05)
                        if firsts[position] == "stop":  # a stream that ends before its chunks do
                            return
                        if firsts[position] == "die" and not (folder / "died").exists():
                            (folder / "died").touch()
                            os._exit(1)
                        with open(folder / "answered", "a") as answered:
                            answered.write(firsts[position] + "\n")
                        yield position, [ChatResult(f"{r.messages[-1][1]}@{os.getpid()}", "stop") for r in chunk]
                finally:
                    with open(folder / "closed", "a") as closed:
                        closed.write(f"{os.getpid()}\n")

        return Lane()

    engine = RayEngine(
        partial(_lane_engine, folder, paced),
        model_id="m",
        revision="r",
        address="local",
        workers=2,
        resources={"num_cpus": 0},
    )
    chunks = [[ChatRequest((("user", text),), 0.0, 1.0, 4, 1)] for text in texts]
    return engine, chunks


def _read(folder: Path, stream) -> list[tuple[int, str]]:
    got = []
    for index, results in stream:
        (text,) = [r.text for r in results]
        (folder / f"read-{text.split('@')[0]}").touch()
        got.append((index, text))
    return got


def _answered(folder: Path, texts: list[str]) -> list[tuple[int, str]]:
    """Every chunk of `texts` answered by `_lanes`' engine, as (index, its answer): each answer its own."""
    engine, chunks = _lanes(folder, texts)
    try:
        got = _read(folder, engine.chat_results_many(chunks))
    finally:
        engine.close()
    assert sorted(index for index, _ in got) == list(range(len(texts)))
    assert all(text.split("@")[0] == texts[index] for index, text in got)
    return got


def test_each_worker_streams_its_lane_of_chunks_and_each_chunk_comes_back_when_done(ray_engine, tmp_path):
    """Worker w of 2 gets chunks w, w + 2, ... in one call and hands each back before answering the next (its
    engine waits for the driver to have read it): no chunk waits for its lane, and every answer is its own."""
    by_worker = {}
    for index, text in _answered(tmp_path, [f"t{i}" for i in range(7)]):
        by_worker.setdefault(text.split("@")[1], []).append(index)
    assert sorted(by_worker.values()) == [[0, 2, 4, 6], [1, 3, 5]]  # fixed lanes, each in its order
    assert sorted((tmp_path / "calls").read_text().splitlines()) == ["t0 t2 t4 t6", "t1 t3 t5"]


def test_a_worker_killed_mid_lane_is_given_only_the_rest_of_its_lane(ray_engine, tmp_path):
    texts = ["t0", "t1", "t2", "t3", "die", "t5", "t6", "t7"]
    _answered(tmp_path, texts)
    # the restarted worker is given its lane from the chunk it died in
    assert sorted((tmp_path / "calls").read_text().splitlines()) == ["die t6", "t0 t2 die t6", "t1 t3 t5 t7"]
    answered = (tmp_path / "answered").read_text().splitlines()
    assert sorted(answered) == sorted(texts)  # no chunk answered twice


def test_a_lane_whose_stream_ends_short_ends_the_stage_in_one_line(ray_engine, tmp_path):
    from hteb_contract.errors import HtebError

    engine, chunks = _lanes(tmp_path, ["t0", "t1", "stop", "t3", "t4"])
    try:
        with pytest.raises(HtebError, match=r"^a Ray engine worker's stream ended without 2 of its chunks$"):
            _read(tmp_path, engine.chat_results_many(chunks))
    finally:
        engine.close()


def test_a_caller_that_stops_reading_stops_the_workers_streams(ray_engine, tmp_path):
    """The pipeline stops reading on an error of its own: each worker's stream is cancelled and closed (vLLM's
    aborts the requests it had not finished), not left answering the rest of its lane."""
    engine, chunks = _lanes(tmp_path, [f"t{i}" for i in range(100)], paced=False)  # 5 s a lane
    try:
        stream = engine.chat_results_many(chunks)
        index, results = next(stream)
        stream.close()
        deadline = time.monotonic() + 60
        while len((tmp_path / "closed").read_text().splitlines() if (tmp_path / "closed").exists() else []) < 2:
            assert time.monotonic() < deadline, "a worker's stream was not closed"
            time.sleep(0.1)
        answered = (tmp_path / "answered").read_text().splitlines()
    finally:
        engine.close()
    assert len(answered) < 20  # each lane stopped within a few chunks of the cancel, not at its end


def test_workers_no_node_can_hold_are_refused_at_once_naming_the_resources(ray_engine):
    message = _refused(partial(os._exit, 1), resources={"num_gpus": 1})
    assert message.startswith(
        "the Ray cluster at 'local' has room on its nodes for 0 engine worker(s) of "
        "{'GPU': 1} each, not 1 (each worker's resources must be on one node; nodes: "
    )
    assert message.endswith(": {'GPU': 0})")


def test_workers_that_cannot_be_placed_now_time_out_in_one_line(ray_engine, monkeypatch):
    """The module's two workers hold the local cluster's two CPUs: a third that needs one waits."""
    from hteb_generate.engine import ray_engine as module

    monkeypatch.setattr(module, "PLACE_TIMEOUT_S", 3)
    started = time.monotonic()
    message = _refused(partial(os._exit, 1), resources={"num_cpus": 1})
    assert message.startswith("1 Ray engine worker(s) of {'CPU': 1} each could not be placed within 3 s")
    assert time.monotonic() - started < 60  # the placement's limit, not the engines' load limit (START_TIMEOUT_S)
    held = [g for g in ray.util.placement_group_table().values() if g["state"] != "REMOVED"]
    assert len(held) == 1  # the module's engine's: the refused workers' group is given back


def test_the_last_error_line_of_what_an_engine_printed():
    from hteb_generate.engine.ray_engine import last_error

    printed = (
        "INFO loading\nTraceback (most recent call last):\n  File x\ntorch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 2.00 GiB\n(EngineCore pid=7) ERROR done\n"
    )
    assert last_error(printed) == "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert last_error("all fine\n") is None


# -- the whole run on a local Ray cluster (a subprocess each: its own cluster, its own driver) -------------


def _engine_workers(driver: int) -> list[int]:
    workers = []
    for pid in descendants([driver]) - {driver}:
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if title.startswith(b"ray::EngineWorker"):
            workers.append(pid)
    return workers


def _command(cache: Path, store: Path, data: Path) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from hteb_generate.cli import main; main()",
        *run_args(cache, store, data, "--ray-address", "local", "--ray-workers", "2", "--threads", "1"),
    ]


def _hash_of(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(done.stdout.splitlines()) == 1, done.stdout  # "LABEL HASH" alone: Ray writes nothing there
    return done.stdout.split()[1]


@pytest.fixture(scope="module")
def single_process(tmp_path_factory, smollm2_dir, shared_data):
    """The tiny run in one process: the content hash every Ray run must give."""
    tmp = tmp_path_factory.mktemp("single")
    return run(run_config(fresh_cache(tmp, smollm2_dir), tmp / "store", shared_data), log=lambda m: None)


ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def test_a_worker_killed_mid_stage_is_restarted_and_the_run_ends_with_the_same_revision(
    single_process, tmp_path, smollm2_dir, shared_data
):
    cache = fresh_cache(tmp_path, smollm2_dir)
    process = subprocess.Popen(
        _command(cache, tmp_path / "store", shared_data),
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for_calls(cache / "calls.sqlite", process, 4)
    workers = _engine_workers(process.pid)
    assert process.poll() is None and len(workers) == 2, "the run ended before a worker could be killed"
    os.kill(workers[0], signal.SIGKILL)
    out, err = process.communicate(timeout=900)
    assert (
        _hash_of(subprocess.CompletedProcess(process.args, process.returncode, out, err))
        == (single_process.manifest["content_hash"])
    )
    assert workers[0] not in _engine_workers(process.pid)
    # every call answered once: the killed worker's unfinished chunks again, nothing else
    assert cached_calls(cache / "calls.sqlite") == single_process.manifest["counters"]["llm_calls"]


def test_a_killed_driver_rerun_gives_the_same_revision_without_repeating_a_call(
    single_process, tmp_path, smollm2_dir, shared_data
):
    cache, store = fresh_cache(tmp_path, smollm2_dir), tmp_path / "store"
    process = subprocess.Popen(
        _command(cache, store, shared_data), env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    # killed halfway, so the rerun (a plain run over two workers from a cache half full) makes the other half
    wait_for_calls(cache / "calls.sqlite", process, single_process.manifest["counters"]["llm_calls"] // 2)
    assert process.poll() is None, "the run finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    kept = cached_calls(cache / "calls.sqlite")
    done = subprocess.run(_command(cache, store, shared_data), env=ENV, capture_output=True, text=True, timeout=900)
    assert _hash_of(done) == single_process.manifest["content_hash"]
    manifest = json.loads(next((store / "objects").iterdir()).joinpath("manifest.json").read_text())
    assert 0 < kept and manifest["counters"]["llm_calls"] == single_process.manifest["counters"]["llm_calls"] - kept
