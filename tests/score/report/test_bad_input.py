"""Bad input: one line on stderr, non-zero exit; mixed revisions only with --force, and said so."""

from __future__ import annotations

import json

from cards import make_card, write_card


def assert_one_line_error(code: int, err: str, needle: str) -> None:
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hteb-score: error:") and needle in lines[0], err


def test_card_of_another_schema_version(card_files, tmp_path, run_cli):
    card = json.loads(card_files[0].read_text(encoding="utf-8"))
    card["schema_version"] = "hteb.card/2"
    bad = tmp_path / "v2.json"
    bad.write_text(json.dumps(card), encoding="utf-8")
    code, _, err = run_cli("compare", card_files[1], bad, "--out", tmp_path / "out")
    assert_one_line_error(code, err, "schema version 'hteb.card/2' is not supported")


def test_mixed_revisions_refused_unless_forced(card_files, tmp_path, run_cli):
    other = write_card(tmp_path, make_card("F2LLM-v2-4B", revision="sha256:" + "b" * 64))
    code, _, err = run_cli("compare", *card_files[:2], other, "--out", tmp_path / "refused")
    assert_one_line_error(code, err, "different dataset revisions")
    assert not (tmp_path / "refused" / "comparison.json").exists()

    code, _, err = run_cli("compare", *card_files[:2], other, "--out", tmp_path / "forced", "--force", "--splits", "5")
    assert code == 0 and "FORCED" in err
    result = json.loads((tmp_path / "forced" / "comparison.json").read_text(encoding="utf-8"))
    assert result["mixed_revisions"] is True and result["forced"] is True
    assert "FORCED" in (tmp_path / "forced" / "comparison.md").read_text(encoding="utf-8")


def test_table_with_missing_columns(tmp_path, run_cli):
    table = tmp_path / "t.csv"
    table.write_text("model,dataset,hteb\nm1,STS,50\n", encoding="utf-8")
    code, _, err = run_cli("compare", "--scores-table", table, "--out", tmp_path / "out")
    assert_one_line_error(code, err, "missing column(s) original")


def test_table_without_any_hteb_score(tmp_path, run_cli):
    table = tmp_path / "t.json"
    table.write_text(json.dumps([{"model": "m1", "dataset": "STS", "original": 50}]), encoding="utf-8")
    code, _, err = run_cli("compare", "--scores-table", table, "--out", tmp_path / "out")
    assert_one_line_error(code, err, "no HTEB score column")


def test_non_numeric_score_and_unknown_format(tmp_path, run_cli):
    table = tmp_path / "t.csv"
    table.write_text("model,dataset,original,hteb\nm1,STS,fifty,40\n", encoding="utf-8")
    code, _, err = run_cli("compare", "--scores-table", table, "--out", tmp_path / "out")
    assert_one_line_error(code, err, "'original' is not a number")
    code, _, err = run_cli("compare", "--scores-table", tmp_path / "t.xlsx", "--out", tmp_path / "out")
    assert_one_line_error(code, err, "unknown table format")


def test_same_model_twice(card_files, tmp_path, run_cli):
    code, _, err = run_cli("compare", card_files[0], card_files[0], "--out", tmp_path / "out")
    assert_one_line_error(code, err, "appears twice")


def test_nothing_to_compare(tmp_path, run_cli):
    code, _, err = run_cli("compare", "--out", tmp_path / "out")
    assert_one_line_error(code, err, "nothing to compare")
