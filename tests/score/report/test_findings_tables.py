"""The findings tables of docs/findings.md are written from the committed cards (issue 23 item 5):
the committed file equals what `hteb-score tables` writes, and a hand-edited number fails the check."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from docs_readings import DOCS, docs_tables
from edited_tables import with_axis_rows
from findings_parts import part as round_part
from findings_parts import parts_at

from hteb_contract.taxonomy import INSTALLED
from hteb_contract.errors import ContractError, HtebError
from hteb_contract.taxonomy import AXES
from hteb_score import CARD_FILE
from hteb_score.report.site.findings import parts_of, unit_times
from hteb_score.report.formatting import heading
from hteb_score.scoring.aggregate import aggregate
from hteb_score.scoring.parts import merge_parts, read_part
from hteb_score.scoring.score_record import ScoreRecord

ROOT = Path(__file__).resolve().parents[3]
#: the round whose committed parts these tests read
ROUND = "noise2-1339-heldout"
FINDINGS = ROOT / "docs" / "findings.md"


@DOCS
def test_the_committed_tables_are_what_their_cards_give(monkeypatch):
    parts_at(ROUND)  # the unit-times table reads the parts that left the tree: skipped in a shallow clone
    monkeypatch.chdir(ROOT)
    text = FINDINGS.read_text(encoding="utf-8")
    # the six datasets' two tables, the whole revision's two, its model groups and its work units' times; the
    # per-item drift; noise2-1339's subsets, before and after, its models and its items; the round scored after
    # issue 42: its models (chance rows among them) and each pair on each dataset, on the six datasets and on the
    # whole revision, and its work units' times; the Sensitivity round's models and their Noise robustness
    assert text.count("<!-- hteb:table ") == 17
    assert docs_tables(text) == text, "run `make tables` (hteb-score tables)"


def _copy(tmp_path: Path, kind: str) -> Path:
    """A findings page beside a copy of docs/findings holding only the first table of `kind` of docs/findings.md
    (test_the_committed_tables_are_what_their_cards_give checks every table; a hand edit is caught the same way
    in each, so one is written here)."""
    shutil.copytree(ROOT / "docs" / "findings", tmp_path / "findings")
    text = FINDINGS.read_text(encoding="utf-8")
    start = text.index(f"<!-- hteb:table {kind} ")
    end = text.index("<!-- /hteb:table -->", start) + len("<!-- /hteb:table -->\n")
    path = tmp_path / "findings.md"
    path.write_text(f"# {kind}\n\n{text[start:end]}", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_number_typed_by_hand_fails_the_check_and_is_rewritten(tmp_path, run_cli):
    copy = _copy(tmp_path, "noise-models")
    text = copy.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| all-mpnet-base-v2 |"))
    edited = row.replace(row.split(" | ")[1], "99.99", 1)
    copy.write_text(text.replace(row, edited), encoding="utf-8")
    code, _, err = run_cli("tables", copy, "--check")
    assert code == 1 and "tables differ from their cards" in err and str(copy) in err
    assert run_cli("tables", copy)[0] == 0
    assert copy.read_text(encoding="utf-8") == text


def test_refused_a_file_without_tables_or_cards(tmp_path, run_cli):
    plain = tmp_path / "plain.md"
    plain.write_text("# nothing generated here\n")
    code, _, err = run_cli("tables", plain)
    assert code == 2 and "no generated table in it" in err and err.count("\n") == 1
    plain.write_text("<!-- hteb:table noise-models nowhere -->\n| x |\n<!-- /hteb:table -->\n")
    code, _, err = run_cli("tables", plain)
    assert code == 2 and "no result cards" in err


@pytest.mark.slow
@DOCS
def test_a_unit_time_typed_by_hand_is_written_over_with_its_parts_own(monkeypatch):
    """The committed table's time is its part's own (read where the part is: the tree or the round's parts-at
    commit), and a number typed over it is written over (tests/score/report/test_parts_at.py: `--check` fails;
    the page's other tables are read once with the committed tables' test: docs_readings)."""
    parts_at(ROUND)
    monkeypatch.chdir(ROOT)
    text = FINDINGS.read_text(encoding="utf-8")
    table = text[text.index("<!-- hteb:table unit-times ") :]

    def cells(line: str) -> list[str]:
        return [cell.strip() for cell in line.strip().strip("|").split("|")]

    models = cells(table.splitlines()[1])[1:]
    row = next(line for line in table.splitlines() if line.startswith("| TwitterSemEval2015 |"))
    for model, cell in zip(models, cells(row)[1:]):
        part = read_part(round_part(ROUND, model, "TwitterSemEval2015"))
        assert cell.split(" (")[0] == f"{part.timings['total_s'] / 60:.1f}", model
    minutes = cells(row)[1].split(" (")[0]
    typed = text.replace(row, row.replace(f"| {minutes}", "| 0.1" if minutes != "0.1" else "| 0.2", 1))
    assert typed != text and docs_tables(typed) == text


def test_unit_times_name_a_part_of_several_datasets_and_sum_each_model():
    """A part that holds two datasets is one row; a model without a unit shows "-"; the last row sums
    each model's parts and says how many, and the share its cache held."""
    l6 = [read_part(round_part(ROUND, "all-MiniLM-L6-v2", f"{name}")) for name in ("STS12", "STS13")]
    random = read_part(round_part(ROUND, "random", "STS12"))
    table = unit_times({"L6": [merge_parts(l6)], "random": [random]}).splitlines()
    assert table[0] == "| unit | L6 | random |"
    together = sum(p.timings["total_s"] for p in l6) / 60
    rows = {line.split(" | ")[0].lstrip("| "): line for line in table[2:]}
    assert rows["STS12 + STS13"].startswith(f"| STS12 + STS13 | {together:.1f} (") and rows["STS12 + STS13"].endswith(
        " | - |"
    )
    assert rows["STS12"].startswith("| STS12 | - | ")
    assert rows["in all"].startswith(f"| in all | {together:.1f} over 1 unit (")


def test_refused_a_folder_without_work_units(tmp_path):
    with pytest.raises(HtebError, match="no work units"):
        parts_of(tmp_path)


@pytest.fixture
def cards_without_noise(tmp_path: Path) -> Path:
    """Two committed cards cut to their Original scores, their aggregates made anew from those."""
    folder = tmp_path / "cards"
    for model in ("all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2"):
        card = json.loads((ROOT / "docs" / "findings" / "noise-1339" / model / CARD_FILE).read_text(encoding="utf-8"))
        card["scores"] = [s for s in card["scores"] if s["transformation"] == "original"]
        card["aggregates"] = aggregate([ScoreRecord(**s) for s in card["scores"]], INSTALLED)
        card["error_policy"], card["statistics"] = [], {}
        card.pop("item_measures")  # hteb-score writes none without a transformed item
        (folder / model).mkdir(parents=True)
        (folder / model / CARD_FILE).write_text(json.dumps(card), encoding="utf-8")
    return folder


@pytest.mark.parametrize("table", ["noise-models", "noise-effects"])
def test_a_noise_table_of_cards_without_noise_is_refused_in_one_line(cards_without_noise, run_cli, table):
    page = cards_without_noise.parent / "page.md"
    page.write_text(f"<!-- hteb:table {table} cards -->\n| x |\n<!-- /hteb:table -->\n", encoding="utf-8")
    code, out, err = run_cli("tables", page)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"table {table}: the card" in err and "no Noise results" in err
    groups = page.with_name("groups.md")  # a table that needs no Noise results is written from the same cards
    groups.write_text("<!-- hteb:table model-groups cards -->\n<!-- /hteb:table -->\n", encoding="utf-8")
    assert run_cli("tables", groups)[0] == 0 and "| all-MiniLM-L6-v2 | " in groups.read_text(encoding="utf-8")


def test_unit_times_refuse_a_part_without_a_total_time():
    part = read_part(round_part(ROUND, "all-MiniLM-L6-v2", "STS12"))
    timings = {k: v for k, v in part.timings.items() if k != "total_s"}
    with pytest.raises(ContractError, match="table unit-times: the work unit STS12 of L6 has no total time"):
        unit_times({"L6": [replace(part, timings=timings)]})


# -- the tables of noise2-1339 (issue 34 item 3) and of the per-item measures (issue 36 item 5) ---------------

WHOLE = {label: ROOT / "docs" / "findings" / label / "whole-revision" for label in ("noise-1339", "noise2-1339")}


def _delta(card: dict, dataset: str, rule: str) -> float:
    """A rule's figure minus the Original on one dataset, in points, read from the card's own records."""
    value = {
        (r["transformation"], r["subset"]): r["value"]
        for r in card["scores"]
        if r["dataset"] == dataset and r["subset"] == "all"
    }
    return 100 * (value[(rule, "all")] - value[("original", "all")])


def test_before_and_after_shows_the_datasets_scored_again_with_each_cards_figures():
    from hteb_score.report.site.findings import cards_of, noise_before_after

    table = noise_before_after(cards_of([WHOLE["noise-1339"], WHOLE["noise2-1339"]])).splitlines()
    after = json.loads((WHOLE["noise2-1339"] / "all-MiniLM-L6-v2" / CARD_FILE).read_text(encoding="utf-8"))
    before = json.loads((WHOLE["noise-1339"] / "all-MiniLM-L6-v2" / CARD_FILE).read_text(encoding="utf-8"))
    carried = {f["dataset"] for f in after["flags"] if f["code"] == "carried_from_revision"}
    fresh = [d for d in after["dataset"]["datasets"] if d not in carried]
    assert sorted({row.split(" | ")[0].lstrip("| ") for row in table[2:]}) == sorted(fresh)
    assert set(fresh) == {"MasakhaNEWS", "SemRel2024", "STS15"}  # what rules version 2 changed (hteb-score carry)
    column = table[0].split(" | ").index("all-MiniLM-L6-v2 before -> after")
    row = next(r.split(" | ") for r in table if r.startswith("| SemRel2024 | keyboard typos |"))
    was, now = row[column].rstrip(" |").split(" -> ")
    assert float(was) == pytest.approx(_delta(before, "SemRel2024", "keyboard_typos"), abs=0.005)
    assert float(now) == pytest.approx(_delta(after, "SemRel2024", "keyboard_typos"), abs=0.006)  # kept subsets only


def test_a_table_of_two_folders_given_one_is_refused(tmp_path, run_cli):
    page = tmp_path / "page.md"
    page.write_text(f"<!-- hteb:table noise-before-after {WHOLE['noise-1339']} -->\n| x |\n<!-- /hteb:table -->\n")
    code, _, err = run_cli("tables", page)
    assert code == 2 and "is read from 2 folder(s), comma-separated; the marker names 1" in err and err.count("\n") == 1


def test_the_item_examples_are_the_explorers_lowest_cosines_quoted_from_the_revision():
    import pandas as pd

    from hteb_score.report.site.findings import QUOTED_CHARS, comparison_of, noise_item_examples

    rows = pd.concat([pd.read_parquet(p) for p in sorted(WHOLE["noise2-1339"].glob("*/items.parquet"))])
    table = noise_item_examples(comparison_of(WHOLE["noise2-1339"])).splitlines()
    for line in table[2:]:
        cosine = float(line.split(" | ")[3])
        rule = next(t for t in AXES["noise"] if heading(t) == line.split(" | ")[0].lstrip("| "))
        lowest = rows[rows.transformation == rule].cosine.min()
        assert cosine == pytest.approx(lowest, abs=0.0005)
        worst = rows[(rows.transformation == rule) & (rows.cosine == lowest)].iloc[0]
        assert worst.original_text[: QUOTED_CHARS // 2].split("|")[0].strip() in line.replace("\\", "")


@pytest.mark.parametrize("short", [None, "vowels"])
def test_a_rule_row_is_named_in_headings_by_its_short_or_else_its_label(short, monkeypatch):
    """A new Noise rule row needs no code to be named in a table heading: its `short` if it has one,
    else its spaced, capitalised name (the tables once indexed a dict of five names and raised KeyError)."""
    import yaml

    from hteb_contract.specs import transformations

    data = yaml.safe_load((ROOT / "schemas" / "hteb_contract" / "specs" / "transformations.yaml").read_text())
    with_axis_rows(
        data, {"name": "vowel_swap", "axis": "noise", "made_by": "rules", **({"short": short} if short else {})}
    )
    table = transformations.parse_transformation_table(data)
    monkeypatch.setattr(transformations, "transformation_table", lambda: table)
    assert heading("vowel_swap") == (short or "Vowel swap")
    assert [heading(t) for t in AXES["noise"]] == [
        "random caps",
        "char. deletion",
        "numerisation",
        "keyboard typos",
        "punct./casing loss",
    ]
