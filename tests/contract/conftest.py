"""Fixtures shared by the contract tests that corrupt a real revision."""

from __future__ import annotations

from pathlib import Path

import pytest

from revision_factory import build_revision


@pytest.fixture(scope="module")
def bad_revision(tmp_path_factory, shared_data) -> Path:
    """A sealed revision labelled `bad` (STS and pair classification, 4 rows each): the bad-object and
    bad-revision tests copy it, then break the copy."""
    root = tmp_path_factory.mktemp("bad") / "rev"
    build_revision(root, shared_data, ["STSBenchmark", "TwitterSemEval2015"], label="bad", rows=4)
    return root
