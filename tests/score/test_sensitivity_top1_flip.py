"""Sensitivity's top-1 flip (issue 45; NevIR's question of a retrieval query): the twin keeps the original query's
top-1 document and the changed query loses it.

On hand-made embeddings whose top-1s are known (ties included); then on a real Sensitivity revision (the
`sensitivity` profile's negation pair on SciFact, whose queries the rules edit, and STS16) through the command line:
a model deaf to negation (tests/lexical_encoder.py) reads the original, changed and twin query of every item as one
text, so every top-1 stays and its flip is exactly 0; all-MiniLM-L6-v2 moves the top-1 of some changed queries and
of almost no twin; the null models sit at chance, about 0. Per-dataset parts merge into the whole run's figures, and a
part written before the top-1s were recorded merges into a card without them."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from hteb_contract.errors import HtebError
from hteb_score.report.card.card_sections import sensitivity_lines
from hteb_score.scoring import sensitivity
from hteb_score.scoring.part_checks import check_part
from hteb_score.scoring.parts import PART_FILE
from hteb_score.scoring.sensitivity import item_row, sensitivity_block, top1_flip, top1_kept
from models import minilm_path
from refusal import run
from scored_parts import scored_part

LEXICAL = Path(__file__).resolve().parents[1] / "lexical_encoder.py"
PAIR = ("negation_flip", "negation_contraction")
RULES = "negation_flip,negation_contraction"


def test_top1_kept_on_known_embeddings_with_ties_to_the_earlier_document():
    docs = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 2.0, 0.0]])  # 1 and 3 tie everywhere
    original = np.array([[1.0, 0.2, 0.0], [0.1, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    twin = np.array([[3.0, 0.1, 0.0], [0.0, 1.0, 0.3], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    changed = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 1.0, 1.1], [0.2, 0.2, 0.0]])
    # query 0: twin keeps document 0, changed moves to 2 (a correct flip); query 1: all three find document 1
    # (1 ties with 3, the earlier wins); query 2: the twin moves to 1, the changed query stays on 2; query 3: the
    # original ties documents 0 and 1 (and 3) at 0.707: 0 is its top-1, and a scaled copy of it ties the same way
    assert top1_kept(original, twin, changed, docs) == [(True, False), (True, True), (False, True), (True, True)]
    # a tie broken by position, not by float noise: the same vectors scaled agree to 9 decimals
    assert top1_kept(original * 3, twin * 0.5, changed * 7, docs * 11) == top1_kept(original, twin, changed, docs)


def _rows(tops: list[tuple[bool, bool]], dataset: str = "SciFact") -> list[dict[str, Any]]:
    return [item_row(f"{dataset}{i}", dataset, PAIR, 1, "eng", 0.9, 0.8, 0.5, top) for i, top in enumerate(tops)]


@settings(max_examples=40, deadline=None)
@given(tops=st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=50))
def test_the_flip_is_the_share_of_items_the_twin_keeps_and_the_changed_query_loses_with_scipys_interval(tops):
    rows = _rows(tops)
    figure = top1_flip(rows + rows[:3])  # an item seen twice counts once
    flips = sum(keeps and not stays for keeps, stays in tops)
    oracle = stats.binomtest(flips, len(tops)).proportion_ci(confidence_level=sensitivity.CONFIDENCE, method="exact")
    assert figure == {
        "items": len(tops),
        "share": pytest.approx(flips / len(tops), abs=1e-6),
        "ci": pytest.approx([oracle.low, oracle.high], abs=1e-6),
        "twin_keeps": pytest.approx(np.mean([k for k, _ in tops]), abs=1e-6),
        "changed_loses": pytest.approx(np.mean([not s for _, s in tops]), abs=1e-6),
    }


def test_the_block_carries_the_flip_for_retrieval_rows_only_and_the_section_prints_it():
    rows = _rows([(True, False), (True, True), (False, False)])
    rows += [item_row(f"s{i}", "STS16", PAIR, 1, "eng", 0.9, 0.8, 0.5) for i in range(4)]  # not a retrieval query
    block = sensitivity_block(rows)
    assert block is not None
    datasets = {d["dataset"]: d for d in block["datasets"]}
    assert "top1_flip" not in datasets["STS16"] and "top1_flip" not in block["pairs"][0]
    flip = datasets["SciFact"]["top1_flip"]
    assert (flip["items"], flip["share"], flip["twin_keeps"], flip["changed_loses"]) == (
        3,
        0.333333,
        0.666667,
        0.666667,
    )
    (language,) = [d for d in block["languages"] if d["dataset"] == "SciFact"]
    assert language["top1_flip"] == flip
    lines = "\n".join(sensitivity_lines(block))
    assert (
        f"| negation_flip | SciFact | 3 | 0.333 | [{flip['ci'][0]:.3f}, {flip['ci'][1]:.3f}] | 0.667 | 0.667 |" in lines
    )
    assert "Chance is about 0, not 0.5" in lines and "top1_flip" in block["method"]
    assert "Retrieval queries" not in "\n".join(sensitivity_lines(sensitivity_block(rows[3:])))


def _part_with(row: dict[str, Any]) -> Any:
    part = scored_part(["STSBenchmark"])
    (unit,) = part.units
    return dataclasses.replace(part, units=[dataclasses.replace(unit, sensitivity=[row])])


@pytest.mark.parametrize("tops", [(True, None), (None, False), (1, 0), ("yes", True)])
def test_a_part_whose_top1_outcomes_are_not_two_booleans_is_refused(tops):
    row = item_row("i", "STSBenchmark", ("paraphrasing", "x"), 1339, "eng", 0.5, 0.4, 0.3, (True, True))
    check_part(_part_with(row), "part x")
    row["twin_keeps_top1"], row["changed_keeps_top1"] = tops
    with pytest.raises(HtebError, match=r"^part x: unit 'STSBenchmark': sensitivity twin_keeps_top1, changed_keeps"):
        check_part(_part_with(row), "part x")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> str:
    """The negation pair on STS16 and on SciFact, whose corpus is narrowed to the documents its queries' judgements
    name (283 of 5,183: a corpus a model embeds in seconds, the same queries and judgements)."""
    from hteb_generate.transform.sensitivity import wordnet_dir

    if not (wordnet_dir() / "data.adj").is_file():  # the rules' definitions hash covers WordNet's adjectives
        pytest.skip("Debian's wordnet-base is not installed (.ci/run installs it)")
    from hteb_generate.run.pipeline import run as generate
    from hteb_generate.setup.config import build_config

    tmp = tmp_path_factory.mktemp("top1-flip-revision")
    data = tmp / "data"
    (data / "SciFact").mkdir(parents=True)
    os.symlink(shared_data / "STS16", data / "STS16")
    source = shared_data / "SciFact"
    for name in ("dataset.json", "queries.jsonl", "qrels.jsonl"):
        (data / "SciFact" / name).write_bytes((source / name).read_bytes())
    judged = {str(json.loads(line)["doc_id"]) for line in (source / "qrels.jsonl").open(encoding="utf-8")}
    corpus = [
        line for line in (source / "corpus.jsonl").open(encoding="utf-8") if str(json.loads(line)["id"]) in judged
    ]
    (data / "SciFact" / "corpus.jsonl").write_text("".join(corpus), encoding="utf-8")
    cfg = build_config(
        seed="1339",
        profile="sensitivity",
        overrides={
            "datasets": "STS16,SciFact",
            "transformations": RULES,
            "store": str(tmp / "store"),
            "cache_dir": str(tmp / "cache"),
            "data_dir": str(data),
            "manifest_md": str(tmp / "MANIFEST.md"),
        },
    )
    generate(cfg, log=lambda message: None)
    return cfg.store


def _score(store: str, out: Path, *model: object, datasets: str = "SciFact", part: str | None = None) -> Path:
    where = ("--part", part) if part else ()
    code, _, err = run(
        *model,
        "--store",
        store,
        "--revision",
        "sensitivity-1339",
        "--datasets",
        datasets,
        *where,
        "--out",
        out,
        "--quiet",
    )
    assert code == 0 and "Traceback" not in err, err
    return out


def _flip(folder: Path) -> dict[str, Any]:
    card = json.loads((folder / "result_card.json").read_text(encoding="utf-8"))
    (figure,) = [d for d in card["sensitivity"]["datasets"] if d["dataset"] == "SciFact"]
    return figure


@pytest.mark.slow
def test_a_model_deaf_to_negation_never_flips_and_a_real_model_does(store, tmp_path):
    deaf = _flip(_score(store, tmp_path / "deaf", f"{LEXICAL}:NegationDeafEncoder", "--encoder", "python"))
    # it reads the original, the changed and the twin query of every item as one text (the negation cue removed,
    # the contraction expanded): every top-1 stays, so the twin keeps it and the changed query never loses it
    assert deaf["items"] == 28 and deaf["accuracy"] == 0.5
    assert deaf["top1_flip"] == {
        "items": 28,
        "share": 0.0,
        "ci": [0.0, pytest.approx(0.123436)],
        "twin_keeps": 1.0,
        "changed_loses": 0.0,
    }
    minilm = _flip(_score(store, tmp_path / "minilm", minilm_path()))
    flip = minilm["top1_flip"]
    assert flip["items"] == 28 and flip["twin_keeps"] > 0.9  # a contraction seldom moves its top-1
    assert 0 < flip["share"] <= flip["changed_loses"] < 0.5  # a negated claim mostly finds the same abstract
    markdown = (tmp_path / "minilm" / "result_card.md").read_text(encoding="utf-8")
    assert f"| negation_flip | SciFact | 28 | {flip['share']:.3f} |" in markdown


@pytest.mark.parametrize("model", ["hteb:random?norm=10", "hteb:constant"])
def test_a_null_model_flips_at_chance_about_0(store, tmp_path, model):
    flip = _flip(_score(store, tmp_path / "card", model))["top1_flip"]
    assert flip["items"] == 28 and flip["share"] < 0.1
    if model == "hteb:constant":  # every document a tie for every query: all find the first, none loses it
        assert (flip["share"], flip["twin_keeps"], flip["changed_loses"]) == (0.0, 1.0, 0.0)
    else:  # a random twin finds the original's top-1 about once in 283
        assert flip["twin_keeps"] < 0.1 and flip["changed_loses"] > 0.9


def test_parts_merge_into_the_whole_runs_flip_and_an_older_part_into_a_card_without_it(store, tmp_path):
    model = (f"{LEXICAL}:LexicalEncoder", "--encoder", "python")
    both = "STS16,SciFact"
    whole = _score(store, tmp_path / "whole", *model, datasets=both)
    parts = [_score(store, tmp_path / name, *model, datasets=both, part=name) for name in ("SciFact", "STS16")]
    code, _, err = run("merge", *parts, "--out", tmp_path / "merged")
    assert code == 0, err
    expected = json.loads((whole / "result_card.json").read_text(encoding="utf-8"))["sensitivity"]
    merged = json.loads((tmp_path / "merged" / "result_card.json").read_text(encoding="utf-8"))["sensitivity"]
    assert merged == expected and "top1_flip" in _flip(whole)
    assert [d["dataset"] for d in expected["datasets"] if "top1_flip" in d] == ["SciFact"]
    # a SciFact part written before the top-1s were recorded: its rows lack both columns
    file = tmp_path / "SciFact" / PART_FILE
    data = json.loads(file.read_text(encoding="utf-8"))
    for unit in data["units"]:
        for column in ("twin_keeps_top1", "changed_keeps_top1"):
            del unit["sensitivity"][column]
    file.write_text(json.dumps(data), encoding="utf-8")
    code, _, err = run("merge", *parts, "--out", tmp_path / "older")
    assert code == 0, err
    older = json.loads((tmp_path / "older" / "result_card.json").read_text(encoding="utf-8"))["sensitivity"]
    without = [{k: v for k, v in d.items() if k != "top1_flip"} for d in expected["datasets"]]
    assert older["datasets"] == without and older["pairs"] == expected["pairs"]
    assert "Retrieval queries" not in (tmp_path / "older" / "result_card.md").read_text(encoding="utf-8")
