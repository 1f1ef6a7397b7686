"""The examples in the packages' docstrings (`>>>`) are run: an example a reader copies says what the code does."""

from __future__ import annotations

import doctest
import importlib

import pytest
from test_import_graph import MODULES

WITH_EXAMPLES = sorted(name for name, path in MODULES.items() if ">>> " in path.read_text(encoding="utf-8"))


def test_the_packages_have_examples():
    assert "hteb_score.report.formatting" in WITH_EXAMPLES and len(WITH_EXAMPLES) >= 10


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_docstring_examples_run(name):
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS, report=False)
    assert result.attempted and not result.failed, f"{name}: {result.failed} of {result.attempted} examples fail"
