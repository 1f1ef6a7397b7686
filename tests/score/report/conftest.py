"""Cards for the comparison tests (see cards.py) and a CLI runner that returns exit code and output."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/score: run_files

from cards import MODELS, make_card, write_card
from hteb_score.cli import main


@pytest.fixture(scope="session")
def card_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("cards")
    return [write_card(folder, make_card(m, model_index=i)) for i, m in enumerate(MODELS)]


@pytest.fixture
def run_cli(capsys: pytest.CaptureFixture[str]):
    def run(*args: str) -> tuple[int, str, str]:
        code = main([str(a) for a in args])
        out, err = capsys.readouterr()
        return code, out, err

    return run
