"""`compare` trusts nothing it is given (issue 24 item 5): a card's aggregates must be those of its
own score records (a hand-edited Original +30 was ranked first without a word), an axis column
averaging different transformations per model is named, a CSV with a UTF-8 byte-order mark is
read, models whose names spell one folder keep apart model-index files, and cards of 3,003
datasets are compared in seconds (the Walsh interval takes k from the normal approximation past
50 differences, and says so)."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
import yaml
from cards import MODELS, big_card, make_card, paper_rows, write_card
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from deadline import deadline
from hteb_contract.specs.transformations import Axis
from hteb_contract.taxonomy import INSTALLED, RECORDED, Taxonomy
from hteb_contract.validation import validate
from hteb_score.scoring.aggregate import aggregate
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.stats import hodges_lehmann as hl

SPLITS = ("--splits", "5")


def _refused(code: int, err: str, *needles: str) -> None:
    assert code == 2 and err.count("\n") == 1 and err.startswith("hteb-score: error: "), err
    assert "Traceback" not in err and all(n in err for n in needles), err


def _edited(card: dict, edit) -> dict:
    card = copy.deepcopy(card)
    edit(card["aggregates"])
    return card


def _plus_30(aggregates: dict) -> None:
    for row in aggregates["per_dataset"]:
        row["original"] += 30
    aggregates["original"] += 30


def test_refused_card_with_hand_edited_aggregates(tmp_path, run_cli):
    honest = write_card(tmp_path, make_card(MODELS[0]))
    forged = write_card(tmp_path, _edited(make_card(MODELS[1], model_index=1), _plus_30))
    code, _, err = run_cli("compare", honest, forged, "--out", tmp_path / "out", *SPLITS)
    _refused(code, err, f"{forged}: aggregates/", "its score records give", "pass --force")
    assert not (tmp_path / "out").exists()


def test_flagged_card_with_hand_edited_aggregates_forced(tmp_path, run_cli):
    honest = write_card(tmp_path, make_card(MODELS[0]))
    forged = write_card(tmp_path, _edited(make_card(MODELS[1], model_index=1), _plus_30))
    code, _, err = run_cli("compare", honest, forged, "--out", tmp_path / "out", "--force", *SPLITS)
    assert code == 0, err
    warnings = json.loads((tmp_path / "out" / "comparison.json").read_text())["warnings"]
    assert any(w.startswith(f"FORCED: {forged}: aggregates/") for w in warnings), warnings


def _numeric_paths(value, path=()):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _numeric_paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _numeric_paths(inner, (*path, index))
    elif isinstance(value, float):
        yield path


CARD = make_card(MODELS[2], datasets=6, model_index=2)
PATHS = list(_numeric_paths(CARD["aggregates"]))


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.sampled_from(PATHS), shift=st.floats(1e-6, 1e6) | st.floats(-1e6, -1e-6))
def test_fuzz_any_edited_aggregate_is_refused(tmp_path_factory, path, shift):
    """Any number of the aggregates block moved by any amount: the card no longer agrees with itself."""

    def edit(aggregates):
        target = aggregates
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] += shift

    folder = tmp_path_factory.mktemp("fuzz")
    forged = write_card(folder, _edited(CARD, edit))
    from hteb_score.report.compare.inputs import aggregates_problem, load_card

    problem = aggregates_problem(load_card(forged))
    assert problem is not None and "/".join(map(str, path)) in problem


def test_named_axis_of_different_selections(tmp_path, run_cli):
    """All eight transformations against paraphrasing only: the lexical column averages 3 against 1."""
    full = make_card(MODELS[0])
    only = make_card(MODELS[1], model_index=1)
    only["scores"] = [r for r in only["scores"] if r["transformation"] in ("original", "paraphrasing")]
    only["aggregates"] = aggregate([ScoreRecord.from_json(r) for r in only["scores"]], INSTALLED)
    only["statistics"] = None
    validate("result_card", only, what="paraphrasing only")
    code, _, err = run_cli(
        "compare", write_card(tmp_path, full), write_card(tmp_path, only), "--out", tmp_path / "out", *SPLITS
    )
    assert code == 0, err
    warnings = json.loads((tmp_path / "out" / "comparison.json").read_text())["warnings"]
    lexical = [w for w in warnings if w.startswith("axis lexical averages different transformations per model")]
    assert lexical and f"{MODELS[0]}: paraphrasing, backtranslation, style_change" in lexical[0]
    assert f"{MODELS[1]}: paraphrasing;" in lexical[0] or lexical[0].endswith(
        f"{MODELS[1]}: paraphrasing); its column compares unlike selections"
    )


def test_csv_with_a_byte_order_mark(tmp_path, run_cli):
    """A table saved by a spreadsheet starts with a UTF-8 BOM: its first column is still `model`."""
    rows = [r for r in paper_rows() if r["model"] in MODELS[:2]]
    lines = ["model,dataset,task_type,original,hteb"] + [
        f"{r['model']},{r['dataset']},{r['task_type']},{r['original']},{r['hteb']}" for r in rows
    ]
    table = tmp_path / "scores.csv"
    table.write_bytes(b"\xef\xbb\xbf" + ("\r\n".join(lines) + "\r\n").encode("utf-8"))
    code, _, err = run_cli("compare", "--scores-table", table, "--out", tmp_path / "out", *SPLITS)
    assert code == 0, err
    models = {row["model"] for row in json.loads((tmp_path / "out" / "comparison.json").read_text())["leaderboard"]}
    assert models == set(MODELS[:2])


@pytest.mark.parametrize("names", [("org/model", "org_model"), ("模型甲", "模型乙"), ("Org/M", "org/m")])
def test_model_index_files_of_models_spelling_one_folder(tmp_path, run_cli, names):
    paths = []
    for index, name in enumerate(names):
        card = make_card(MODELS[index], model_index=index)
        card["model"]["model_id"] = name
        path = tmp_path / f"card{index}.json"
        path.write_text(json.dumps(card), encoding="utf-8")
        paths.append(path)
    code, _, err = run_cli("compare", *paths, "--out", tmp_path / "out", *SPLITS)
    assert code == 0, err
    files = sorted((tmp_path / "out" / "model_index").glob("*/model-index.yaml"))
    assert len(files) == 2 and len({f.parent.name.lower() for f in files}) == 2
    named = sorted(yaml.safe_load(f.read_text())["model-index"][0]["name"] for f in files)
    assert named == sorted(names)


def test_compare_on_many_datasets_uses_the_normal_approximation(tmp_path, run_cli):
    """Past 50 datasets the HL interval is the normal approximation's, and the outputs say so (how fast
    compare is on 3,003 datasets: bench/bench_compare.py)."""
    rng = np.random.default_rng(0)
    paths = [write_card(tmp_path, big_card(f"m{i}", 120, 1.0 + i, rng)) for i in range(2)]
    with deadline(120):
        code, _, err = run_cli("compare", *paths, "--out", tmp_path / "out", *SPLITS)
    assert code == 0, err
    effects = json.loads((tmp_path / "out" / "comparison.json").read_text())["effects"]
    methods = {e["ci_method"] for family in effects.values() for e in family.values()}
    assert methods == {"walsh-normal"}
    assert "normal approximation" in (tmp_path / "out" / "comparison.md").read_text()


@pytest.mark.parametrize("n", [50, 51, 200])
def test_the_normal_interval_meets_the_exact_one(n):
    """Either side of the threshold (50, as scipy's wilcoxon) the interval barely moves: the normal
    approximation's k is the exact distribution's, within one."""
    from hteb_score.stats.signed_rank_distribution import lower_critical_value

    d = np.random.default_rng(n).normal(0.5, 1.0, n)
    result = hl.hodges_lehmann(d)
    assert result.method == ("walsh" if n <= 50 else "walsh-normal")
    assert 0.94 < result.confidence < 0.96 and result.ci_low < result.shift < result.ci_high
    assert abs(hl.normal_critical_value(n, 0.05)[0] - lower_critical_value(n, 0.05)) <= 1


@pytest.mark.parametrize("name", ["paraphrasing", "translation", "expansion"])
def test_cards_of_revisions_that_put_a_transformation_on_two_axes_are_refused_in_one_line(tmp_path, run_cli, name):
    """Each card's figures are its revision's axes (`taxonomy`): a card whose revision moved a transformation to
    another axis is another benchmark, whatever its own aggregates say (they are its own records')."""
    elsewhere = next(a for a in INSTALLED.members if a != INSTALLED.axis_of(name) and INSTALLED.in_total(a))
    moved = Taxonomy(
        tuple(
            Axis(
                a.name,
                a.label,
                tuple(t for t in a.transformations if t != name) + ((name,) if a.name == elsewhere else ()),
                a.paper,
            )
            for a in INSTALLED.axes
        ),
        RECORDED,
    )
    other = make_card(MODELS[1], model_index=1)
    other["taxonomy"] = moved.to_json()
    other["aggregates"] = aggregate([ScoreRecord.from_json(r) for r in other["scores"]], moved)
    validate("result_card", other, what="moved")
    code, _, err = run_cli(
        "compare",
        write_card(tmp_path, make_card(MODELS[0])),
        write_card(tmp_path, other),
        "--out",
        tmp_path / "out",
        *SPLITS,
    )
    _refused(code, err, f"transformation '{name}' is on axis '{INSTALLED.axis_of(name)}' in one and '{elsewhere}'")
    assert not (tmp_path / "out").exists()
