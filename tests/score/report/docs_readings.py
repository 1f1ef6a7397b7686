"""The docs' readings (report/site/findings.py `update_tables`), shared by the tests of one worker: the tests
of the committed tables (findings.md's, comparing.md's power table) and of the committed comparisons carry
`DOCS` (one xdist group), so the held-out round's item-level bootstrap (minutes) runs once for them all. Folders are relative to the repository, as the
committed comparisons name their inputs: call these with the repository as the working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from hteb_score.report.compare.comparison import Comparison
from hteb_score.report.site.findings import Readings, comparison_of, update_tables

DOCS = pytest.mark.xdist_group("docs-readings")
READINGS: Readings = {}


def docs_tables(text: str) -> str:
    """`text` (a page of docs/) with its tables written anew, as `hteb-score tables` writes them."""
    return update_tables(text, Path("docs"), READINGS)


def docs_comparison(folder: str) -> Comparison:
    """The comparison of the cards in docs/`folder`, as the tables read it."""
    key = (comparison_of, (Path("docs") / folder,))
    if key not in READINGS:
        READINGS[key] = comparison_of(Path("docs") / folder)
    comparison: Comparison = READINGS[key]
    return comparison
