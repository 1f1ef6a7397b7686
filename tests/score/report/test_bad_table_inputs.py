"""`hteb-score tables` and `compare` check each card and work unit they read as `merge` checks a part
(issue 35 item 2): a score record outside its metric's range (consistent with the aggregates derived
from it), a record of a dataset the card does not cover, mteb result files of another model, model
revision or dataset revision beside a card, or saying another score than the card's, a work unit with a record outside its range, parts of
two runs or a unit given twice in one model's folder. Each refusal is one line naming the file and
the field, exit 2, nothing written. The inputs are generated from the committed findings and cards."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from cards import MODELS, make_card, write_card
from findings_parts import part
from fuzz import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_contract.taxonomy import INSTALLED
from hteb_score import CARD_FILE
from hteb_score.scoring.aggregate import aggregate
from hteb_score.scoring.score_record import ScoreRecord
from not_utf8 import not_utf8

ROOT = Path(__file__).resolve().parents[3]
FINDINGS = ROOT / "docs" / "findings" / "noise-1339"
#: the work units of the round still being scored (a finished round's parts leave the tree)
L6 = "all-MiniLM-L6-v2"


def _refused(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("hteb-score: error: "), err
    assert "Traceback" not in err and all(n in err for n in needles), err


def _reaggregated(card: dict) -> dict:
    card["aggregates"] = aggregate([ScoreRecord.from_json(s) for s in card["scores"]], INSTALLED)
    return card


def _out_of_range(card: dict) -> tuple[dict, int]:
    """`card` with its first Original Spearman record at 7.5 (750 points), its aggregates derived anew."""
    i = next(i for i, s in enumerate(card["scores"]) if s["metric"] == "spearman" and s["transformation"] == "original")
    card["scores"][i]["value"] = 7.5
    return _reaggregated(card), i


@pytest.fixture
def cards(tmp_path: Path) -> Path:
    """Two committed cards with their mteb folders, and a page with a table of them."""
    folder = tmp_path / "cards"
    for model in (L6, "paraphrase-MiniLM-L3-v2"):
        shutil.copytree(FINDINGS / model, folder / model)
    (tmp_path / "page.md").write_text(
        "<!-- hteb:table model-groups cards -->\n<!-- /hteb:table -->\n", encoding="utf-8"
    )
    return folder


def _tables(run_cli, cards: Path) -> tuple[int, str, str]:
    page = cards.parent / "page.md"
    before = page.read_text(encoding="utf-8")
    done = run_cli("tables", page)
    if done[0] != 0:
        assert page.read_text(encoding="utf-8") == before
    return done


def test_the_untouched_cards_make_the_table(cards, run_cli):
    assert _tables(run_cli, cards)[0] == 0


def test_a_record_outside_its_metrics_range_is_refused_naming_the_file_and_field(cards, run_cli):
    path = cards / L6 / CARD_FILE
    card, i = _out_of_range(json.loads(path.read_text(encoding="utf-8")))
    path.write_text(json.dumps(card), encoding="utf-8")
    _refused(
        *_tables(run_cli, cards),
        f"{path}: scores[{i}].value (",
        "original/None all) is 7.5, outside spearman's range [-1, 1]",
    )
    code, out, err = run_cli("compare", path, cards / "paraphrase-MiniLM-L3-v2" / CARD_FILE, "--out", cards / "out")
    _refused(code, out, err, f"{path}: scores[{i}].value")
    assert not (cards / "out").exists()


@pytest.mark.parametrize(
    ("move", "field"),
    [
        (lambda results: results / "someone__else", "model.model_id"),
        (lambda results: results / "sentence-transformers__all-MiniLM-L6-v2" / "sha256_0000", "model.revision"),
    ],
    ids=["model", "model-revision"],
)
def test_mteb_results_of_another_model_beside_a_card_are_refused(cards, run_cli, move, field):
    results = cards / L6 / "mteb" / "results"
    model = results / "sentence-transformers__all-MiniLM-L6-v2"
    revision = next(model.iterdir())
    target = move(results)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(revision, target if field == "model.revision" else target / revision.name)
    if field == "model.model_id":
        model.rmdir()
    _refused(
        *_tables(run_cli, cards),
        f"{cards / L6 / CARD_FILE}: {field} is ",
        f"but its mteb results are filed under mteb/results/{target.relative_to(results).as_posix()}",
    )


def test_an_mteb_result_of_another_dataset_revision_beside_a_card_is_refused(cards, run_cli):
    files = next((cards / L6 / "mteb" / "results" / "sentence-transformers__all-MiniLM-L6-v2").iterdir())
    file = sorted(files.glob("*.hteb-5d207292.*.json"))[0]
    file.rename(file.with_name(file.name.replace(".hteb-5d207292.", ".hteb-0badc0de.")))
    _refused(
        *_tables(run_cli, cards),
        f"{cards / L6 / CARD_FILE}: dataset.revision is ",
        f"but its mteb result {file.name.replace('5d207292', '0badc0de')} is of revision 0badc0de",
    )


@pytest.mark.parametrize("change", ["value", "null", "subset"])
def test_an_mteb_result_that_says_another_score_than_the_card_is_refused(cards, run_cli, change):
    """Every mteb file of a dataset, variant by variant and subset by subset, against the card's records:
    a main score moved by 0.01, made null, or of a subset the card does not hold."""
    folder = next((cards / L6 / "mteb" / "results" / "sentence-transformers__all-MiniLM-L6-v2").iterdir())
    file = sorted(folder.glob("STSBenchmark*.hteb-5d207292.*.json"))[-1]
    data = json.loads(file.read_text(encoding="utf-8"))
    (entry,) = next(iter(data["scores"].values()))
    if change == "value":
        entry["main_score"] = round(entry["main_score"] + 0.01, 6)
    elif change == "null":
        entry["main_score"] = None
    else:
        data["scores"]["test"] = [entry, {**entry, "hf_subset": "xx"}]
    file.write_text(json.dumps(data), encoding="utf-8")
    needle = "of which the card has no record" if change == "subset" else f"but its mteb result {file.name} says"
    _refused(*_tables(run_cli, cards), f"{cards / L6 / CARD_FILE}: ", "STSBenchmark", needle)


def test_a_record_of_a_dataset_the_card_does_not_cover_is_refused(tmp_path, run_cli):
    card = make_card(MODELS[0])
    card["scores"][0]["dataset"] = "Elsewhere"
    forged = write_card(tmp_path, _reaggregated(card))
    honest = write_card(tmp_path, make_card(MODELS[1], model_index=1))
    code, out, err = run_cli("compare", honest, forged, "--out", tmp_path / "out")
    _refused(code, out, err, f"{forged}: scores[0].dataset is 'Elsewhere', not one of the card's dataset.datasets")


def test_a_generated_card_out_of_range_is_refused_by_compare(tmp_path, run_cli):
    card = make_card(MODELS[0])
    card["scores"][3]["value"] = -0.25  # a rate (main_score) below 0
    forged = write_card(tmp_path, _reaggregated(card))
    honest = write_card(tmp_path, make_card(MODELS[1], model_index=1))
    code, out, err = run_cli("compare", honest, forged, "--out", tmp_path / "out")
    _refused(code, out, err, f"{forged}: scores[3].value (", "is -0.25, outside main_score's range [0, 1]")


# -- work units (the unit-times table) ------------------------------------------------------------------------


@pytest.fixture
def parts(tmp_path: Path) -> Path:
    folder = tmp_path / "parts"
    for model in (L6, "random"):
        (folder / model).mkdir(parents=True)
        for name in ("STS12", "STS13"):
            shutil.copy(part("noise2-1339-heldout", model, name), folder / model)
    (tmp_path / "page.md").write_text("<!-- hteb:table unit-times parts -->\n<!-- /hteb:table -->\n", encoding="utf-8")
    return folder


def _edit_part(path: Path, edit) -> None:
    data = json.loads(gzip.decompress(path.read_bytes()))
    edit(data)
    path.write_bytes(gzip.compress(json.dumps(data).encode("utf-8")))


def test_the_untouched_parts_make_the_table(parts, run_cli):
    assert _tables(run_cli, parts)[0] == 0


def test_a_work_unit_with_a_record_outside_its_range_is_refused(parts, run_cli):
    path = parts / L6 / "STS12.hteb_part.json.gz"

    def spearman_of_7_5(data: dict) -> None:
        unit = data["units"][0]
        record = next(r for r in unit["scores"] if r["transformation"] == "original")
        record["value"] = 7.5
        result = next(r for r in unit["results"] if r["transformation"] == "original")
        result["value"] = result["subsets"][record["subset"]] = 7.5

    _edit_part(path, spearman_of_7_5)
    _refused(
        *_tables(run_cli, parts),
        f"{path}: unit 'STS12': scores: original/None",
        "is 7.5, outside spearman's range [-1, 1]",
    )


def test_a_work_unit_of_another_run_in_a_models_folder_is_refused(parts, run_cli):
    other = parts / L6 / "STS13.hteb_part.json.gz"
    shutil.copy(parts / "random" / "STS13.hteb_part.json.gz", other)
    _refused(
        *_tables(run_cli, parts),
        f"{parts / L6 / 'STS12.hteb_part.json.gz'} and {other} differ in identity.model",
        "they are not work units of one run",
    )


def test_a_work_unit_given_twice_in_a_models_folder_is_refused(parts, run_cli):
    twice = parts / L6 / "STS12-again.hteb_part.json.gz"
    shutil.copy(parts / L6 / "STS12.hteb_part.json.gz", twice)
    _refused(
        *_tables(run_cli, parts),
        f"{parts / L6 / 'STS12-again.hteb_part.json.gz'} and "
        f"{parts / L6 / 'STS12.hteb_part.json.gz'} both hold units.STS12",
    )


def test_a_figure_resting_on_no_subset_is_not_held_to_the_evaluators_score(tmp_path, run_cli):
    """A single-subset dataset whose Noise rule changed too few texts: its card's figure is null (left out,
    the card's coverage says so) while its mteb file keeps the evaluator's score; that is no contradiction."""
    folder = tmp_path / "cards"
    shutil.copytree(ROOT / "docs" / "findings" / "noise2-1339" / "whole-revision" / L6, folder / L6)
    path = folder / L6 / CARD_FILE
    card = json.loads(path.read_text(encoding="utf-8"))
    variant = ("STS12", "random_capitalisation", 1339)
    cover = next(c for c in card["coverage"] if (c["dataset"], c["transformation"], c["seed"]) == variant)
    cover.update(subsets_scored=0, left_out=[{"subset": "default", "reason": "mostly_unchanged", "detail": "test"}])
    record = next(r for r in card["scores"] if (r["dataset"], r["transformation"], r["seed"]) == variant)
    record["value"] = None
    path.write_text(json.dumps(_reaggregated(card)), encoding="utf-8")
    (tmp_path / "page.md").write_text(
        "<!-- hteb:table noise-subsets cards -->\n<!-- /hteb:table -->\n", encoding="utf-8"
    )
    code, _, err = run_cli("tables", tmp_path / "page.md")
    assert code == 0, err
    del card["coverage"]  # the same null figure without the coverage that explains it contradicts its mteb file
    path.write_text(json.dumps(card), encoding="utf-8")
    _refused(*run_cli("tables", tmp_path / "page.md"), "STS12 random_capitalisation/1339", "says")


# -- files that are not UTF-8 text ------------------------------------------------------------------------------


#: a page's text with bytes that are no UTF-8 somewhere in it (a binary file, a page saved as Latin-1)
NOT_UTF8 = st.builds(
    lambda before, bad, after: before.encode("utf-8") + bad + after.encode("utf-8"),
    st.text(max_size=40),
    st.binary(min_size=1, max_size=8).filter(not_utf8),
    st.text(max_size=40),
).filter(not_utf8)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=NOT_UTF8)
def test_fuzz_a_page_that_isnot_utf8_is_refused_and_left_as_it_was(tmp_path_factory, run_cli, data):
    page = tmp_path_factory.mktemp("page") / "t.md"
    page.write_bytes(data)
    for check in ((), ("--check",)):
        _refused(*run_cli("tables", page, *check), f"{page}: not UTF-8 text (")
        assert page.read_bytes() == data


@settings(max_examples=examples(20), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=NOT_UTF8)
def test_fuzz_a_rounds_parts_at_that_isnot_utf8_is_refused(parts, run_cli, data):
    """The commit a round's parts left the tree at, read from its `parts-at`: bytes that are no UTF-8 name none."""
    marker = parts.parent / "parts-at"
    marker.write_bytes(data)
    _refused(*_tables(run_cli, parts), f"{marker}: ", "is not a commit (40 hex digits)")
