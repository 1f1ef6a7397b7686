"""The committed comparison under docs/findings is what `hteb-score compare` writes today from the
committed cards beside it: valid against the comparison schema, every figure the same."""

from __future__ import annotations

import json
from pathlib import Path

from hteb_contract.validation import validate
from hteb_score.cli import main

FINDINGS = Path(__file__).resolve().parents[3] / "docs" / "findings" / "noise-1339"


def test_the_committed_comparison_is_what_compare_writes_from_the_committed_cards(tmp_path, monkeypatch):
    committed = json.loads((FINDINGS / "comparison.json").read_text())
    validate("comparison", committed, what="docs/findings/noise-1339/comparison.json")
    monkeypatch.chdir(FINDINGS.parents[2])  # the inputs' paths as the committed file names them
    cards = [str((FINDINGS / m / "result_card.json").relative_to(FINDINGS.parents[2]))
             for m in ("all-MiniLM-L6-v2", "all-mpnet-base-v2")]
    assert main(["compare", *cards, "--out", str(tmp_path / "cmp")]) == 0
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text()) == committed
    assert (tmp_path / "cmp" / "comparison.md").read_text() == (FINDINGS / "comparison.md").read_text()
