"""Shared test fixtures: where the real data lives, and small revisions built from it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HTEB_DATA_DIR", REPO.parent / "shared" / "data"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real datasets in the shared/data layout (see its SOURCES.md)."""
    if not (SHARED_DATA / "STSBenchmark" / "dataset.json").is_file():
        pytest.fail(f"real test data not found at {SHARED_DATA} (set HTEB_DATA_DIR)")
    return SHARED_DATA
