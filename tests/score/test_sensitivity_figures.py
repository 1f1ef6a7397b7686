"""Sensitivity (issue 45): the card's minimal-pair figures, scored from a real Sensitivity revision (the
`sensitivity` profile on STS16 at full size, negation and number pairs) through the command line.

Known groups: a model of random vectors (at norm 10: the figure is scale-free) and a constant model are blind on
every pair (0.5; the constant model exactly, every item a tie); a hashed bag of words (tests/lexical_encoder.py)
and the same model deaf to negation (cues removed, contractions expanded before hashing) agree on the number pair
within 0.02, and the deaf one is exactly blind on negation; token overlap alone is not sensitivity (the bag of
words is inverted on the number pair: a digit changed is one token, the same number in words two). The figure's interval is scipy's bootstrap (the
oracle), its accuracy the plain share, and the Markdown section prints the JSON's numbers."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from scipy import stats

from hteb_contract.errors import HtebError
from hteb_score.report.card.card_sections import sensitivity_lines
from hteb_score.scoring import sensitivity
from hteb_score.scoring.part_checks import check_part
from hteb_score.scoring.row_checks import COSINE_EPS
from hteb_score.scoring.sensitivity import item_row, sensitivity_block, summarise
from pairs_said import pairs_said
from refusal import run
from scored_parts import scored_part

LEXICAL = Path(__file__).resolve().parents[1] / "lexical_encoder.py"
RULES = "negation_flip,negation_contraction,number_change,number_words"
PAIR = ("negation_flip", "negation_contraction")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> str:
    from hteb_generate.transform.sensitivity import wordnet_dir

    if not (wordnet_dir() / "data.adj").is_file():  # the rules' definitions hash covers WordNet's adjectives
        pytest.skip("Debian's wordnet-base is not installed (.ci/run installs it)")
    from hteb_generate.run.pipeline import run as generate
    from hteb_generate.setup.config import build_config

    tmp = tmp_path_factory.mktemp("sensitivity-revision")
    cfg = build_config(
        seed="1339",
        profile="sensitivity",
        overrides={
            "datasets": "STS16",
            "transformations": RULES,
            "store": str(tmp / "store"),
            "cache_dir": str(tmp / "cache"),
            "data_dir": str(shared_data),
            "manifest_md": str(tmp / "MANIFEST.md"),
        },
    )
    generate(cfg, log=lambda message: None)
    return cfg.store


MODELS = {
    "random": ("hteb:random?norm=10",),
    "constant": ("hteb:constant",),
    "lexical": (f"{LEXICAL}:LexicalEncoder", "--encoder", "python"),
    "deaf": (f"{LEXICAL}:NegationDeafEncoder", "--encoder", "python"),
}


@pytest.fixture(scope="module")
def cards_folder(store: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Each model's card on the revision, in a folder of its name (as `make sensitivity-findings` lays them)."""
    out = tmp_path_factory.mktemp("sensitivity-cards")
    for name, model in MODELS.items():
        code, _, err = run(*model, "--store", store, "--revision", "sensitivity-1339", "--out", out / name, "--quiet")
        assert code == 0 and "Traceback" not in err, err
    return out


@pytest.fixture(scope="module")
def cards(cards_folder: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for name in MODELS:
        found[name] = json.loads((cards_folder / name / "result_card.json").read_text(encoding="utf-8"))
        found[name]["markdown"] = (cards_folder / name / "result_card.md").read_text(encoding="utf-8")
    return found


def _pairs(card: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {p["pair"]: p for p in card["sensitivity"]["pairs"]}


@pytest.mark.parametrize("model", ["random", "constant"])
def test_a_null_model_is_blind_on_every_pair(cards, model):
    pairs = _pairs(cards[model])
    assert set(pairs) == {"negation_flip", "number_change"}
    for figure in pairs.values():
        assert figure["items"] > 100 and figure["blind"] is True, figure
    if model == "constant":  # every item a tie
        assert all(p["accuracy"] == 0.5 and p["ci"] == [0.5, 0.5] for p in pairs.values())
        assert cards[model]["sensitivity"]["overall"] == 0.5


def test_a_model_deaf_to_negation_is_blind_on_it_and_unchanged_elsewhere(cards):
    lexical, deaf = _pairs(cards["lexical"]), _pairs(cards["deaf"])
    assert deaf["negation_flip"]["accuracy"] == 0.5 and deaf["negation_flip"]["blind"] is True
    assert lexical["negation_flip"]["blind"] is False  # token overlap reads the cue, one way or the other
    assert deaf["number_change"]["items"] == lexical["number_change"]["items"]
    assert abs(deaf["number_change"]["accuracy"] - lexical["number_change"]["accuracy"]) <= 0.02
    # token overlap loses the number pair: "25" -> "35" changes one token, "twenty-five" two (the twin's point)
    assert lexical["number_change"]["accuracy"] < 0.5 and not lexical["number_change"]["blind"]


def test_the_sensitivity_figures_stand_apart_from_the_total(cards):
    card = cards["lexical"]
    assert card["aggregates"]["hteb_total"] is None  # no paper axis in this revision, and Sensitivity is never one
    assert [a["name"] for a in card["taxonomy"]["axes"]][-1] == "sensitivity"
    # no axis mean of changed and kept rules (a drop under a change is the model listening): each rule on its own
    assert card["aggregates"]["per_axis"] == {} and card["statistics"]["per_axis"] == {}
    assert {"negation_flip", "negation_contraction"} <= set(card["aggregates"]["per_transformation"])
    # the headline is what the pairs say together, counted here from the JSON; the mean follows, said unweighted
    pairs = card["sensitivity"]["pairs"]
    said = pairs_said({p["pair"]: p for p in pairs})
    assert f"## Sensitivity (minimal pairs; not in the HTEB total): {said}\n" in card["markdown"]
    items = sorted(p["items"] for p in pairs)
    assert items[0] != items[-1] and (
        f"Mean of the pairs' accuracies (unweighted: a pair of {items[0]:,} items weighs as much as one of "
        f"{items[-1]:,}): {card['sensitivity']['overall']:.3f}." in card["markdown"]
    )
    for figure in card["sensitivity"]["pairs"]:
        assert f"| **{figure['pair']}** | all | {figure['items']} | {figure['accuracy']:.3f} |" in card["markdown"]


def test_the_findings_tables_are_the_cards_figures_with_the_chance_rows_last(cards_folder, cards):
    from hteb_score.report.site.findings import update_tables

    page = "\n".join(
        f"<!-- hteb:table {table} {cards_folder.name} -->\nstale\n<!-- /hteb:table -->"
        for table in ("sensitivity-models", "sensitivity-datasets")
    )
    written = update_tables(page, cards_folder.parent)
    rows = [line for line in written.splitlines() if line.startswith("| ") and "---" not in line]
    named = [line.split(" | ")[0].removeprefix("| ") for line in rows[1 : 1 + len(MODELS)]]
    real = sorted(cards[n]["model"]["model_id"].rsplit("/", 1)[-1] for n in ("lexical", "deaf"))
    assert named[:2] == real and all(n.startswith("chance (") for n in named[2:])  # chance rows last
    lexical = _pairs(cards["lexical"])["number_change"]
    ci = lexical["ci"]
    assert f"**{lexical['accuracy']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]** ({lexical['items']})" in written  # not blind
    constant = _pairs(cards["constant"])["negation_flip"]
    assert f"0.500 [0.500, 0.500] ({constant['items']})" in written  # blind: not bold
    (dataset,) = [d for d in cards["lexical"]["sensitivity"]["datasets"] if d["pair"] == "negation_flip"]
    reach = sensitivity.detectable(dataset["items"])  # the items' reach where none ties, the same for every model
    assert f"| negation_flip | STS16 | {dataset['items']} | {reach:.3f} | " in written
    assert dataset["detectable"] != reach  # the card's own sets the bag of words' ties aside: fewer decided
    assert update_tables(written, cards_folder.parent) == written  # a second run changes nothing


def test_a_card_without_sensitivity_figures_is_refused_by_the_tables(tmp_path):
    import shutil

    from hteb_contract.errors import HtebError
    from hteb_score.report.site.sensitivity_tables import sensitivity_cards

    card = next((Path(__file__).resolve().parents[2] / "docs" / "findings" / "noise2-1339").glob("*/result_card.json"))
    shutil.copytree(card.parent, tmp_path / "cards" / card.parent.name)
    with pytest.raises(HtebError, match="the card has no Sensitivity figures"):
        sensitivity_cards(tmp_path / "cards")
    with pytest.raises(HtebError, match="no result cards"):
        sensitivity_cards(tmp_path)


@settings(max_examples=30, deadline=None)
@given(kept=st.lists(st.floats(-1, 1), min_size=2, max_size=60), shift=st.floats(-0.5, 0.5))
def test_the_figure_is_the_share_of_items_the_twin_wins_with_scipys_interval(kept, shift):
    rows = [item_row(str(i), "D", PAIR, 1, "eng", k, np.clip(k + shift, -1, 1), 0.5) for i, k in enumerate(kept)]
    figure = summarise(rows)
    k = np.array([r["kept_cosine"] for r in rows])
    c = np.array([r["changed_cosine"] for r in rows])
    wins = np.where(k > c, 1.0, np.where(k == c, 0.5, 0.0))
    assert figure["accuracy"] == pytest.approx(wins.mean(), abs=1e-6)
    decided, won = int(np.sum(wins != 0.5)), int(np.sum(wins == 1.0))
    if not decided:
        assert figure["ci"] == [0.5, 0.5] and figure["blind"]
    else:  # scipy's exact interval of the wins among the items that are no tie, ties counting one half each
        test = stats.binomtest(won, decided)
        oracle = test.proportion_ci(confidence_level=sensitivity.CONFIDENCE, method="exact")
        ties = len(wins) - decided
        assert figure["ci"] == pytest.approx(
            [(oracle.low * decided + ties / 2) / len(wins), (oracle.high * decided + ties / 2) / len(wins)], abs=1e-6
        )
        # blind exactly when the exact two-sided test of the wins does not reject 0.5 (the test `detectable` uses)
        assert figure["blind"] == (test.pvalue > 1 - sensitivity.CONFIDENCE)
    assert figure["blind"] == (figure["ci"][0] <= 0.5 <= figure["ci"][1])
    assert figure["margin"] == pytest.approx(float(np.mean((k - c) / 0.5)), abs=1e-5)


@pytest.mark.parametrize("items", [6, 25, 100, 400, 3000])
def test_detectable_is_the_accuracy_scipys_binomial_test_separates_four_times_in_five(items):
    """The oracle: scipy.stats.binomtest on outcomes drawn at the stated accuracy rejects 0.5 in at least 80% of
    draws, and at 0.02 below it in fewer (the reach is the smallest such accuracy, not a bound)."""
    reach = sensitivity.detectable(items)
    assert reach is not None and 0.5 < reach <= 1

    def rejected(accuracy: float) -> float:
        draws = np.random.default_rng(7).binomial(items, min(accuracy, 1.0), size=4000)
        outcome = {k: stats.binomtest(int(k), items, 0.5).pvalue <= sensitivity.ALPHA for k in set(draws.tolist())}
        return float(np.mean([outcome[k] for k in draws.tolist()]))

    assert rejected(reach) >= sensitivity.POWER - 0.02  # Monte Carlo's error at 4,000 draws: about 0.006
    assert rejected(reach - 0.02) < sensitivity.POWER
    assert sensitivity.detectable(5) is None  # no count of 5 outcomes is significant at 5%


@settings(max_examples=60, deadline=None)
@given(wins=st.integers(0, 300), losses=st.integers(0, 300), ties=st.integers(0, 300))
@example(wins=0, losses=0, ties=400)  # a model of one vector: blind, and no power to be anything else
@example(wins=200, losses=200, ties=0)
@example(wins=0, losses=131, ties=131)  # exactly 0.564, which the recomputation below reads as 0.5640000000000001
def test_detectable_is_the_reach_of_the_decided_items_on_the_accuracys_scale(wins, losses, ties):
    """The power a figure states is that of the test its interval rests on: the items that are no tie. So a
    figure of ties (a constant model's) states none, where its item count alone would promise 0.573 at 400."""
    outcomes = [(0.9, 0.1)] * wins + [(0.1, 0.9)] * losses + [(0.5, 0.5)] * ties
    if not outcomes:
        return
    rows = [item_row(str(i), "D", PAIR, 1, "eng", k, c, 0.5) for i, (k, c) in enumerate(outcomes)]
    figure, decided = summarise(rows), wins + losses
    at_decided = sensitivity.detectable(decided)
    if at_decided is None:
        assert figure["detectable"] is None
        return
    assert figure["detectable"] == pytest.approx((at_decided * decided + ties / 2) / len(rows), abs=1e-3)
    exact = (at_decided * decided + ties / 2) / len(rows)
    assert figure["detectable"] >= exact - 1e-12  # rounded up, never promised (1e-12: the float error of `exact`)
    if not ties:
        assert figure["detectable"] == sensitivity.detectable(len(rows))


def test_the_block_groups_by_pair_dataset_and_language_and_its_section_prints_them():
    rows = [item_row(f"a{i}", "A", PAIR, 1, "eng", 0.9, 0.8, 0.4) for i in range(3)]
    rows += [item_row(f"b{i}", "B", PAIR, 1, "fra", 0.7, 0.8, 0.3) for i in range(2)]
    rows += [item_row("b0", "B", PAIR, 1, "fra", 0.7, 0.8, 0.3)]  # an item seen twice counts once
    block = sensitivity_block(rows)
    assert block is not None and block["overall"] == 0.6
    assert [(d["dataset"], d["accuracy"]) for d in block["datasets"]] == [("A", 1.0), ("B", 0.0)]
    assert [(d["language"], d["items"]) for d in block["languages"]] == [("eng", 3), ("fra", 2)]
    assert block["pairs"][0]["baseline"] is None  # two languages' baselines: no one b to state
    lines = "\n".join(sensitivity_lines(block))
    # 3 and 2 items: no count of them tells 0.5 apart (detectable "-"), and the exact interval says so
    assert "| negation_flip | A | 3 | 1.000 | [0.292, 1.000] | - | 0.250 | blind |" in lines
    assert "| negation_flip | B | 2 | 0.000 | [0.000, 0.842] | - | -0.333 | blind |" in lines
    assert sensitivity_block([]) is None


PAIRS = [PAIR, ("number_change", "number_format"), ("antonym_swap", "synonym_swap"), ("role_swap", "role_passive")]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 4)), min_size=1, max_size=4))
def test_the_sections_headline_is_what_the_pairs_say_and_the_mean_is_said_unweighted(counts):
    """Generated pairs of many readings and sizes (wins, losses, ties per pair): the headline counts the pairs
    by their own figures (blind where the interval holds 0.5, else hears or inverted by the side of 0.5), and the
    mean of their accuracies comes after, said to be unweighted where the pairs' item counts differ."""
    rows, i = [], 0
    for pair, (wins, losses, ties) in zip(PAIRS, counts):
        for kept, changed in [(0.9, 0.5)] * wins + [(0.5, 0.9)] * losses + [(0.7, 0.7)] * ties or [(0.7, 0.7)]:
            rows.append(item_row(f"i{i}", "A", pair, 1, "eng", kept, changed, 0.2))
            i += 1
    block = sensitivity_block(rows)
    assert block is not None
    figures = block["pairs"]
    lines = sensitivity_lines(block)
    said = pairs_said({f["pair"]: f for f in figures})
    assert lines[1] == f"## Sensitivity (minimal pairs; not in the HTEB total): {said}"
    assert said.startswith("hears ") and all(f["pair"] in said for f in figures)
    items = sorted(f["items"] for f in figures)
    fewest = f"{items[0]:,} item" + ("s" if items[0] > 1 else "")
    weighs = f" (unweighted: a pair of {fewest} weighs as much as one of {items[-1]:,})"
    mean = f"Mean of the pairs' accuracies{weighs if items[0] != items[-1] else ''}: {block['overall']:.3f}."
    assert lines[3].endswith(" " + mean)
    assert block["overall"] == pytest.approx(np.mean([f["accuracy"] for f in figures]), abs=1e-6)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3, unique=True))
def test_pair_names_in_the_headline_are_markdown_escaped_on_one_line(names):
    """Pair names come from the revision the card scored (outside text): in the headline each is written as the
    card writes any name into Markdown (`md_text`: markup escaped, line breaks and controls shown), so the
    headline stays one line whatever the names hold."""
    from hteb_contract.common.escape import md_text

    rows = [
        item_row(f"{n}{i}", "A", (name, "twin"), 1, "eng", 0.9, 0.5, 0.2)
        for n, name in enumerate(names)
        for i in range(9)
    ]
    lines = sensitivity_lines(sensitivity_block(rows))
    assert not any(c in lines[1] for c in "\n\r\x1b\x85\u2028")
    assert lines[1].startswith(f"## Sensitivity (minimal pairs; not in the HTEB total): hears {len(names)} of ")
    assert lines[1].endswith(f"({', '.join(md_text(n) for n in sorted(names))})") and lines[2] == ""


def test_hard_twins_of_no_pair_say_so_and_state_no_mean():
    """A run given --hard-twins-from whose second revision rewrote none of the pairs' originals: the hard section
    says no pair has a hard item, and states no mean (there is none to take)."""
    rows = [item_row(f"a{i}", "A", PAIR, 1, "eng", 0.9, 0.8, 0.4) for i in range(9)]
    block = sensitivity_block(rows, hard=[])
    assert block is not None and block["hard_overall"] is None and block["pairs"][0]["hard"]["items"] == 0
    lines = "\n".join(sensitivity_lines(block))
    assert "\n### Hard twins: no pair has a hard item\n" in lines and "hard accuracies" not in lines


def _part_with(row: dict[str, Any]) -> Any:
    """A real part of the sample revision (scored_parts.py) whose one unit holds `row` among its pair rows."""
    part = scored_part(["STSBenchmark"])
    (unit,) = part.units
    return dataclasses.replace(part, units=[dataclasses.replace(unit, sensitivity=[row])])


@settings(max_examples=40, deadline=None)
@given(
    value=st.floats(allow_nan=False, allow_infinity=False),  # what the JSON reader and the shape check let through
    column=st.sampled_from(["kept_cosine", "changed_cosine"]),
)
def test_a_part_whose_pair_rows_are_not_cosines_is_refused_in_one_line(value, column):
    row = item_row("i", "STSBenchmark", ("paraphrasing", "x"), 1339, "eng", 0.5, 0.4, 0.3)  # a variant it scored
    row[column] = value
    if -1 - COSINE_EPS <= value <= 1 + COSINE_EPS:
        check_part(_part_with(row), "part x")
        return
    with pytest.raises(
        HtebError,
        match=rf"^part x: unit 'STSBenchmark': sensitivity row 0: {column} is .*, outside \[-1, 1\] \(a cosine\)$",
    ):
        check_part(_part_with(row), "part x")


def test_a_part_naming_a_pair_it_did_not_score_is_refused():
    for pair, seed in (("number_change", 1339), ("paraphrasing", 1)):  # a rule it did not score; a seed
        row = item_row("i", "STSBenchmark", (pair, "x"), seed, "eng", 0.5, 0.4, 0.3)
        with pytest.raises(
            HtebError, match=f"sensitivity row 0: pair '{pair}' with seed {seed} is not a transformed variant the unit"
        ):
            check_part(_part_with(row), "part x")
