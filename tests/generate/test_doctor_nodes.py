"""The doctor under --ray-address: the host checks on each GPU node's own facts, each problem naming
its node, the run's own checks on the driver, and a CPU head node not refused; the facts gathered by a
Ray task pinned to each node, on a local multi-node Ray cluster fed the facts of GPU hosts."""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from hteb_contract.errors import HtebError
from hteb_generate.setup.doctor import diagnose_nodes, engine_host, require_ready_on_nodes
from hteb_generate.setup.gpu_host import Gpu
from hteb_generate.setup.machine import Facts
from test_doctor import COMMIT, GEMMA, H100, _facts, gpu_config  # noqa: F401  (the fixture)

CPU_HEAD = Facts(
    torch="2.13.0+cpu",
    hf_cache="/home/u/.cache/huggingface/hub",
    hf_cache_free_gib=20.0,
    gpu_note="nvidia-smi not found",
    python="3.12.3",
    pins=_facts().pins,  # the driver resolves the run's branches; its workers load those commits
)
A100_40 = Gpu("NVIDIA A100-SXM4-40GB", 39.4, "8.0", free_gib=39.0)
L4 = Gpu("NVIDIA L4", 22.5, "8.9", free_gib=22.0)


def test_a_cpu_head_node_is_not_refused_when_its_gpu_nodes_are_ready(gpu_config):
    summary = require_ready_on_nodes(
        gpu_config(ray_address="auto"), CPU_HEAD, {"10.0.0.2 (aaaa)": _facts(), "10.0.0.3 (bbbb)": _facts()}, others=1
    )
    assert "\n" not in summary
    assert summary.startswith(
        "Ray cluster: node 10.0.0.2 (aaaa): NVIDIA H100 80GB HBM3 (79.6 GiB); torch 2.13.0; "
        "vLLM 0.32.0 (vllm); HF cache 500 GiB free | node 10.0.0.3 (bbbb): "
    )
    assert "| 1 node(s) without a GPU (no engine runs there); gemma-3-27b-it-int4-awq as generator and judge" in summary
    assert f"as many engines as its nodes hold on the Ray cluster at auto; {GEMMA}@main is {COMMIT} (from the Hub)" in (
        summary
    )


def test_a_worker_node_with_another_driver_and_less_memory_is_named(gpu_config):
    nodes = {
        "10.0.0.2 (aaaa)": _facts(),
        "10.0.0.3 (bbbb)": _facts(gpus=(L4,), driver="570.124.06", hf_cache_free_gib=5.0),
    }
    with pytest.raises(HtebError) as refused:
        require_ready_on_nodes(gpu_config(), CPU_HEAD, nodes, others=1)
    message = str(refused.value)
    assert "\n" not in message and "10.0.0.2" not in message
    assert message.startswith("node 10.0.0.3 (bbbb): the NVIDIA driver 570.124.06 is too old for torch 2.13.0")
    assert "; node 10.0.0.3 (bbbb): not enough GPU memory: gemma-3-27b-it-int4-awq needs 25.7 GiB" in message
    assert "; node 10.0.0.3 (bbbb): not enough disk: downloading gemma-3-27b-it-int4-awq needs 17.8 GiB" in message


def test_the_run_checks_are_the_drivers_and_the_workers_get_its_environment(gpu_config):
    """The driver's VLLM_BATCH_INVARIANT is what every worker runs with (the Ray engine passes it), so a
    node is checked with it; publishing is the driver's, checked once, without a node's name."""
    driver = replace(CPU_HEAD, env={"VLLM_BATCH_INVARIANT": "1", "HTEB_HUB_REPO": "me/hteb"})
    nodes = {"n1": _facts(gpus=(Gpu("Tesla T4", 14.6, "7.5"),), env={})}
    problems = diagnose_nodes(gpu_config(publish=True), driver, nodes).problems
    assert any(p.startswith("node n1: ") and "VLLM_BATCH_INVARIANT=1" in p for p in problems)
    assert problems[-1].startswith("HTEB_HUB_REPO=me/hteb is set but HF_TOKEN is not")


def test_a_cluster_without_a_gpu_node_is_refused(gpu_config):
    with pytest.raises(HtebError, match=r"^no node of the Ray cluster has a GPU \(2 node\(s\) without\): "):
        require_ready_on_nodes(gpu_config(), CPU_HEAD, {}, others=2)


def test_the_engines_are_planned_on_the_gpu_nodes_with_the_drivers_environment():
    host = engine_host(
        replace(CPU_HEAD, env={"VLLM_BATCH_INVARIANT": "1"}), {"a": _facts(pins={}), "b": _facts(gpus=(A100_40,))}
    )
    assert host.gpus == (H100, A100_40) and host.torch_cuda == "13.0" and host.batch_invariant
    assert host.pins == CPU_HEAD.pins and host.pins  # the driver's, not a node's


# -- on a local Ray cluster of three nodes: a CPU head and two nodes with a GPU resource ---------------------


@pytest.mark.slow
def test_each_gpu_node_is_probed_on_itself_and_reported_by_name(gpu_config, monkeypatch, tmp_path):
    """...with the environment its engine workers get: the driver's HF_HOME, set after the nodes started."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    from hteb_generate.setup.node_facts import gather, node_name

    assert not ray.is_initialized()
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "num_gpus": 0})
    try:
        workers = [cluster.add_node(num_cpus=1, num_gpus=1) for _ in range(2)]
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, include_dashboard=False)
        ids = [w.node_id for w in workers]
        hosts = {ids[0]: _facts(), ids[1]: _facts(gpus=(A100_40,), driver="570.124.06")}

        home = str(tmp_path / "workers-hf-home")
        monkeypatch.setenv("HF_HOME", home)  # the nodes' own processes lack it

        def read() -> Facts:  # what probe() gives on the node this task runs on, in the task's environment
            return replace(hosts[ray.get_runtime_context().get_node_id()], hf_cache=os.environ.get("HF_HOME", ""))

        nodes, others = gather(ray, read)
        names = {node_name(n): n["NodeID"] for n in ray.nodes()}
    finally:
        ray.shutdown()
        cluster.shutdown()
    assert others == 1 and sorted(names[name] for name in nodes) == sorted(ids)
    assert {names[name]: facts for name, facts in nodes.items()} == {
        node: replace(facts, hf_cache=home) for node, facts in hosts.items()
    }
    slow = next(name for name in nodes if names[name] == ids[1])
    with pytest.raises(HtebError) as refused:
        require_ready_on_nodes(gpu_config(), CPU_HEAD, nodes, others)
    assert str(refused.value).startswith(f"node {slow}: the NVIDIA driver 570.124.06 is too old")


@pytest.mark.slow
def test_the_doctor_command_under_ray_address_checks_the_clusters_nodes_not_this_machine(tmp_path):
    """On this machine without a GPU, a local cluster has no GPU node: the refusal is the cluster's."""
    import shutil

    ray = pytest.importorskip("ray")
    from cli_run import generate

    if shutil.which("nvidia-smi") is not None:
        pytest.skip("this machine has a GPU: its local cluster has a GPU node")
    was_up = ray.is_initialized()
    try:
        done = generate(
            "doctor",
            "--ray-address",
            "local",
            "--cache-dir",
            str(tmp_path / "c"),
            "--store",
            str(tmp_path / "s"),
            cwd=tmp_path,
        )
    finally:
        if not was_up:
            ray.shutdown()
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (
        "error: no node of the Ray cluster has a GPU (1 node(s) without): the gpu profile's "
        "engines need one (--profile cpu runs on the CPU)\n"
    )
