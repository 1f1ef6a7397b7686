"""hteb-generate: seeded LLM transformations of MTEB data into published HTEB revisions."""

import os
from importlib.metadata import PackageNotFoundError, version

#: torch.cuda.is_available() initialises the CUDA driver in this process (cuInit) unless this is set, and
#: torch.cuda.is_initialized() stays False after it, so vLLM then starts its engine core with `fork` and the
#: child fails with "CUDA error: initialization error". vLLM sets it at its own import; set here, it holds
#: for whatever asks before vLLM is imported (docs/gpu.md: CUDA before vLLM).
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

try:
    __version__ = version("hteb-generate")
except PackageNotFoundError:  # a source tree that was never installed
    __version__ = "0+unknown"
