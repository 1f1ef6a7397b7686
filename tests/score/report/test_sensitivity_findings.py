"""docs/sensitivity.md's findings: its tables are what `hteb-score tables` writes from the committed cards of
findings/sensitivity-1339 (one of the files it writes by default), and each reading its prose names is the
committed card's."""

from __future__ import annotations

import json
from pathlib import Path

from docs_readings import docs_tables

from hteb_score.cli.tables import DEFAULT_FILES

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "sensitivity.md"
FINDINGS = ROOT / "docs" / "findings" / "sensitivity-1339"


def test_the_committed_tables_are_what_the_cards_give(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert Path("docs/sensitivity.md") in DEFAULT_FILES  # `make tables` writes them
    text = PAGE.read_text(encoding="utf-8")
    assert text.count("<!-- hteb:table sensitivity-") == 2
    assert docs_tables(text) == text, "run `make tables` (hteb-score tables)"


def _reading(figure: dict) -> str:
    if figure["blind"] in (True, None):
        return "blind"
    return "hears" if figure["accuracy"] > 0.5 else "inverted"


def test_the_prose_names_the_cards_readings():
    """paraphrase-MiniLM-L3-v2: negation heard on every dataset, antonyms on all but the three named (blind there,
    below what their items can tell), numbers blind overall as heard and inverted datasets cancel, roles inverted
    over 59 items."""
    block = json.loads((FINDINGS / "paraphrase-MiniLM-L3-v2" / "result_card.json").read_text())["sensitivity"]
    pairs = {p["pair"]: p for p in block["pairs"]}
    by = {
        pair: {d["dataset"]: _reading(d) for d in block["datasets"] if d["pair"] == pair}
        for pair in ("negation_flip", "antonym_swap", "number_change")
    }
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert set(by["negation_flip"].values()) == {"hears"} and "hears negation on every dataset" in text
    blind = sorted(d for d, r in by["antonym_swap"].items() if r != "hears")
    assert (
        blind == ["MasakhaNEWS", "SciFact", "TwitterSemEval2015"]
        and "(MasakhaNEWS, SciFact and TwitterSemEval2015" in text
    )
    for name in blind:
        figure = next(d for d in block["datasets"] if (d["pair"], d["dataset"]) == ("antonym_swap", name))
        assert figure["accuracy"] < figure["detectable"]  # "hold too few"
    assert _reading(pairs["number_change"]) == "blind"
    assert {"STS15", "Banking77", "TwitterSemEval2015"} <= {d for d, r in by["number_change"].items() if r == "hears"}
    inverted = sorted(d for d, r in by["number_change"].items() if r == "inverted")
    assert inverted == ["MasakhaNEWS", "SemRel2024", "SummEval", "TwentyNewsgroups"]
    assert "inverted on MasakhaNEWS, SemRel2024, SummEval and TwentyNewsgroups" in text
    assert _reading(pairs["role_swap"]) == "inverted" and pairs["role_swap"]["items"] == 59
    assert "the few role items the rules find (59)" in text
