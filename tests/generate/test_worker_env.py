"""What a Ray engine worker is given of the driver's environment (engine/ray_engine.py `worker_env`): the variables
its engine reads, never the Hugging Face token (Ray keeps a runtime_env in its control store and shows it on its
dashboard) and never a VLLM_* variable naming a place on the driver's node. The started-cluster test
(test_ray_cluster.py) checks what a real worker then sees."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from hteb_generate.engine.ray_engine import ALWAYS, HF_NAMES, SECRETS, worker_env

#: vLLM 0.32.0's variables (vllm/envs.py) that name an address, port, rank, rendezvous or path of one node
NODE_LOCAL = (
    "VLLM_HOST_IP",
    "VLLM_PORT",
    "VLLM_LOOPBACK_IP",
    "VLLM_DP_MASTER_IP",
    "VLLM_DP_MASTER_PORT",
    "VLLM_DP_RANK",
    "VLLM_DP_RANK_LOCAL",
    "VLLM_RPC_BASE_PATH",
    "VLLM_NIXL_SIDE_CHANNEL_HOST",
    "VLLM_NIXL_SIDE_CHANNEL_PORT",
    "VLLM_RAY_DP_PLACEMENT_NODE_IPS",
    "VLLM_CACHE_ROOT",
    "VLLM_CONFIG_ROOT",
    "VLLM_NCCL_SO_PATH",
    "VLLM_GPU_NIC_PCIE_MAPPING",
)
#: ...and some that change what an engine computes, the same on every node
PASSED = ("VLLM_BATCH_INVARIANT", "VLLM_USE_TRITON_AWQ", "VLLM_ATTENTION_BACKEND", "VLLM_TPU_USING_PATHWAYS")

names = st.sampled_from((*NODE_LOCAL, *PASSED, *HF_NAMES, *SECRETS, "PATH", "HOME", "CUDA_VISIBLE_DEVICES"))


@given(st.dictionaries(names, st.text(st.characters(codec="utf-8", exclude_characters="\0"), max_size=8)))
def test_a_worker_gets_what_its_engine_reads_and_nothing_of_the_drivers_node_or_secrets(environ):
    given_env = worker_env(environ)
    assert not set(given_env) & {*SECRETS, *NODE_LOCAL, "PATH", "HOME", "CUDA_VISIBLE_DEVICES"}
    expected = {k: v for k, v in environ.items() if k in PASSED or k in HF_NAMES}
    assert given_env == {**ALWAYS, **expected}
    assert all(re.fullmatch(r"VLLM_\w+|HF_\w+", k) for k in given_env)
