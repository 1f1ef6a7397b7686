"""Sensitivity's hard twins (issue 45, `hteb-score --hard-twins-from`): each minimal pair asked again with an LLM
revision's meaning-keeping rewrite of the same original text as the twin.

On real data: a Sensitivity revision of TwitterSemEval2015 (negation and number pairs, full size) made here, and the
bundled sample-1339 (SmolLM2's paraphrases of four items per dataset of the same sources) as the second revision.
The hard figure equals a hand computation from all-MiniLM-L6-v2's embeddings (items matched by original text, read
with hteb_contract's readers, cosines by numpy, the interval scipy's); the null models read 0.5 and blind; a run
without the option writes the card it wrote before; runs with and without a second revision never merge; bad
second revisions are one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy import stats

from hteb_contract.stores import open_store
from hteb_score import DEFAULT_STORE, SAMPLE_REVISION
from models import minilm_path
from pairs_said import pairs_said
from refusal import run

DATASET = "TwitterSemEval2015"
RULES = "negation_flip,negation_contraction,number_change,number_words"
HARD = ("paraphrasing", "backtranslation", "style_change")


def _generate(tmp: Path, data: Path, profile: str, transformations: str) -> str:
    from hteb_generate.run.pipeline import run as generate
    from hteb_generate.setup.config import build_config

    overrides = {
        "datasets": DATASET,
        "transformations": transformations,
        "store": str(tmp / "store"),
        "cache_dir": str(tmp / "cache"),
        "data_dir": str(data),
        "manifest_md": str(tmp / "MANIFEST.md"),
    }
    generate(build_config(seed="1339", profile=profile, overrides=overrides), log=lambda message: None)
    return str(tmp / "store")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> str:
    """sensitivity-1339 of TwitterSemEval2015 (the negation and number pairs, 838 pairs of tweets)."""
    from hteb_generate.transform.sensitivity import wordnet_dir

    if not (wordnet_dir() / "data.adj").is_file():  # the rules' definitions hash covers WordNet's adjectives
        pytest.skip("Debian's wordnet-base is not installed (.ci/run installs it)")
    return _generate(tmp_path_factory.mktemp("hard-twins"), shared_data, "sensitivity", RULES)


def _score(store: str, out: Path, *model: object, hard: str | None = "sample-1339", part: str | None = None) -> Path:
    given = ("--hard-twins-from", hard, "--hard-twins-store", DEFAULT_STORE) if hard else ()
    where = ("--part", part) if part else ()
    code, _, err = run(
        *model, "--store", store, "--revision", "sensitivity-1339", *given, *where, "--out", out, "--quiet"
    )
    assert code == 0 and "Traceback" not in err, err
    return out


def _card(folder: Path) -> dict[str, Any]:
    return json.loads((folder / "result_card.json").read_text(encoding="utf-8"))


def _figure(card: dict[str, Any], pair: str) -> dict[str, Any]:
    (figure,) = [d for d in card["sensitivity"]["datasets"] if d["pair"] == pair and d["dataset"] == DATASET]
    return figure


def _hand_triples(store: str, pair: tuple[str, str]) -> set[tuple[str, str, str]]:
    """The (original, changed, hard twin) items of `pair`, matched by hand: an item both rules edited, whose
    original (same table and subset) sample-1339 rewrote without error, once per distinct rewrite."""
    revision = open_store(store).fetch("sensitivity-1339", datasets=[DATASET])
    sample = open_store(DEFAULT_STORE).fetch("sample-1339", datasets=[DATASET])
    rewrites: dict[tuple[str, str, str], set[str]] = {}
    for name in HARD:
        cols = sample.item_columns(DATASET, name, 1339)
        for table, subset, original, text, flawed in zip(
            cols.split, cols.subset, cols.original_text, cols.transformed_text, cols.with_errors
        ):
            if not flawed and text != original:
                rewrites.setdefault((table, subset, original), set()).add(text)
    changed, twin = (revision.item_columns(DATASET, name, 1339) for name in pair)
    twin_at = {ref: at for at, ref in enumerate(twin.refs())}
    triples = set()
    for at, ref in enumerate(changed.refs()):
        original, edit = changed.original_text[at], changed.transformed_text[at]
        if original in (edit, twin.transformed_text[twin_at[ref]]):
            continue
        triples |= {(original, edit, text) for text in rewrites.get((ref[0], changed.subset[at], original), ())}
    return triples


@pytest.mark.slow
def test_the_hard_figure_is_the_hand_computed_share_from_minilms_embeddings(store, tmp_path):
    from sentence_transformers import SentenceTransformer

    card = _card(_score(store, tmp_path / "minilm", minilm_path(), "--backend", "torch"))
    triples = sorted(_hand_triples(store, ("number_change", "number_words")))
    # matched by original text: most edited tweets are not among the sample's four items, and are not counted
    figure = _figure(card, "number_change")
    assert 0 < len(triples) < figure["items"]
    model = SentenceTransformer(minilm_path(), device="cpu")
    o, c, k = (model.encode([t[i] for t in triples]) for i in range(3))

    def cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.round(np.sum(a * b, axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)), 6)

    kept, moved = cos(o, k), cos(o, c)
    wins, ties = int(np.sum(kept > moved)), int(np.sum(kept == moved))
    decided = len(triples) - ties
    found = stats.binomtest(wins, decided).proportion_ci(confidence_level=0.95, method="exact")
    hard = figure["hard"]
    assert hard["items"] == len(triples) and hard["twins"] == sorted(HARD)
    assert hard["accuracy"] == pytest.approx((wins + ties / 2) / len(triples), abs=1e-6)
    expected_ci = [(bound * decided + ties / 2) / len(triples) for bound in (found.low, found.high)]
    assert hard["ci"] == pytest.approx(expected_ci, abs=1e-6)
    assert hard["blind"] == (hard["ci"][0] <= 0.5 <= hard["ci"][1])
    (pair,) = [p for p in card["sensitivity"]["pairs"] if p["pair"] == "number_change"]
    assert pair["hard"] == hard  # one dataset: the pair's figure is its dataset's
    (negation,) = [p for p in card["sensitivity"]["pairs"] if p["pair"] == "negation_flip"]
    assert negation["hard"]["items"] == len(_hand_triples(store, ("negation_flip", "negation_contraction")))
    assert card["dataset"]["hard_twins"]["label"] == "sample-1339"
    assert "hteb_sample_1339" in card["dataset"]["citation"] and "hteb_sensitivity_1339" in card["dataset"]["citation"]
    markdown = (tmp_path / "minilm" / "result_card.md").read_text(encoding="utf-8")
    row = f"| number_change | {DATASET} | {figure['accuracy']:.3f} | backtranslation, paraphrasing, style_change "
    assert row + f"| {hard['items']} | {hard['accuracy']:.3f} |" in markdown
    assert "hard twins (--hard-twins-from)" in markdown and "sample-1339" in markdown
    hard_accuracies = [p["hard"]["accuracy"] for p in card["sensitivity"]["pairs"] if p["hard"]["items"]]
    assert card["sensitivity"]["hard_overall"] == pytest.approx(np.mean(hard_accuracies), abs=1e-6)
    # the headline counts the pairs with a hard item by what their hard figures say; the mean follows
    with_hard = {p["pair"]: p["hard"] for p in card["sensitivity"]["pairs"] if p["hard"]["items"]}
    assert f"### Hard twins: {pairs_said(with_hard)} with a hard item\n" in markdown
    mean = markdown.split("Mean of the pairs' hard accuracies")[1].split("\n")[0]
    assert mean.endswith(f": {card['sensitivity']['hard_overall']:.3f}.")


@pytest.mark.parametrize("model", ["hteb:random?norm=10", "hteb:constant"])
def test_a_null_model_reads_the_hard_figure_blind(store, tmp_path, model):
    card = _card(_score(store, tmp_path / "card", model))
    for figure in card["sensitivity"]["pairs"] + card["sensitivity"]["datasets"] + card["sensitivity"]["languages"]:
        hard = figure["hard"]
        assert hard["items"] == 0 or hard["blind"] is True
        if model == "hteb:constant" and hard["items"]:  # every cosine 1: every item a tie
            assert (hard["accuracy"], hard["ci"]) == (0.5, [0.5, 0.5])
    assert _figure(card, "number_change")["hard"]["items"] > 0
    if model == "hteb:constant":
        assert card["sensitivity"]["hard_overall"] == 0.5


def test_a_run_without_the_option_writes_the_card_it_wrote_before(store, tmp_path):
    without = _card(_score(store, tmp_path / "without", "hteb:constant", hard=None))
    with_hard = _card(_score(store, tmp_path / "with", "hteb:constant"))
    assert "hard_twins" not in without["dataset"] and "hard" not in without["sensitivity"]["method"]
    stripped = {
        key: [{k: v for k, v in figure.items() if k != "hard"} for figure in value]
        if isinstance(value, list)
        else value
        for key, value in with_hard["sensitivity"].items()
        if key != "hard_overall"
    }
    stripped["method"] = {k: v for k, v in stripped["method"].items() if k not in ("hard", "hard_overall")}
    assert stripped == without["sensitivity"]
    assert with_hard["dataset"]["citation"].startswith(without["dataset"]["citation"] + "\n% the hard twins' revision")
    assert "Hard twins" not in (tmp_path / "without" / "result_card.md").read_text(encoding="utf-8")


def test_parts_with_another_hard_twin_revision_are_not_parts_of_one_run(store, tmp_path):
    parts = [
        _score(store, tmp_path / "with", "hteb:constant", part=DATASET),
        _score(store, tmp_path / "without", "hteb:constant", hard=None, part=DATASET),
    ]
    code, _, err = run("merge", *parts, "--out", tmp_path / "merged")
    assert code == 2 and "differ in dataset.hard_twins: " in err and "Traceback" not in err
    code, _, err = run("merge", parts[0], "--out", tmp_path / "one")
    assert code == 0, err
    assert "hard" in _figure(_card(tmp_path / "one"), "number_change")


@pytest.fixture(scope="module")
def other_revisions(tmp_path_factory: pytest.TempPathFactory, shared_data: Path, store: str) -> dict[str, str]:
    """A rules-only revision (Noise) in the Sensitivity revision's store, and a Sensitivity revision of the same
    dataset whose texts are other (every tweet upper-cased): no text of it is one of sample-1339's."""
    _generate(Path(store).parent, shared_data, "noise", "character_deletion")
    tmp = tmp_path_factory.mktemp("other-sources")
    folder = tmp / "data" / DATASET
    folder.mkdir(parents=True)
    (folder / "dataset.json").write_bytes((shared_data / DATASET / "dataset.json").read_bytes())
    rows = [json.loads(line) for line in (shared_data / DATASET / "test.jsonl").open(encoding="utf-8")]
    upper = [{**row, "sentence1": row["sentence1"].upper(), "sentence2": row["sentence2"].upper()} for row in rows]
    (folder / "test.jsonl").write_text("".join(json.dumps(row) + "\n" for row in upper), encoding="utf-8")
    return {"noise": store, "other": _generate(tmp, tmp / "data", "sensitivity", RULES)}


@pytest.mark.parametrize(
    ("where", "ref", "hard_store", "message"),
    [
        ("noise", "sample-1339", "nowhere", r"--hard-twins-store"),
        ("noise", "nope-1", None, r"^--hard-twins-from nope-1: .*nope-1"),
        ("noise", "noise3-1339", "run", r"^--hard-twins-from noise3-1339: revision noise3-1339 is not an LLM revision"),
        ("noise", "sensitivity-1339", "run", r"^--hard-twins-from sensitivity-1339: .* is a Sensitivity revision"),
        ("other", "sample-1339", None, r"^--hard-twins-from sample-1339: none of its TwitterSemEval2015 texts"),
    ],
)
def test_a_bad_hard_twin_revision_is_a_one_line_refusal(other_revisions, tmp_path, where, ref, hard_store, message):
    import re

    given = {"run": other_revisions[where], None: DEFAULT_STORE, "nowhere": str(tmp_path / "no-store")}[hard_store]
    code, out, err = run(
        "hteb:constant",
        "--store",
        other_revisions[where],
        "--revision",
        "sensitivity-1339",
        "--hard-twins-from",
        ref,
        "--hard-twins-store",
        given,
        "--out",
        tmp_path / "out",
        "--quiet",
    )
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert re.search(message, lines[0].removeprefix("hteb-score: error: ")), lines[0]
    assert not (tmp_path / "out").exists()


def test_hard_twins_need_a_sensitivity_revision_and_their_store_their_revision(tmp_path, shared_data):
    for args, message in (
        (("--hard-twins-store", DEFAULT_STORE), "--hard-twins-store names the store of --hard-twins-from"),
        (("--hard-twins-from", "sample-1339", "--source-dir", shared_data), "drop --source-dir"),
        (("--hard-twins-from", "sample-1339"), f"revision {SAMPLE_REVISION} has no minimal pairs"),
    ):
        code, _, err = run("hteb:constant", *args, "--out", tmp_path / "out", "--quiet")
        assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
