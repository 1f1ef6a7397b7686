"""HTEB inside mteb (issue 33 item 4): the variants as mteb tasks that say what they are (adapted from
mteb's task, how their texts were made, never "superseded"), hteb-score's mteb output in the layout of
mteb's results repository read back by mteb's own `ResultCache`, each variant apart, and an mteb
`Benchmark` of a revision whose aggregation is the card's: Original, each axis, HTEB, Noise beside it.

The fast tests read what the real scoring and publishing code wrote for the bundled sample with a
hashed bag-of-words encoder (scored_parts.py); the slow one runs the Benchmark through `mteb.evaluate`
with all-MiniLM-L6-v2 against `hteb-score --protocol mteb` on the same model.
"""

from __future__ import annotations

import json
import math
import shutil
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

mteb = pytest.importorskip("mteb")
from hteb_contract.taxonomy import recorded_in
from hteb_contract.errors import HtebError
from hteb_contract.stores import open_store
from hteb_contract.taxonomy import AXIS_LABELS
from hteb_score import DEFAULT_STORE, SAMPLE_REVISION
from hteb_score.cli import main
from hteb_score.mteb_interop.benchmark import RANK, HtebBenchmark, columns, get_benchmark
from hteb_score.mteb_interop.layout import model_folder_name, variant_task_name
from hteb_score.mteb_interop.tasks import tasks_from_revision
from hteb_score.report.card.run_outputs import publish
from hteb_score.scoring.aggregate import aggregate
from hteb_score.scoring.score_record import ScoreRecord
from mteb.models import ModelMeta
from scored_parts import MODEL, SMALL, scored_part, with_identity

#: the default sample's content hash, as its store lists it, the way task names and aliases carry it (8 hex digits)
SHORT = str(next(p.revision_id for p in open_store(DEFAULT_STORE).published() if p.label == SAMPLE_REVISION))[:8]

MODEL_ID = "hteb-tests/hashed-bow"


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> tuple[dict, Path]:
    """The bundled sample's small datasets scored (the session's scored part) and published under an
    `org/name` model id, as mteb's ModelMeta requires: (card, OUT/mteb)."""
    out = tmp_path_factory.mktemp("published")
    card = publish(with_identity(scored_part(None), model={**MODEL, "model_id": MODEL_ID}), out)
    return card, out / "mteb"


@pytest.fixture(scope="module")
def benchmark() -> HtebBenchmark:
    return get_benchmark(SAMPLE_REVISION, datasets=SMALL)


def _card_figures(card: dict) -> dict[str, float | None]:
    """The card's Original, axes, HTEB and Noise, in points: what the Benchmark must give x 100."""
    agg = card["aggregates"]
    axes = {AXIS_LABELS[a]: v for a, v in agg["per_axis"].items()}
    return {column: axes.get(column) for column in columns(recorded_in(card))} | {
        "Original": agg["original"],
        "HTEB": agg["hteb_total"],
    }


def _largest_difference(ours: dict[str, float | None], card: dict[str, float | None]) -> float:
    assert ours.keys() == card.keys() and [k for k, v in ours.items() if v is None] == [
        k for k, v in card.items() if v is None
    ]
    return max(abs(ours[k] * 100 - card[k]) for k in ours if ours[k] is not None)


def test_variant_tasks_say_what_they_are_and_are_not_superseded():
    original, paraphrased = tasks_from_revision(
        DEFAULT_STORE, SAMPLE_REVISION, datasets=["STSBenchmark"], transformations=["paraphrasing"]
    )
    mtebs = mteb.get_task("STSBenchmark").metadata
    assert mtebs.superseded_by == "STSBenchmark.v2"  # what every variant used to inherit and warn about
    for task in (original, paraphrased):
        assert task.metadata.superseded_by is None and task.metadata.adapted_from == ["STSBenchmark"]
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            task.check_if_dataset_is_superseded()  # what mteb.evaluate calls on every task
    assert original.metadata.sample_creation == mtebs.sample_creation
    assert paraphrased.metadata.sample_creation == "LM-generated and verified"
    assert paraphrased.metadata.description.startswith(
        f"HTEB revision {SHORT} of STSBenchmark, paraphrasing (seed 1339)"
    )


def test_model_folder_is_mtebs():
    meta = ModelMeta.create_empty(overwrites={"name": "sentence-transformers/all-MiniLM-L6-v2"})
    assert model_folder_name(meta.name) == meta.model_name_as_path() == "sentence-transformers__all-MiniLM-L6-v2"


def test_mteb_has_no_registry_entry_for_a_variant():
    """What docs/mteb-results.md says mteb lacks: its registry knows only its own tasks, so an HTEB
    variant is reached through `get_benchmark`/`tasks_from_revision`, never `mteb.get_task`."""
    with pytest.raises(KeyError):
        mteb.get_task(f"STSBenchmark.hteb-{SHORT}.original")


def test_benchmark_of_the_sample(benchmark):
    assert benchmark.name == f"HTEB({SAMPLE_REVISION})" and benchmark.aliases == (f"HTEB({SHORT})",)
    assert len(benchmark.tasks) == len(SMALL) * 9  # the original and 8 transformations, one seed
    assert "@misc{frank2026hteb" in benchmark.citation and benchmark.reference.startswith("https://arxiv.org/")
    assert "paraphrasing, backtranslation" in benchmark.description


def test_a_benchmark_takes_only_hteb_tasks():
    with pytest.raises(HtebError, match="not an HTEB task .*STSBenchmark"):
        HtebBenchmark(name="HTEB(x)", tasks=[mteb.get_task("STSBenchmark")])


def test_result_cache_reads_hteb_scores_results_repository_layout(published):
    """results/<model>/<revision>/<task>.json and model_meta.json, as mteb's results repository has them:
    mteb's ResultCache loads every variant as a task of its own, with the card's score."""
    card, root = published
    folder = root / "results" / "hteb-tests__hashed-bow" / "no_revision_available"
    meta = (folder / "model_meta.json").read_text()
    # mteb's own ModelMeta, as a results repository's file is: it validates, and is the empty one but for what we know
    assert ModelMeta.model_validate_json_resolved(meta).name == MODEL_ID
    assert (
        json.loads(meta)
        == ModelMeta.create_empty(
            overwrites={"name": MODEL_ID, "revision": "no_revision_available", "embed_dim": MODEL["embedding_dim"]}
        ).to_dict()
    )
    loaded = mteb.ResultCache(root).load_results(include_remote=False)
    [model] = loaded.model_results
    assert (model.model_name, model.model_revision) == (MODEL_ID, "no_revision_available")
    by_task = {r.task_name: r.get_score() for r in model.task_results}
    revision = card["dataset"]["revision"]
    mteb_task = {d: t for d, t in card["evaluation"]["mteb_tasks"].items()}
    expected = {
        variant_task_name(mteb_task[r["dataset"]], revision, r["transformation"], r["seed"]): r["value"]
        for r in card["scores"]
        if r["subset"] == "all"
    }
    assert len(expected) == len(SMALL) * 9
    assert by_task.keys() == expected.keys()
    assert by_task == pytest.approx(expected, abs=1e-6)  # mteb's files hold 6 decimals


def test_benchmark_aggregation_of_cached_results_equals_the_card(published, benchmark):
    """mteb's documented readers of a benchmark's results, on hteb-score's files: the figures are the card's."""
    card, root = published
    results = mteb.ResultCache(root).load_results(tasks=benchmark, include_remote=False)
    [scores] = results.get_aggregated_scores().values()
    ours = {k: v for k, v in scores.items() if k != "Rank"}
    assert _largest_difference(ours, _card_figures(card)) < 1e-4  # the files' 6 decimals
    table = results.get_benchmark_result()
    assert list(table.columns) == [RANK, "Model", *columns(benchmark.taxonomy)]
    row = {
        k: None if math.isnan(v) else v for k, v in table.iloc[0][list(columns(benchmark.taxonomy))].to_dict().items()
    }
    assert row == pytest.approx(ours)  # pandas writes None as NaN


@pytest.mark.slow  # all-MiniLM-L6-v2 through hteb-score and mteb.evaluate
def test_benchmark_through_mteb_evaluate_equals_hteb_score_protocol_mteb(tmp_path):
    """The sample's Benchmark on one dataset with every transformation (the smallest run with every
    paper axis; the fast tests average over datasets), through `mteb.evaluate`: its aggregation is the
    `--protocol mteb` card's."""
    from models import minilm_path
    from sentence_transformers import SentenceTransformer

    datasets = ["STSBenchmark"]
    out = tmp_path / "out"
    assert (
        main([minilm_path(), "--protocol", "mteb", "--datasets", ",".join(datasets), "--out", str(out), "--quiet"]) == 0
    )
    card = json.loads((out / "result_card.json").read_text())
    benchmark = get_benchmark(SAMPLE_REVISION, datasets=datasets)
    model = SentenceTransformer(minilm_path(), device="cpu")
    result = mteb.evaluate(model, benchmark, cache=None, show_progress_bar=False)
    results = mteb.BenchmarkResults(model_results=[result], benchmark=benchmark)
    [scores] = results.get_aggregated_scores().values()
    ours = {k: v for k, v in scores.items() if k != "Rank"}
    card_figures = _card_figures(card)
    assert ours["Noise"] is None and card_figures["Length"] is not None
    assert _largest_difference(ours, card_figures) < 1e-9  # measured: see docs/mteb-results.md
    assert results.get_benchmark_result().iloc[0]["HTEB"] == pytest.approx(card_figures["HTEB"] / 100, abs=1e-12)


def test_an_undefined_score_is_left_out_as_the_card_leaves_it_out(published, benchmark, tmp_path):
    """A variant whose main score is null (a summary with no spread, say) is skipped by HTEB's rule,
    not averaged as 0 or dropped from mteb's mean of its subsets: the figures are the card's own
    aggregation of its scores with that one undefined."""
    card, root = published
    shutil.copytree(root, tmp_path / "mteb")
    [file] = (tmp_path / "mteb" / "results").glob("*/*/SciFact.hteb-*.paraphrasing.1339.json")
    result = json.loads(file.read_text())
    result["scores"]["test"] = [dict(e, main_score=None) for e in result["scores"]["test"]]
    file.write_text(json.dumps(result))
    loaded = mteb.ResultCache(tmp_path / "mteb").load_results(tasks=benchmark, include_remote=False)
    [scores] = loaded.get_aggregated_scores().values()
    records = [ScoreRecord.from_json(r) for r in card["scores"]]
    undefined = [r.with_value(None) if r.variant == ("SciFact", "paraphrasing", 1339) else r for r in records]
    expected = _card_figures({"aggregates": aggregate(undefined, recorded_in(card))})
    assert expected["Lexical/Stylistic"] != _card_figures(card)["Lexical/Stylistic"]
    assert _largest_difference({k: v for k, v in scores.items() if k != "Rank"}, expected) < 1e-4
    table = loaded.get_benchmark_result()
    assert table.iloc[0]["HTEB"] * 100 == pytest.approx(expected["HTEB"], abs=1e-4)


@given(
    on_error=st.one_of(st.sampled_from(["original", "drop", "keep"]), st.text(max_size=8), st.integers()),
    min_judge=st.one_of(
        st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 10), st.text(max_size=4)
    ),
    datasets=st.one_of(st.none(), st.just([]), st.just("STSBenchmark"), st.just(["STSBenchmark"])),
)
@settings(max_examples=30, deadline=None)
def test_the_python_route_refuses_what_the_cli_refuses_in_one_line(on_error, min_judge, datasets):
    """get_benchmark's selection, checked as the CLI checks its options: an error policy hteb-score knows, a
    judge threshold from 1 to 5, a list naming a dataset; anything else (and a variant the filter leaves
    empty, which mteb cannot evaluate) is one HtebError line, never a KeyError or a format error."""
    valid = (
        on_error in ("original", "drop", "keep")
        and (
            min_judge is None
            or (isinstance(min_judge, (int, float)) and math.isfinite(min_judge) and 1 <= min_judge <= 5)
        )
        and (datasets is None or datasets == ["STSBenchmark"])
    )
    try:
        benchmark = get_benchmark(on_error=on_error, min_judge=min_judge, datasets=datasets)
    except HtebError as err:
        assert "\n" not in str(err)
        assert not valid or "keeps no item" in str(err), err
        return
    assert valid and benchmark.tasks


@pytest.mark.slow  # all-MiniLM-L6-v2 on the sample's datasets
def test_docs_mteb_results_table_is_what_mtebs_readers_give_on_hteb_scores_files(tmp_path):
    """docs/mteb-results.md's table: all-MiniLM-L6-v2 scored by hteb-score under `--protocol mteb` on every
    sample dataset but TwentyNewsgroups, its mteb files read back with mteb's ResultCache and the benchmark of
    the same datasets; the page prints the table's row (6 decimals) and the card's Original and HTEB."""
    from models import minilm_path

    every = [d for d in open_store(DEFAULT_STORE).fetch(SAMPLE_REVISION).dataset_names() if d != "TwentyNewsgroups"]
    out = tmp_path / "out"
    args = [minilm_path(), "--protocol", "mteb", "--datasets", ",".join(every), "--out", str(out), "--quiet"]
    assert main([*args, "--model-name", "sentence-transformers/all-MiniLM-L6-v2"]) == 0
    card = json.loads((out / "result_card.json").read_text())
    results = mteb.ResultCache(out / "mteb").load_results(
        tasks=get_benchmark(SAMPLE_REVISION, datasets=every), include_remote=False
    )
    row = results.get_benchmark_result().iloc[0]
    page = " ".join((Path(__file__).resolve().parents[2] / "docs" / "mteb-results.md").read_text().split())
    cells = " ".join(
        "NaN" if math.isnan(row[c]) else f"{row[c]:.6f}"
        for c in ("Original", "Lexical/Stylistic", "Length", "Language", "HTEB", "Noise")
    )
    assert f"1 sentence-transformers/all-MiniLM-L6-v2 {cells}" in page
    original, hteb = card["aggregates"]["original"], card["aggregates"]["hteb_total"]
    assert f"The card of that run says Original {original:.2f}, HTEB {hteb:.2f}" in page
