"""Each source dataset's BibTeX, for the Citation section of a revision's dataset card.

The entries are mteb's (`TaskMetadata.bibtex_citation` of each registry dataset's mteb task, mteb
2.26.24), copied into citations.json and held to the installed mteb by a test; a dataset mteb gives
no BibTeX, and a folder no registry entry names, has none.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

CITATIONS = Path(__file__).with_name("citations.json")


@cache
def _citations() -> dict[str, str | None]:
    return json.loads(CITATIONS.read_text(encoding="utf-8"))


def source_citation(name: str) -> str | None:
    """The BibTeX of a source dataset by its registry name; None where none is recorded."""
    return _citations().get(name)
