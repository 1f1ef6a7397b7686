"""Fixtures of the evaluator tests."""

from __future__ import annotations

import pytest
from evaluator_embeddings import MiniLM


@pytest.fixture(scope="session")
def minilm() -> MiniLM:
    """The real all-MiniLM-L6-v2, loaded once per test session."""
    return MiniLM()
