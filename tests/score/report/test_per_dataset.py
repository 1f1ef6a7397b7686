"""`hteb-score compare` on each dataset, over its items (report/compare/per_dataset.py), end to end: a real
revision (STS, pair classification, held-out classification, clustering; an axis of each of the paper's
three, so the HTEB total too), scored by the real scorer with a real model and the null model, compared
by the real command. A real model is separated from random vectors on every dataset; a model against
a second run of itself on none; outcomes that do not give their card's figures are refused."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hteb_contract.stores.local import LocalStore
from hteb_score.report.card.outputs import OUTCOMES_FILE
from hteb_score.report.compare.inputs import load_card
from hteb_score.report.compare.per_dataset import per_dataset_tests
from models import minilm_path
from refusal import assert_one_line, run
from revision_factory import build_revision

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("per_dataset_revision")]

DATASETS = ["STS16", "TwitterSemEval2015", "TwentyNewsgroups", "IsiZuluNews"]
#: all-MiniLM-L6-v2 knows little isiZulu (held out, 41% on the whole dataset against a majority share of 39%):
#: whether 120 rows show its lead depends on the column. On the others it is far ahead of random vectors.
KNOWN = sorted(set(DATASETS) - {"IsiZuluNews"})
TRANSFORMATIONS = ("paraphrasing", "expansion", "translation")  # one of each paper axis: the HTEB total exists
COLUMNS = {"original", "lexical", "length", "language", "hteb"}


@pytest.fixture(scope="module")
def cards(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Result cards on one revision: all-MiniLM-L6-v2 twice (two runs under two names), random vectors."""
    root = tmp_path_factory.mktemp("per_dataset")
    build_revision(root / "rev", shared_data, DATASETS, label="items-1", rows=120, transformations=TRANSFORMATIONS)
    LocalStore(root / "store").publish(root / "rev")
    found = {}
    for name, model in (("minilm", minilm_path()), ("minilm-again", minilm_path()), ("random", "hteb:random")):
        out = root / name
        # a null model names itself; one backend for both runs of the real model (auto picks by measured speed)
        named = () if model.startswith("hteb:") else ("--model-name", name, "--backend", "torch")
        code, _, err = run(model, *named, "--store", root / "store", "--revision", "items-1", "--out", out, "--quiet")
        assert code == 0, err
        found[name] = out / "result_card.json"
    return found


def _compare(tmp_path: Path, *cards: Path) -> dict:
    code, _, err = run("compare", *cards, "--out", tmp_path / "cmp")
    assert code == 0, err
    return json.loads((tmp_path / "cmp" / "comparison.json").read_text())


def _pair(comparison: dict, column: str) -> dict:
    (pair,) = comparison["pairwise"]["columns"][column]["pairs"]
    return pair


def test_a_real_model_is_separated_from_random_vectors_on_every_dataset(cards, tmp_path):
    comparison = _compare(tmp_path, cards["minilm"], cards["random"])
    assert set(comparison["pairwise"]["columns"]) == COLUMNS
    for column in COLUMNS:
        pair = _pair(comparison, column)
        assert [t["dataset"] for t in pair["per_dataset"]] == sorted(DATASETS)
        assert pair["first"] == "minilm"
        assert set(KNOWN) <= set(pair["replicability"]["first_ahead"]), (column, pair["per_dataset"])
        assert pair["replicability"]["second_ahead"] == []
        for test in pair["per_dataset"]:
            low, high = test["ci"]
            assert low <= test["difference"] <= high and 0 < test["p"] <= test["p_holm"]
            assert test["separated"] == (test["p_holm"] < 0.05)
    assert "Model against model on each dataset" in (tmp_path / "cmp" / "comparison.md").read_text()


def test_a_model_against_a_second_run_of_itself_is_separated_on_none(cards, tmp_path):
    comparison = _compare(tmp_path, cards["minilm"], cards["minilm-again"])
    for column in COLUMNS:
        pair = _pair(comparison, column)
        assert pair["replicability"]["separated"] == 0
        assert {t["difference"] for t in pair["per_dataset"]} == {0.0} and {t["p"] for t in pair["per_dataset"]} == {
            1.0
        }


def test_the_differences_are_the_cards_own(cards, tmp_path):
    """Before any draw, each column's figure on the items must be the card's: the tested difference is the
    difference of the two cards' per-dataset figures."""
    comparison = _compare(tmp_path, cards["minilm"], cards["random"])
    rows = {}
    for name in ("minilm", "random"):
        card = json.loads(cards[name].read_text())
        rows[card["model"]["model_id"]] = {r["dataset"]: r for r in card["aggregates"]["per_dataset"]}
    pair = _pair(comparison, "original")
    for test in pair["per_dataset"]:
        first, second = rows[pair["first"]][test["dataset"]], rows[pair["second"]][test["dataset"]]
        assert test["difference"] == pytest.approx(first["original"] - second["original"], abs=1e-3)
        assert test["items"] == 120


def test_the_verdicts_are_the_same_on_one_thread_as_on_several(cards):
    """The datasets are tested on one thread per core: each draws its own items, so the verdicts, every float
    of them, are those of one thread."""
    models = [load_card(cards[name]) for name in ("minilm", "random", "minilm-again")]
    minilm, random, again = (m.model for m in models)
    pairs = {column: [(minilm, random), (minilm, again)] for column in sorted(COLUMNS)}
    one, several = (per_dataset_tests(models, pairs, DATASETS, threads=n) for n in (1, 3))
    assert {c: [t.to_json() for t in v] for c, v in several.items()} == {
        c: [t.to_json() for t in v] for c, v in one.items()
    }
    assert all(len(t.tests) == len(DATASETS) for v in one.values() for t in v)


def test_outcomes_that_are_not_the_cards_are_refused_in_one_line(cards, tmp_path):
    forged = tmp_path / "forged"
    forged.mkdir()
    for path in cards["minilm"].parent.iterdir():
        if path.is_file():
            (forged / path.name).write_bytes(path.read_bytes())
    written = pq.read_table(forged / OUTCOMES_FILE)
    table = written.to_pandas()
    sts = (table["dataset"] == "STS16") & (table["transformation"] == "original")
    table.loc[sts, "predicted"] = table.loc[sts, "predicted"].to_numpy()[::-1]  # another model's similarities
    pq.write_table(pa.Table.from_pandas(table, schema=written.schema, preserve_index=False), forged / OUTCOMES_FILE)
    code, _, err = run("compare", forged / "result_card.json", cards["random"], "--out", tmp_path / "cmp")
    assert_one_line(code, err, "outcomes.parquet", "STS16", "not this card's")


def test_a_card_without_outcomes_is_compared_as_before_and_says_why_untested(cards, tmp_path):
    bare = tmp_path / "bare"
    bare.mkdir()
    for path in cards["random"].parent.iterdir():
        if path.is_file() and path.name != OUTCOMES_FILE:
            (bare / path.name).write_bytes(path.read_bytes())
    comparison = _compare(tmp_path, cards["minilm"], bare / "result_card.json")
    pair = comparison["pairwise"]["columns"]["original"]["pairs"][0]
    assert "per_dataset" not in pair and "per_dataset_method" not in comparison["pairwise"]


@pytest.mark.parametrize("seed", range(20))
def test_the_per_dataset_section_escapes_every_name_it_prints(seed):
    """Model and dataset names come from cards and files other tools wrote: generated names of Markdown's
    markup characters, line breaks and pipes stay one cell each, escaped as every other section escapes them."""
    import random

    from hteb_contract.common.escape import md_text
    from hteb_score.report.compare.per_dataset import DatasetTest, PairDatasets, markdown

    rng = random.Random(seed)
    alphabet = "ab|*_`[]()<>#\\!~\n\r\t&=+-"

    def name() -> str:
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12)))

    first, second, dataset = name(), name(), name()
    pair = PairDatasets(first, second, [DatasetTest(dataset, 3.5, (1.0, 6.0), 0.001, 0.002, 100)])
    lines = markdown({"original": [pair]}, str, md_text)
    (row,) = [line for line in lines if line.startswith("| ") and "of 1" in line]
    assert row.count("|") - row.count("\\|") == 6  # five cells, however the names read
    assert md_text(first) in row and md_text(second) in row and md_text(dataset) in row
    assert "\n" not in row and "\r" not in row
