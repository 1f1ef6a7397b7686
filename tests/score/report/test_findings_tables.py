"""The findings tables of docs/findings.md are written from the committed cards (issue 23 item 5):
the committed file equals what `hteb-score tables` writes, and a hand-edited number fails the check."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from hteb_score.report.findings import update_tables

ROOT = Path(__file__).resolve().parents[3]
FINDINGS = ROOT / "docs" / "findings.md"


def test_the_committed_tables_are_what_their_cards_give():
    text = FINDINGS.read_text(encoding="utf-8")
    assert text.count("<!-- hteb:table ") == 4  # the six datasets' two tables and the whole revision's two
    assert update_tables(text, FINDINGS.parent) == text, "run `make tables` (hteb-score tables)"


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "docs" / "findings", tmp_path / "findings")
    path = tmp_path / "findings.md"
    path.write_text(FINDINGS.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def test_a_number_typed_by_hand_fails_the_check_and_is_rewritten(copy, run_cli):
    text = copy.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| all-mpnet-base-v2 |"))
    edited = row.replace(row.split(" | ")[1], "99.99", 1)
    copy.write_text(text.replace(row, edited), encoding="utf-8")
    code, _, err = run_cli("tables", copy, "--check")
    assert code == 1 and "tables differ from their cards" in err and str(copy) in err
    assert run_cli("tables", copy)[0] == 0
    assert copy.read_text(encoding="utf-8") == text


def test_refused_a_file_without_tables_or_cards(tmp_path, run_cli):
    plain = tmp_path / "plain.md"
    plain.write_text("# nothing generated here\n")
    code, _, err = run_cli("tables", plain)
    assert code == 2 and "no generated table in it" in err and err.count("\n") == 1
    plain.write_text("<!-- hteb:table noise-models nowhere -->\n| x |\n<!-- /hteb:table -->\n")
    code, _, err = run_cli("tables", plain)
    assert code == 2 and "no result cards" in err
