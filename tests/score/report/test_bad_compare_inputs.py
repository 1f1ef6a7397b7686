"""`compare` trusts nothing it is given (issue 24 item 5): a card's aggregates must be those of its
own score records (a hand-edited Original +30 was ranked first without a word), an axis column
averaging different transformations per model is named, a CSV with a UTF-8 byte-order mark is
read, models whose names spell one folder keep apart model-index files, and cards of 3,003
datasets are compared in seconds (the Walsh interval takes k from the normal approximation past
50 differences, and says so)."""

from __future__ import annotations

import copy
import csv
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from cards import MODELS, big_card, make_card, paper_rows, write_card
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from deadline import deadline
from hteb_contract.specs.transformations import Axis
from hteb_contract.tasks import TASK_TYPES
from hteb_contract.taxonomy import INSTALLED, RECORDED, Taxonomy
from hteb_contract.validation import validate
from hteb_score.evaluators.outcomes import Outcomes
from hteb_score.report.card import card_checks
from hteb_score.report.card.outputs import ITEMS_FILE, OUTCOMES_FILE, RunFiles, items_parquet, outcomes_parquet
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


# -- the parquet files beside a card: the writer's schema, or one line ------------------------------------------

#: A card whose folder holds the generated parquet files, and one to compare it with.
HONEST, BESIDE = make_card(MODELS[0], datasets=3), make_card(MODELS[1], datasets=3, model_index=1)
#: The columns each writer leaves null (report/card/outputs.py): any other null is a damaged file.
MAY_BE_NULL = {
    ITEMS_FILE: {"top10_changed", "order_flipped", "quality", "fluency"},
    OUTCOMES_FILE: {"seed", "gold", "predicted", "gold_label", "predicted_label"},
}
#: A column of another type than the writer's, with a value of it ("0.5": text a cast would read as a number).
OTHER_TYPES = {
    pa.string(): st.sampled_from(["0.5", "cosine", ""]),
    pa.large_string(): st.just("0.5"),
    pa.int64(): st.integers(-3, 3),
    pa.float64(): st.floats(-1, 1),
    pa.float32(): st.floats(-1, 1, width=32),
    pa.bool_(): st.booleans(),
    pa.list_(pa.float64()): st.lists(st.floats(-1, 1), max_size=2),
}


def _item(at: int) -> dict:
    """One explorer row as scoring writes it: an STS pair's, so no top-10 verdict; the judge's scores unrated."""
    dataset = BESIDE["dataset"]["datasets"][0]
    return {
        "model": MODELS[1],
        "dataset": dataset,
        "transformation": "paraphrasing",
        "seed": 1,
        "split": "test",
        "item_id": str(at),
        "field": "sentence1",
        "original_text": f"original text {at}",
        "transformed_text": f"transformed text {at}",
        "cosine": 0.9 - at / 10,
        "top10_changed": None,
        "order_flipped": at % 2 == 0,
        "moved_most": True,
        "outcome_flipped": at % 2 == 0,
        "quality": None,
        "fluency": None,
        "with_errors": False,
    }


def _table(files: dict[str, str | bytes]) -> pa.Table:
    (data,) = files.values()
    return pq.read_table(pa.BufferReader(data))


ITEMS = [_item(at) for at in range(4)]
VALID = {
    ITEMS_FILE: _table(items_parquet(RunFiles(BESIDE, {}, ITEMS))),
    OUTCOMES_FILE: _table(
        outcomes_parquet(
            RunFiles(
                BESIDE,
                {},
                outcomes={
                    ("STSBenchmark", "original", None): Outcomes.of(
                        "spearman", "default", ["0", "1"], [1.0, 2.0], [0.1, 0.3]
                    ),
                    ("Banking77", "original", None): Outcomes.of(
                        "accuracy", "default", ["0", "1"], ["a", "b"], ["a", "a"]
                    ),
                },
            )
        )
    ),
}


def _compare_beside(folder, run_cli, files: dict[str, pa.Table]):
    """`compare` of HONEST and of BESIDE with `files` written in BESIDE's folder."""
    (folder / "beside").mkdir()
    for name, table in files.items():
        pq.write_table(table, folder / "beside" / name)
    honest = write_card(folder, HONEST)
    return run_cli("compare", honest, write_card(folder / "beside", BESIDE), "--out", folder / "out", *SPLITS)


@st.composite
def damaged(draw) -> tuple[str, pa.Table, str]:
    """A file beside a card (its name), the writer's table with one column missing, of another type, or with a
    null where the writer writes none, and that column."""
    name = draw(st.sampled_from(sorted(VALID)))
    table = VALID[name]
    column = draw(st.sampled_from(table.column_names))
    at, field = table.column_names.index(column), table.schema.field(column)
    how = draw(st.sampled_from(["missing", "type", *(() if column in MAY_BE_NULL[name] else ("null",))]))
    if how == "missing":
        return name, table.remove_column(at), column
    if how == "type":
        text = (pa.string(), pa.large_string())  # the same values, offsets of another width: read alike
        kind = draw(st.sampled_from([t for t in OTHER_TYPES if t != field.type and not {t, field.type} <= set(text)]))
        values = draw(st.lists(OTHER_TYPES[kind], min_size=table.num_rows, max_size=table.num_rows))
        return name, table.set_column(at, column, pa.array(values, type=kind)), column
    values = table.column(column).to_pylist()
    values[draw(st.integers(0, len(values) - 1))] = None
    return name, table.set_column(at, column, pa.array(values, type=field.type)), column


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=damaged())
def test_fuzz_a_parquet_file_beside_a_card_of_another_schema_is_refused(tmp_path_factory, run_cli, case):
    """items.parquet is held to its writer's schema as outcomes.parquet is: a column missing, of another type
    (text "0.5" too: never cast) or null where its writer writes none is one line naming the file and column."""
    name, table, column = case
    folder = tmp_path_factory.mktemp("beside")
    code, _, err = _compare_beside(folder, run_cli, {name: table})
    _refused(code, err, f"{folder / 'beside' / name}: ", f"column {column!r}")
    assert not (folder / "out").exists()


def test_refused_outcomes_parquet_copied_over_items_parquet(tmp_path, run_cli):
    code, _, err = _compare_beside(tmp_path, run_cli, {ITEMS_FILE: VALID[OUTCOMES_FILE]})
    _refused(code, err, f"{tmp_path / 'beside' / ITEMS_FILE}: no column 'model'")
    assert not (tmp_path / "out").exists()


def test_an_items_file_of_the_writers_schema_is_shown_in_the_explorer(tmp_path, run_cli):
    """What the writer leaves null (no top-10 verdict, no judge) is read: its rows are in report.html."""
    code, _, err = _compare_beside(tmp_path, run_cli, {ITEMS_FILE: VALID[ITEMS_FILE]})
    assert code == 0, err
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert all(item["transformed_text"] in html for item in ITEMS)


#: An explorer row edited into values of the right type that cannot be, and the words of its refusal: of another
#: model or a variant its card did not score, a cosine or judge score outside its range, a flip its row denies, a
#: text marked unchanged that moved.
IMPOSSIBLE_ITEMS = {
    "model": (st.text(max_size=8).filter(lambda m: m != MODELS[1]).map(lambda m: {"model": m}), "model is"),
    "variant": (
        st.one_of(
            st.integers(3, 9).map(lambda s: {"seed": s}),  # the card scored seeds 1 and 2
            st.sampled_from(["typos", "original", "typos\nhteb-score: done"]).map(lambda t: {"transformation": t}),
        ),
        "is not a transformed variant its card scored",
    ),
    "cosine": (
        st.one_of(st.floats(max_value=-1.001, allow_infinity=False), st.floats(min_value=1.001, allow_infinity=False))
        .filter(lambda v: v == v)
        .map(lambda v: {"cosine": v}),
        "cosine is",
    ),
    "judge": (
        st.sampled_from(["quality", "fluency"]).flatmap(
            lambda c: st.one_of(st.floats(-1e9, 0.999), st.floats(5.001, 1e9)).map(lambda v: {c: v})
        ),
        "the judge's scale",
    ),
    "flip": (st.booleans().map(lambda f: {"order_flipped": f, "outcome_flipped": not f}), "and only there"),
    "unchanged": (
        st.floats(-1.0, 0.99).map(lambda v: {"transformed_text": "original text 0", "cosine": v}),
        "left unchanged has cosine 1",
    ),
}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_an_items_file_whose_rows_cannot_be_is_refused(tmp_path_factory, run_cli, data):
    """items.parquet's rows are the report page's examples: of the card's model and variants, each value inside
    what it measures and each row consistent with itself (row_checks.py), as a part's explorer rows are."""
    kind = data.draw(st.sampled_from(sorted(IMPOSSIBLE_ITEMS)))
    changes, words = data.draw(IMPOSSIBLE_ITEMS[kind][0]), IMPOSSIBLE_ITEMS[kind][1]
    at = 0 if kind == "unchanged" else data.draw(st.integers(0, len(ITEMS) - 1))
    rows = [dict(row) for row in ITEMS]
    rows[at].update(changes)
    folder = tmp_path_factory.mktemp("beside")
    code, _, err = _compare_beside(folder, run_cli, {ITEMS_FILE: _table(items_parquet(RunFiles(BESIDE, {}, rows)))})
    _refused(code, err, f"{folder / 'beside' / ITEMS_FILE}: explorer row {at}: ", words)
    assert not (folder / "out").exists()


# -- a card's item measures: of variants it scored, inside what they measure, consistent with their counts ----------

NOISE_CARDS = Path(__file__).resolve().parents[3] / "docs" / "findings" / "noise-1339"
MEASURED = json.loads((NOISE_CARDS / "all-MiniLM-L6-v2" / "result_card.json").read_text(encoding="utf-8"))
ENTRIES = [(t, d) for t, by in MEASURED["item_measures"]["per_transformation"].items() for d in by]
QUANTILES = [f"drift_p{q}" for q in MEASURED["item_measures"]["quantiles"]]
#: the entries with two quantiles apart (a drift of 0 in all but a few texts has them all 0)
ORDERED = [
    (t, d) for t, d in ENTRIES if len({MEASURED["item_measures"]["per_transformation"][t][d][q] for q in QUANTILES}) > 1
]
OUTSIDE_DRIFT = st.floats(2.00001, 1e9) | st.floats(-1e9, -0.00001)
OUTSIDE_RHO = st.floats(1.00001, 1e9) | st.floats(-1e9, -1.00001)


def _order(f: dict) -> dict:
    upper = QUANTILES[1:][np.argmax([f[b] > f[a] for a, b in zip(QUANTILES, QUANTILES[1:])])]
    lower = QUANTILES[QUANTILES.index(upper) - 1]
    return {lower: f[upper], upper: f[lower]}


#: kind -> (a strategy of an edit of one (transformation, dataset)'s figures that the schema admits, what the
#: refusal says)
IMPOSSIBLE_MEASURES = {
    "drift": (
        st.sampled_from(["drift_mean", *QUANTILES]).flatmap(lambda k: OUTSIDE_DRIFT.map(lambda v: lambda f: {k: v})),
        "of 1 - cos)",
    ),
    "baseline": (  # below 0 the schema refuses it
        st.floats(2.00001, 1e9).map(lambda v: lambda f: {"baseline_drift": {"eng": v}}),
        "baseline_drift.eng is",
    ),
    "rho": (
        OUTSIDE_RHO.map(lambda v: lambda f: {"quality_spearman": {**f["quality_spearman"], "pass": v}}),
        "a Spearman rho",
    ),
    "count": (
        st.tuples(st.sampled_from(sorted(card_checks.MEASURE_COUNTS)), st.integers(1, 10**6)).map(
            lambda c: lambda f: {c[0]: f[card_checks.MEASURE_COUNTS[c[0]]] + c[1]}
        ),
        "more than its",
    ),
    "null": (st.sampled_from(["drift_mean", "pass_rate", *QUANTILES]).map(lambda k: lambda f: {k: None}), "null"),
    "order": (st.just(_order), "is above"),
    "interval": (
        st.floats(-0.9, 0.5).map(
            lambda r: (
                lambda f: {
                    "quality_spearman": {**f["quality_spearman"], "drift": r},
                    "quality_spearman_interval": {"drift": [r + 0.1, min(1.0, r + 0.4)]},
                }
            )
        ),
        "lies outside its interval",
    ),
}


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_fuzz_a_card_whose_item_measures_cannot_be_is_refused(tmp_path_factory, run_cli, data):
    """A committed card's item measures (drift, quantiles, baselines, counts, quality rho), edited within what the
    schema admits into figures that cannot be, or moved to a variant the card did not score: `compare` refuses
    it in one line naming the field (card_checks.py) and writes nothing."""
    kind = data.draw(st.sampled_from([*IMPOSSIBLE_MEASURES, "variant"]))
    transformation, dataset = data.draw(st.sampled_from(ORDERED if kind == "order" else ENTRIES))
    card = copy.deepcopy(MEASURED)
    by_dataset = card["item_measures"]["per_transformation"][transformation]
    field = f"item_measures.per_transformation.{transformation}.{dataset}"
    if kind == "variant":
        other = data.draw(
            st.sampled_from(["SciFact", "NoSuchDataset", "original"]).filter(lambda d: d not in by_dataset)
        )
        by_dataset[other] = by_dataset.pop(dataset)
        field, words = f"item_measures.per_transformation.{transformation}.{other}", "not a transformed variant"
    else:
        edit, words = data.draw(IMPOSSIBLE_MEASURES[kind][0]), IMPOSSIBLE_MEASURES[kind][1]
        by_dataset[dataset].update(edit(by_dataset[dataset]))
    validate("result_card", card, what="edited")  # the schema admits it: the figures contradict themselves
    folder = tmp_path_factory.mktemp("measures")
    edited = folder / "edited" / "result_card.json"
    edited.parent.mkdir()
    edited.write_text(json.dumps(card), encoding="utf-8")
    other = NOISE_CARDS / "all-mpnet-base-v2" / "result_card.json"
    code, _, err = run_cli("compare", edited, other, "--out", folder / "out", *SPLITS)
    _refused(code, err, f"{edited}: {field}", words)
    assert not (folder / "out").exists()


def test_every_committed_cards_item_measures_pass():
    """The checks refuse no card hteb-score wrote: every committed card, whatever it measured."""
    for path in sorted((NOISE_CARDS.parent).glob("**/result_card.json")):
        card_checks.check_card(json.loads(path.read_text(encoding="utf-8")), path)


# -- scores tables: every score a number of its task type's range, in points --------------------------------------

#: The generated table's datasets: (task type it names, the range of its scores in points). SciFact is HTEB's
#: Retrieval dataset (a rate) also where the row names no type; a dataset HTEB does not know and no type: any score's.
TABLE_DATASETS = {"STSBenchmark": ("STS", (-100, 100)), "SciFact": ("", (0, 100)), "MyData": ("", (-100, 100))}
SCORE_COLUMNS = ("original", "hteb", "paraphrasing")


def _table_rows() -> list[dict]:
    return [
        {"model": model, "dataset": d, "task_type": kind, **{c: 50 - 10 * i for c in SCORE_COLUMNS}}
        for i, model in enumerate(("A", "B"))
        for d, (kind, _) in TABLE_DATASETS.items()
    ]


def _write_table(path, rows: list[dict]) -> None:
    if path.suffix == ".json":
        path.write_text(json.dumps(rows), encoding="utf-8")
        return
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def _reads_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


#: text that is no number: a CSV cell or a JSON string (what a spreadsheet writes for a missing value too)
NOT_NUMBER_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), min_size=1).filter(
    lambda t: t.strip() != "" and not _reads_as_number(t)
)


def bad_score(low: float, high: float, *, as_json: bool) -> st.SearchStrategy:
    """A score outside [low, high] points, non-finite, or no number at all (in JSON: true, a list, an object)."""
    outside = st.floats(min_value=high, exclude_min=True, allow_infinity=False) | st.floats(
        max_value=low, exclude_max=True, allow_infinity=False
    )
    if as_json:
        no_number = st.booleans() | st.lists(st.integers(0, 9), max_size=2) | st.just({"a": 1}) | NOT_NUMBER_TEXT
        return outside | st.integers(min_value=2**1024) | no_number | outside.map(repr)
    return outside.map(repr) | st.sampled_from(["nan", "inf", "-inf", "1e999", "NaN"]) | NOT_NUMBER_TEXT


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), suffix=st.sampled_from([".csv", ".json"]))
def test_fuzz_a_table_score_that_is_no_score_of_its_task_type_is_refused(tmp_path_factory, run_cli, data, suffix):
    """Any score of a row made no number, true, non-finite or outside its task type's range in points (as a card's
    records are held to their metric's): one line naming the table, the row and the column; nothing written."""
    rows = _table_rows()
    line = data.draw(st.integers(1, len(rows)))
    column = data.draw(st.sampled_from(SCORE_COLUMNS))
    _, (low, high) = TABLE_DATASETS[rows[line - 1]["dataset"]]
    rows[line - 1][column] = data.draw(bad_score(low, high, as_json=suffix == ".json"))
    folder = tmp_path_factory.mktemp("table")
    _write_table(folder / f"scores{suffix}", rows)
    code, _, err = run_cli("compare", "--scores-table", folder / f"scores{suffix}", "--out", folder / "out", *SPLITS)
    _refused(code, err, f"{folder / f'scores{suffix}'}: row {line}: column {column!r}")
    assert not (folder / "out").exists()


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=st.data(),
    kind=st.sampled_from([t for t in TASK_TYPES.names() if t != "STS"])
    | st.text(min_size=1).filter(lambda t: t.strip() != "" and t.strip() not in TASK_TYPES),
)
def test_fuzz_a_task_type_unknown_or_not_the_datasets_is_refused(tmp_path_factory, run_cli, data, kind):
    """A task type that is none, or another than HTEB's table gives the dataset (STSBenchmark's STS): the range
    its scores are held to would be another's."""
    rows = _table_rows()
    line = data.draw(st.sampled_from([i + 1 for i, r in enumerate(rows) if r["dataset"] == "STSBenchmark"]))
    rows[line - 1]["task_type"] = kind
    folder = tmp_path_factory.mktemp("table")
    _write_table(folder / "scores.json", rows)
    code, _, err = run_cli("compare", "--scores-table", folder / "scores.json", "--out", folder / "out", *SPLITS)
    _refused(code, err, f"{folder / 'scores.json'}: row {line}: ")
    assert ("unknown task type" if kind.strip() not in TASK_TYPES else "is of task type 'STS'") in err


def test_scores_at_the_ends_of_their_ranges_are_compared_as_given(tmp_path, run_cli):
    """A correlation of -100 points and a rate of 0 or 100 are scores: compared, and shown as they are."""
    rows = _table_rows()
    rows[0]["original"], rows[1]["original"], rows[4]["original"] = -100, 100, 0  # A's STS, A's SciFact, B's SciFact
    _write_table(tmp_path / "scores.csv", rows)
    code, _, err = run_cli("compare", "--scores-table", tmp_path / "scores.csv", "--out", tmp_path / "out", *SPLITS)
    assert code == 0, err
    leaderboard = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))["leaderboard"]
    originals = {row["model"]: row["original"] for row in leaderboard}
    assert originals == pytest.approx({"A": (-100 + 100 + 50) / 3, "B": (40 + 0 + 40) / 3})
