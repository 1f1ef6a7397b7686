"""Published numbers, end to end through `hteb-score --source-dir` on the real data we hold.

- `mteb` protocol, all-MiniLM-L6-v2: mteb's published STSBenchmark 0.8203 and SciFact nDCG@10
  0.6451 (both datasets here are identical to mteb's), within 0.003.
- `hteb` protocol, all-mpnet-base-v2: the HTEB paper's Table 17 Original column, STSBenchmark
  83.43 and Banking77 92.23, within 0.3 points.
"""

from __future__ import annotations

import json

import pytest

from hteb_score.cli import main
from models import minilm_path, mpnet_path

pytestmark = pytest.mark.slow


def _original(card_path, dataset):
    card = json.loads(card_path.read_text())
    return next(r["value"] for r in card["scores"]
                if r["dataset"] == dataset and r["subset"] == "all" and r["transformation"] == "original")


def test_minilm_mteb_protocol_matches_mteb_published(shared_data, tmp_path):
    assert main([minilm_path(), "--source-dir", str(shared_data), "--datasets", "STSBenchmark,SciFact",
                 "--protocol", "mteb", "--out", str(tmp_path), "--quiet"]) == 0
    card = tmp_path / "result_card.json"
    assert _original(card, "STSBenchmark") == pytest.approx(0.8203, abs=0.003)
    assert _original(card, "SciFact") == pytest.approx(0.6451, abs=0.003)


def test_mpnet_hteb_protocol_matches_paper_table_17(shared_data, tmp_path):
    assert main([mpnet_path(), "--source-dir", str(shared_data), "--datasets", "STSBenchmark,Banking77",
                 "--out", str(tmp_path), "--quiet"]) == 0
    card = tmp_path / "result_card.json"
    assert 100 * _original(card, "STSBenchmark") == pytest.approx(83.43, abs=0.3)
    assert 100 * _original(card, "Banking77") == pytest.approx(92.23, abs=0.3)
