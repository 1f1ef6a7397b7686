"""Small copies of real source folders from shared/data, for tests that corrupt one row or text."""

from __future__ import annotations

import shutil
from pathlib import Path


def copy_source(shared_data: Path, name: str, target: Path, rows: int = 3) -> Path:
    """A small copy of a real dataset folder: dataset.json and the first `rows` rows of each table."""
    folder = target / name
    folder.mkdir(parents=True)
    shutil.copy(shared_data / name / "dataset.json", folder / "dataset.json")
    for path in (shared_data / name).glob("*.jsonl"):
        with open(path, encoding="utf-8") as handle:
            (folder / path.name).write_text("".join(next(handle) for _ in range(rows)), encoding="utf-8")
    return folder
