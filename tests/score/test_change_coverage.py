"""The card never counts an unchanged text as robustness (issue 34, item 2).

A real Noise revision made by the generator (rules version 2) from real SemRel2024 and MasakhaNEWS
rows: random_capitalisation does not apply to the scripts without case (Ethiopic, Arabic, Devanagari,
Telugu), and punctuation_casing_loss leaves most Algerian Arabic (`arq`) texts as they were. The
manifest records each (rule, dataset, subset)'s change share and applicability, `verify` checks them
against the item files, and the scorer (the real read, scoring, part and card code, with a hashed
bag-of-words encoder) leaves those subsets out of the rule's figure, flags them and says on how many
subsets each figure rests, in result_card.json and result_card.md. A revision without recorded
shares (as noise-1339) gets the same coverage, counted from the texts the scorer reads.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hteb_contract.revision import Revision
from hteb_contract.specs.noise_scripts import APPLIED_SHARE
from hteb_score.cli import main
from hteb_score.report.card.run_outputs import publish
from revision_factory import install, reseal
from scored_parts import scored_part

SEED = 1339
NAMES = ["SemRel2024", "MasakhaNEWS"]
RULES = ("keyboard_typos", "random_capitalisation", "punctuation_casing_loss")
CASELESS = {"SemRel2024": {"amh", "arb", "arq", "ary", "hin", "mar", "tel"}, "MasakhaNEWS": {"amh", "tir"}}


@pytest.fixture(scope="module")
def made(tmp_path_factory, shared_data) -> Path:
    """The generator's revision: two datasets, three rules, 6 rows per subset."""
    from hteb_generate.run.pipeline import run
    from hteb_generate.setup.config import build_config

    root = tmp_path_factory.mktemp("coverage")
    cfg = build_config(
        seed=str(SEED),
        profile="noise",
        overrides={
            "datasets": ",".join(NAMES),
            "transformations": ",".join(RULES),
            "sample": 6,
            "label": "cov",
            "cache_dir": str(root / "cache"),
            "data_dir": str(shared_data),
            "publish": False,
        },
    )
    return run(cfg, log=lambda m: None).folder


def _store(folder: Path, tmp: Path) -> str:
    install(tmp / "store", folder)
    return f"file://{tmp / 'store'}"


@pytest.fixture(scope="module")
def card(made, tmp_path_factory) -> tuple[dict, str]:
    tmp = tmp_path_factory.mktemp("card")
    part = scored_part(None, planned=NAMES, store=_store(made, tmp), ref="cov")
    out = tmp / "out"
    return publish(part, out), (out / "result_card.md").read_text(encoding="utf-8")


def _entry(card: dict, dataset: str, rule: str) -> dict:
    return next(c for c in card["coverage"] if (c["dataset"], c["transformation"]) == (dataset, rule))


def test_the_manifest_records_each_subsets_change_share_and_applicability(made):
    shares = Revision.open(made).manifest["change_shares"]
    assert len(shares) == sum(
        len(s)
        for s in (
            {*CASELESS["SemRel2024"], "afr", "eng", "hau", "ind", "kin"},
            {*CASELESS["MasakhaNEWS"], *"eng fra hau ibo lin lug orm pcm run sna som swa xho yor".split()},
        )
    ) * len(RULES)
    caps = {(e["dataset"], e["subset"]): e for e in shares if e["transformation"] == "random_capitalisation"}
    for (dataset, subset), entry in caps.items():
        assert entry["applicable"] is (subset not in CASELESS[dataset]), entry
        assert (entry["changed"] == 0) is (subset in CASELESS[dataset]), entry
    arq = next(
        e
        for e in shares
        if (e["dataset"], e["transformation"], e["subset"]) == ("SemRel2024", "punctuation_casing_loss", "arq")
    )
    assert arq["applicable"] and arq["share"] < APPLIED_SHARE  # applicable, yet barely changed: the flag's case


def test_not_applicable_subsets_are_left_out_of_the_figure_and_counted(card):
    data, _ = card
    for dataset, caseless in CASELESS.items():
        entry = _entry(data, dataset, "random_capitalisation")
        left = {e["subset"]: e["reason"] for e in entry["left_out"]}
        assert left == dict.fromkeys(caseless, "not_applicable")
        assert entry["subsets_scored"] == entry["subsets_total"] - len(caseless) and entry["shares_from"] == "manifest"
    punctuation = _entry(data, "SemRel2024", "punctuation_casing_loss")
    assert {e["subset"]: e["reason"] for e in punctuation["left_out"]}.get("arq") == "mostly_unchanged"
    typos = _entry(data, "SemRel2024", "keyboard_typos")  # every script of SemRel2024 has a layout in version 2
    assert typos["left_out"] == [] and typos["subsets_scored"] == typos["subsets_total"] == 12


def test_the_figure_is_the_original_plus_the_mean_change_over_the_subsets_kept(card):
    data, _ = card
    moved = 0
    for entry in data["coverage"]:
        dataset, rule = entry["dataset"], entry["transformation"]
        scores = {(r["transformation"], r["subset"]): r["value"] for r in data["scores"] if r["dataset"] == dataset}
        subsets = [s["subset"] for s in entry["subsets"]]
        assert {s for t, s in scores if t == rule} == {"all", *subsets}  # the scorer's subsets are the records'
        out = {e["subset"] for e in entry["left_out"]}
        kept = [s for s in subsets if s not in out]
        plain = sum(scores[rule, s] for s in subsets) / len(subsets)
        if not out:  # nothing left out: mteb's mean over every subset
            assert scores[rule, "all"] == pytest.approx(plain, abs=1e-12)
            continue
        change = sum(scores[rule, s] - scores["original", s] for s in kept) / len(kept)
        assert scores[rule, "all"] == pytest.approx(scores["original", "all"] + change, abs=1e-12)
        moved += scores[rule, "all"] != pytest.approx(plain, abs=1e-9)
        for subset in out & CASELESS[dataset]:  # unchanged texts score exactly the Original: what was left out
            assert scores[rule, subset] == scores["original", subset]
    assert moved  # a figure that left subsets out differs from the mean over all of them


def test_mostly_unchanged_variants_are_flagged(card):
    data, markdown = card
    flagged = {(f["dataset"], f["transformation"]) for f in data["flags"] if f["code"] == "mostly_unchanged"}
    expected = {(c["dataset"], c["transformation"]) for c in data["coverage"] if c["changed_share"] < APPLIED_SHARE}
    assert flagged == expected
    left = {(f["dataset"], f["transformation"]) for f in data["flags"] if f["code"] == "subsets_left_out"}
    assert ("SemRel2024", "random_capitalisation") in left and ("MasakhaNEWS", "random_capitalisation") in left
    assert "`mostly_unchanged`" in markdown or not flagged


def test_the_markdown_states_on_how_many_subsets_each_figure_rests(card):
    data, markdown = card
    entry = _entry(data, "SemRel2024", "random_capitalisation")
    assert f"{entry['subsets_scored']} of {entry['subsets_total']}" == "5 of 12"
    section = markdown.split("## What each figure rests on", 1)[1]
    row = next(line for line in section.splitlines() if "SemRel2024" in line and "random_capitalisation" in line)
    assert "5 of 12" in row and "amh" in row and "not applicable" in row, row


def test_a_revision_without_recorded_shares_is_counted_from_its_texts(made, card, tmp_path):
    """As noise-1339: the same subsets are left out, found from the texts; the figures do not move."""
    data, _ = card
    folder = tmp_path / "old"
    shutil.copytree(made, folder)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    del manifest["change_shares"]
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    reseal(folder, label="old")
    old = publish(scored_part(None, planned=NAMES, store=_store(folder, tmp_path), ref="old"), tmp_path / "out")
    for ours, theirs in zip(data["coverage"], old["coverage"]):
        assert theirs["shares_from"] == "texts"
        assert {e["subset"] for e in theirs["left_out"]} == {e["subset"] for e in ours["left_out"]}
    assert [s for s in old["scores"]] == [s for s in data["scores"]]


def _claim_changed(shares: list) -> None:  # an unchanged subset claimed as wholly changed
    entry = next(e for e in shares if e["subset"] == "amh" and e["changed"] == 0)
    entry.update(changed=entry["items"], share=1.0)


def _claim_applicable(shares: list) -> None:  # a rule claimed to apply to a script without case
    next(e for e in shares if e["subset"] == "amh" and e["applicable"] is False).update(applicable=True, why_not=None)


def _claim_variant(shares: list) -> None:  # a variant the revision does not hold
    shares.append({**shares[0], "transformation": "numerisation"})


@pytest.mark.parametrize(
    ("tamper", "expected"),
    [
        (_claim_changed, "subset amh: changed is"),
        (_claim_applicable, "subset amh: applicable is True"),
        (_claim_variant, "numerisation_1339, which has no items file"),
    ],
    ids=["changed", "applicable", "variant"],
)
def test_verify_refuses_a_tampered_change_share_in_one_line(made, tmp_path, capsys, tamper, expected):
    folder = tmp_path / "bad"
    shutil.copytree(made, folder)
    shares = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["change_shares"]
    tamper(shares)
    reseal(folder, change_shares=shares, label="bad")  # every sha256 matches: only the recount can refuse it
    install(tmp_path / "store", folder)
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "bad"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert "change_shares" in err and expected in err, err


@pytest.fixture(scope="module")
def compared(card, tmp_path_factory) -> Path:
    """`hteb-score compare` of the card under two model names (coverage is the revision's, not the model's)."""
    data, _ = card
    folder = tmp_path_factory.mktemp("compared")
    for name in ("model-a", "model-b"):
        (folder / "cards" / name).mkdir(parents=True)
        copy = {**data, "model": {**data["model"], "model_id": name}}
        (folder / "cards" / name / "result_card.json").write_text(json.dumps(copy), encoding="utf-8")
    assert (
        main(
            [
                "compare",
                *(str(p) for p in sorted(folder.glob("cards/*/result_card.json"))),
                "--out",
                str(folder / "cmp"),
            ]
        )
        == 0
    )
    return folder


def test_the_comparison_states_on_how_many_subsets_each_noise_figure_rests(compared):
    rows = json.loads((compared / "cmp" / "comparison.json").read_text())["coverage"]["rows"]
    caps = next(r for r in rows if (r["dataset"], r["transformation"]) == ("SemRel2024", "random_capitalisation"))
    assert (caps["subsets_scored"], caps["subsets_total"], caps["models"]) == (5, 12, ["model-a", "model-b"])
    assert caps["flagged_unchanged"] and set(caps["left_out"]) == CASELESS["SemRel2024"]
    assert {(r["dataset"], r["transformation"]) for r in rows} == {(d, t) for d in NAMES for t in RULES}
    markdown = (compared / "cmp" / "comparison.md").read_text()
    line = next(
        x
        for x in markdown.split("## What each figure rests on")[1].splitlines()
        if "SemRel2024" in x and "random_capitalisation" in x
    )
    assert "5 of 12" in line and "mostly unchanged" in line, line
    page = (compared / "cmp" / "report.html").read_text()
    assert "<h2>What each figure rests on</h2>" in page and ">5 of 12</td>" in page


def test_hteb_score_tables_writes_the_noise_subsets_table(compared, capsys):
    page = compared / "findings.md"
    page.write_text("# Findings\n\n<!-- hteb:table noise-subsets cards -->\n<!-- /hteb:table -->\n", encoding="utf-8")
    assert main(["tables", str(page)]) == 0
    table = page.read_text(encoding="utf-8").split("-->\n", 1)[1]
    row = next(x for x in table.splitlines() if x.startswith("| SemRel2024 | random caps |"))
    assert "| 5 of 12 |" in row and "mostly unchanged" in row, row
    assert main(["tables", "--check", str(page)]) == 0
