"""The facts of each GPU node of a Ray cluster, for the doctor under --ray-address: the engines run
there, not on the driver's machine, so each node's GPUs, driver, torch, vLLM and Hugging Face cache
are read on the node itself, by a Ray task pinned to it (NodeAffinitySchedulingStrategy, not soft:
it runs there or fails), with the environment the engine workers get there (`ray_engine.worker_env`: the
Hugging Face cache it reads is the one they will fill). A node without a GPU resource (a CPU head node)
holds no engine worker of the gpu profile and is only counted.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hteb_contract.common.ray_cluster import connect
from hteb_contract.errors import HtebError

from hteb_generate.engine.ray_engine import worker_env
from hteb_generate.setup.machine import Facts, probe

PROBE_TIMEOUT_S = 120.0  # a node's probe reads nvidia-smi, package metadata and its cache folder: seconds


def node_name(node: Mapping[str, Any]) -> str:
    """A node as its messages name it: its address and the start of its Ray node id (two nodes may share a host)."""
    return f"{node.get('NodeManagerAddress', '?')} ({str(node.get('NodeID', ''))[:8]})"


def gpu_nodes(nodes: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], int]:
    """The alive nodes with a GPU resource, and how many alive nodes have none."""
    alive = [n for n in nodes if n.get("Alive", True)]
    with_gpus = [n for n in alive if n.get("Resources", {}).get("GPU", 0) > 0]
    return with_gpus, len(alive) - len(with_gpus)


def gather(ray: Any, read: Callable[[], Facts] = probe) -> tuple[dict[str, Facts], int]:
    """Each GPU node's facts as `read` gives them on that node (a test hands in its own), by name, and
    the count of nodes without a GPU; a node that cannot be probed is one line naming it."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    nodes, others = gpu_nodes(ray.nodes())
    task = ray.remote(num_cpus=0, max_retries=0, runtime_env={"env_vars": worker_env(os.environ)})(read)
    refs = [
        task.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote()
        for n in nodes
    ]
    found: dict[str, Facts] = {}
    for node, ref in zip(nodes, refs):
        try:
            found[node_name(node)] = ray.get(ref, timeout=PROBE_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise HtebError(
                f"the doctor's probe did not finish on Ray node {node_name(node)} within {PROBE_TIMEOUT_S:.0f} s"
            ) from None
        except ray.exceptions.RayError as err:
            first = (str(err).strip().splitlines() or [type(err).__name__])[-1]
            raise HtebError(f"the doctor's probe failed on Ray node {node_name(node)}: {first}") from None
    return found, others


def cluster_facts(address: str, read: Callable[[], Facts] = probe) -> tuple[dict[str, Facts], int]:
    """`gather` on the cluster at `address`, joined as the Ray engine joins it (it stays joined for the run)."""
    return gather(connect(address, num_cpus=None, extra="hteb-generate[ray]"), read)
