"""The environment an engine worker sees on a Ray cluster started as a user starts one (`ray start
--head` in its own process, then the driver joins it by address): Ray starts such a cluster's workers
with `ray start`'s environment, not the driver's, so what the engines read (VLLM_BATCH_INVARIANT, the
Hugging Face variables) must reach them through the engine itself. One cluster, SmolLM2 on one worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

import ray_cluster

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow

DRIVER_ONLY = {"VLLM_BATCH_INVARIANT": "1", "HF_HUB_OFFLINE": "1", "VLLM_USE_TRITON_AWQ": "1"}


@pytest.fixture
def started_cluster():
    """`ray start --head` as a user runs it, in an environment without DRIVER_ONLY; its address."""
    env = {k: v for k, v in os.environ.items() if k not in DRIVER_ONLY}
    try:
        with ray_cluster.started_cluster(env, num_cpus=1) as cluster:
            yield cluster.address
    finally:
        if ray.is_initialized():
            ray.shutdown()


DRIVER = textwrap.dedent(
    """
    import json, sys
    from functools import partial

    import ray
    from hteb_generate.engine import ChatRequest, create_engine
    from hteb_generate.engine.ray_engine import RayEngine

    import os
    from hteb_contract.errors import HtebError

    address, model, names = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
    factory = partial(create_engine, "transformers", model_path=model, model_id="smollm2-test", revision="test",
                      batch_size=2, threads=1)
    options = dict(model_id="smollm2-test", revision="test", address=address, workers=1, resources={"num_cpus": 1})
    os.environ["HF_TOKEN"] = os.environ.pop("DRIVER_TOKEN")  # the driver's own: the cluster's workers have none
    try:
        RayEngine(factory, **options)
        refused = None
    except HtebError as err:
        refused = str(err)
    del os.environ["HF_TOKEN"]
    engine = RayEngine(factory, **options)
    try:
        seen, token, node = ray.get(engine.workers[0].environment.remote(names))
        reply = engine.chat([ChatRequest((("user", "Name a colour."),), 0.0, 1.0, 4, 1)])
    finally:
        engine.close()
    print("RESULT " + json.dumps({"seen": seen, "token": token, "passed": engine.env, "reply": reply,
                                  "left": len(engine.workers), "refused": refused}))
    """
)
#: The driver's Hugging Face token: it must never leave the driver (no runtime_env, no answer, no message).
TOKEN = "hf_NeverSentToAWorker"
#: Names a place on the driver's node: another node's engine must not get it.
NODE_LOCAL = {"VLLM_HOST_IP": "10.9.9.9", "VLLM_PORT": "51999", "VLLM_CACHE_ROOT": "/driver/only"}


def test_a_worker_on_a_started_cluster_sees_the_drivers_engine_environment(started_cluster, smollm2_dir):
    """The driver as a user runs it: its own process, the variables set before it starts, and
    RAY_AUTH_MODE=token, which Ray wants for a named address of a cluster made by `ray start`."""
    env = {**os.environ, **DRIVER_ONLY, **NODE_LOCAL, "RAY_AUTH_MODE": "token", "DRIVER_TOKEN": TOKEN}
    done = subprocess.run(
        [sys.executable, "-c", DRIVER, started_cluster, str(smollm2_dir), ",".join([*DRIVER_ONLY, *NODE_LOCAL])],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    result = json.loads(lines[-1][len("RESULT ") :])
    # the driver's node's places stay behind: a worker sees its own node's (the cluster's environment)
    assert result["seen"] == {**DRIVER_ONLY, **{name: os.environ.get(name) for name in NODE_LOCAL}}
    assert result["passed"]["VLLM_BATCH_INVARIANT"] == "1" and not set(NODE_LOCAL) & set(result["passed"])
    assert len(result["reply"]) == 1 and result["reply"][0] and result["left"] == 0
    # with a token of its own, the driver refuses workers that find none, in one line that never holds the token
    assert result["refused"].startswith("the Ray worker on ") and "finds no Hugging Face token" in result["refused"]
    assert "\n" not in result["refused"] and TOKEN not in done.stdout + done.stderr
    assert result["token"] is False
