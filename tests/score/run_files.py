"""What a scoring run wrote, comparable between two runs: every file but what is by nature one
process's own (PER_RUN)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

#: What one process states of itself, never equal between two runs:
#: - result_card.json `created`: when that card was written;
#: - result_card.json `timings`: seconds each process spent, and the counts of its own embedding table
#:   (a text two units share is embedded by each: a merge's `unique_texts` sums the units');
#: - result_card.md's last line, which prints those timings.
PER_RUN = ("created", "timings")
TIMINGS_LINE = "Embedded "


def outputs(folder: Path) -> dict[str, Any]:
    """Every file a run wrote (relative path -> parsed JSON or text), without PER_RUN."""
    found: dict[str, Any] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if path.suffix == ".parquet":
            found[name] = pq.read_table(path).to_pylist()
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".json":
            found[name] = json.loads(text)
            if name == "result_card.json":
                assert set(PER_RUN) <= set(found[name])
                for key in PER_RUN:
                    found[name].pop(key)
        else:
            lines = text.splitlines()
            assert lines[-1].startswith(TIMINGS_LINE)
            found[name] = lines[:-1]
    return found
