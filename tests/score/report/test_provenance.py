"""Every page says at its foot what it was made from (issue 44): the revision its cards were scored on
(label and content hash), when and by which hteb-score they were scored, and the hteb-score that wrote it."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from hteb_contract.common.escape import html_text
from hteb_score import __version__
from hteb_score.report.provenance import made_from

ROOT = Path(__file__).resolve().parents[3]
BOARD = ROOT / "docs" / "findings" / "noise2-1339-heldout" / "whole-revision"

card_of = st.fixed_dictionaries(
    {
        "dataset": st.fixed_dictionaries(
            {
                "label": st.one_of(st.none(), st.text(min_size=1, max_size=20)),
                "revision": st.text(min_size=1, max_size=70),
            }
        ),
        "created": st.one_of(st.none(), st.dates().map(lambda d: f"{d.isoformat()}T00:00:00+00:00")),
        "hteb_score_version": st.one_of(st.none(), st.sampled_from(["0.1.0", "0.2.0"])),
    }
)


@given(st.lists(card_of, max_size=5))
def test_the_sentence_names_every_revision_the_date_span_and_the_versions(cards):
    said = made_from(cards)
    assert said.lower().endswith(f"page written by hteb-score {__version__}.") and said[0].isupper()
    for card in cards:
        assert card["dataset"]["revision"].removeprefix("sha256:")[:12] in said
    dates = sorted(c["created"][:10] for c in cards if c["created"])
    if dates:
        assert f"cards scored {dates[0]}" in said and dates[-1] in said
    assert all(v in said for v in {c["hteb_score_version"] for c in cards} - {None})


def test_the_committed_leaderboard_says_what_it_was_made_from():
    cards = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(BOARD.glob("*/result_card.json"))]
    page = (ROOT / "docs" / "leaderboard.html").read_text(encoding="utf-8")
    footer = page[page.index("<footer>") : page.index("</footer>")]
    assert html_text(made_from(cards)) in footer
    assert "noise2-1339 (67071e0b1bb5)" in footer and f"hteb-score {__version__}" in footer


def test_every_committed_report_page_says_what_it_was_made_from():
    pages = sorted((ROOT / "docs" / "findings").glob("*/*/report.html"))
    assert len(pages) >= 6
    for path in pages:
        inputs = json.loads((path.parent / "comparison.json").read_text(encoding="utf-8"))["inputs"]
        cards = [json.loads((ROOT / i["source"]).read_text(encoding="utf-8")) for i in inputs]
        page = path.read_text(encoding="utf-8")
        assert f'<footer><p class="note">{html_text(made_from(cards))}</p></footer>' in page, path
