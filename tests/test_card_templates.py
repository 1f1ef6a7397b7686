"""The cards' and pages' words live in template files: a wording change there is a wording change in every
card, and the figures around it stay as the JSON gives them; a page's script and style are its asset files,
inlined and admitted by their hashes."""

from __future__ import annotations

import json
from pathlib import Path

import re

import jinja2
from hteb_generate.revision import card as dataset_card
from hteb_score.report import rendering
from hteb_score.report.card import card as result_card

REPO = Path(__file__).resolve().parents[1]
CARDS = sorted((REPO / "docs" / "findings").rglob("result_card.json"))


def _with_words(module, template: str, old: str, new: str, monkeypatch) -> None:
    """Render `module`'s card from a copy of its template with `old` reworded as `new`."""
    text = Path(module.TEMPLATE.filename).read_text(encoding="utf-8")
    assert old in text
    env = module.TEMPLATE.environment.overlay(loader=jinja2.DictLoader({template: text.replace(old, new)}))
    monkeypatch.setattr(module, "TEMPLATE", env.get_template(template))


def test_a_reworded_result_card_template_rewords_the_card_and_nothing_else(monkeypatch):
    assert CARDS
    card = json.loads(CARDS[0].read_text(encoding="utf-8"))
    before = result_card.render_markdown(card)
    _with_words(
        result_card, "result_card.md.j2", "## Evaluation settings", "## How each dataset was evaluated", monkeypatch
    )
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


def test_a_page_inlines_its_own_script_and_style_files_and_admits_exactly_them(tmp_path):
    """leaderboard.html: its script and style are report/templates/'s files, minified (no comment of theirs is
    left), and the Content Security Policy admits exactly the inline texts by their SHA-256."""
    from hteb_score.report.site import leaderboard_page
    from hteb_score.report.site.leaderboard_data import leaderboard_data, read_facts

    board = REPO / "docs" / "findings" / "noise2-1339-heldout"
    page = leaderboard_page.render(leaderboard_data(board / "whole-revision", read_facts(board / "model_facts.json")))
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    script = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(script) == 1 and f"style-src {rendering.csp_source(style)};" in csp
    assert f"script-src {rendering.csp_source(script[0])};" in csp
    folder = Path(rendering.__file__).parent / "templates"
    for name in (*leaderboard_page.SCRIPTS, *leaderboard_page.STYLES):
        source = (folder / name).read_text(encoding="utf-8")
        inlined = script[0] if name.endswith(".js") else style
        assert rendering.asset(name) in inlined and len(rendering.asset(name)) < len(source)
        comment = source.splitlines()[0]
        assert comment.startswith(("//", "/*")) and comment not in page
