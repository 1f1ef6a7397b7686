"""The cards' words live in template files: a wording change there is a wording change in every card, and
the figures around it stay as the JSON gives them."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
from hteb_generate.revision import card as dataset_card
from hteb_score.report.card import card as result_card

REPO = Path(__file__).resolve().parents[1]
CARDS = sorted((REPO / "docs" / "findings").rglob("result_card.json"))


def _with_words(module, template: str, old: str, new: str, monkeypatch) -> None:
    """Render `module`'s card from a copy of its template with `old` reworded as `new`."""
    text = (Path(module.__file__).parent / "templates" / template).read_text(encoding="utf-8")
    assert old in text
    env = module.TEMPLATE.environment.overlay(loader=jinja2.DictLoader({template: text.replace(old, new)}))
    monkeypatch.setattr(module, "TEMPLATE", env.get_template(template))


def test_a_reworded_result_card_template_rewords_the_card_and_nothing_else(monkeypatch):
    assert CARDS
    card = json.loads(CARDS[0].read_text(encoding="utf-8"))
    before = result_card.render_markdown(card)
    _with_words(result_card, "result_card.md.j2", "## Evaluation settings", "## How each dataset was evaluated",
                monkeypatch)
    after = result_card.render_markdown(card)
    assert after == before.replace("## Evaluation settings", "## How each dataset was evaluated") != before


def test_a_reworded_dataset_card_template_rewords_the_card(monkeypatch, tmp_path):
    published = REPO / "docs" / "revisions" / "noise-1339" / "manifest.json"
    manifest = json.loads(published.read_text(encoding="utf-8"))
    rules = manifest["transformations"]
    before = dataset_card.card_body(manifest, [], rules)
    _with_words(dataset_card, "dataset_card.md.j2", "## Choices the paper left open", "## Open choices", monkeypatch)
    after = dataset_card.card_body(manifest, [], rules)
    assert after == before.replace("## Choices the paper left open", "## Open choices") != before
