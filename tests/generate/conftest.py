"""Fixtures of the generator tests: the real SmolLM2 model folder (converted once, cached)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

MODEL_CACHE = Path(os.environ.get("HTEB_CACHE_DIR") or Path.home() / ".cache" / "hteb")


@pytest.fixture(scope="session")
def smollm2_dir() -> Path:
    """The PyPI SmolLM2 GGUF as an HF folder (what both transformers and vLLM load)."""
    pytest.importorskip("torch")
    from hteb_generate.engine.models import convert_smollm2

    return convert_smollm2(MODEL_CACHE)


@pytest.fixture(scope="session")
def smollm2_engine(smollm2_dir: Path):
    from hteb_generate.engine import create_engine

    return create_engine(
        "transformers", model_path=str(smollm2_dir), model_id="smollm2-test", revision="test", batch_size=8
    )
