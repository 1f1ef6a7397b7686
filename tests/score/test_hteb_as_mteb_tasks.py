"""HTEB as mteb tasks (issue 13 item 2, issue 23 item 3): `mteb.evaluate` on the tasks of a revision,
with mteb's default result cache, equals `hteb-score --protocol mteb` on the same model variant by
variant, and both write mteb's results layout, each variant its own task name, that mteb's own
ResultCache reads back apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hteb_contract.errors import HtebError
from hteb_score import SAMPLE_REVISION
from hteb_score.mteb_interop.layout import parse_variant_task_name, variant_task_name
from models import minilm_path
from hteb_score.cli import main

pytestmark = [
    pytest.mark.slow,
    pytest.mark.xdist_group("mteb-tasks"),
]  # real MiniLM through hteb-score and mteb.evaluate
mteb = pytest.importorskip("mteb")
from sentence_transformers import SentenceTransformer  # noqa: E402

from hteb_score.mteb_interop.tasks import evaluate_tasks, tasks_from_revision  # noqa: E402

STORE = f"file://{Path(__file__).resolve().parents[2] / 'score/hteb_score/sample/store'}"
SELECTION = {"datasets": ["STSBenchmark", "SciFact", "SemRel2024"], "transformations": ["paraphrasing"]}
VARIANTS = {("original", None), ("paraphrasing", 1339)}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """hteb-score --protocol mteb on the selection: (card, its mteb results root)."""
    out = tmp_path_factory.mktemp("hteb") / "out"
    assert (
        main(
            [
                str(minilm_path()),
                "--protocol",
                "mteb",
                "--datasets",
                ",".join(SELECTION["datasets"]),
                "--transformations",
                ",".join(SELECTION["transformations"]),
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    return json.loads((out / "result_card.json").read_text()), out / "mteb"


@pytest.fixture(scope="module")
def model():
    return SentenceTransformer(str(minilm_path()), device="cpu")


@pytest.fixture(scope="module")
def evaluated(model, tmp_path_factory):
    """evaluate_tasks (mteb.evaluate with the model's prompts per variant) into an mteb cache: (results, cache root)."""
    root = tmp_path_factory.mktemp("mteb-cache")
    tasks = tasks_from_revision(STORE, SAMPLE_REVISION, **SELECTION)
    return evaluate_tasks(model, tasks, cache=mteb.ResultCache(root), show_progress_bar=False), root


def _card_scores(card: dict) -> dict[tuple[str, str, int | None], float]:
    return {(r["dataset"], r["transformation"], r["seed"]): r["value"] for r in card["scores"] if r["subset"] == "all"}


def test_tasks_are_mtebs_classes_one_name_per_variant():
    tasks = tasks_from_revision(STORE, SAMPLE_REVISION, **SELECTION)
    assert [(t.hteb_variant.dataset, t.hteb_variant.transformation, t.hteb_variant.seed) for t in tasks] == [
        (d, t, s) for d in SELECTION["datasets"] for t, s in sorted(VARIANTS, key=lambda v: v[1] is not None)
    ]
    mteb_names = {t.hteb_variant.dataset: t.hteb_variant.task for t in tasks}
    assert mteb_names == {"STSBenchmark": "STSBenchmark", "SciFact": "SciFact", "SemRel2024": "SemRel24STS"}
    assert all(type(t) is type(mteb.get_task(t.hteb_variant.task)) for t in tasks)
    # mteb's cache knows a task by its name alone: every variant has its own
    assert len({t.metadata.name for t in tasks}) == len(tasks)
    revision = tasks[0].hteb_variant.revision
    assert tasks[1].metadata.name == variant_task_name("STSBenchmark", revision, "paraphrasing", 1339)
    assert all(parse_variant_task_name(t.metadata.name).task == t.hteb_variant.task for t in tasks)
    pinned = mteb.get_task("STSBenchmark").metadata.revision
    assert {t.metadata.revision for t in tasks} == {revision} != {pinned}


def test_a_filtered_selection_is_another_identity():
    plain = tasks_from_revision(STORE, SAMPLE_REVISION, datasets=["STSBenchmark"], transformations=["paraphrasing"])
    judged = tasks_from_revision(
        STORE, SAMPLE_REVISION, datasets=["STSBenchmark"], transformations=["paraphrasing"], min_judge=3
    )
    assert plain[0].metadata.name == judged[0].metadata.name  # the original is not filtered
    assert judged[1].metadata.name == plain[1].metadata.name + ".judge3"


def test_mteb_evaluate_equals_hteb_score_protocol_mteb(scored, evaluated):
    card, _ = scored
    results, _ = evaluated
    ours = _card_scores(card)
    assert {(v.dataset, v.transformation, v.seed) for v in results} == set(ours)
    for variant, result in results.items():
        assert result.get_score() == pytest.approx(
            ours[(variant.dataset, variant.transformation, variant.seed)], abs=1e-9
        ), variant


def _largest_difference(outcome, tasks, ours) -> float:
    return max(
        abs(result.get_score() - ours[(t.hteb_variant.dataset, t.hteb_variant.transformation, t.hteb_variant.seed)])
        for t, result in zip(tasks, outcome.task_results, strict=True)
    )


def test_mteb_evaluate_with_mtebs_default_cache_gives_every_variant_its_own_score(model, scored, tmp_path, monkeypatch):
    """The issue's literal use: `mteb.evaluate(model, tasks)`, no cache argument, so mteb's default
    cache, which already holds a result for mteb's own task and for the HTEB original."""
    default = mteb.evaluate.__kwdefaults__["cache"]
    monkeypatch.setattr(default, "cache_path", tmp_path)
    tasks = tasks_from_revision(STORE, SAMPLE_REVISION, **SELECTION)
    ours = _card_scores(scored[0])
    mteb.evaluate(model, tasks[:1], show_progress_bar=False)  # the cache now holds the HTEB original's result
    [folder] = (tmp_path / "results").glob("*/*")
    stale = json.loads((folder / f"{tasks[0].metadata.name}.json").read_text())
    (folder / "STSBenchmark.json").write_text(
        json.dumps(
            dict(
                stale,
                task_name="STSBenchmark",
                scores={"test": [dict(e, main_score=0.123) for e in stale["scores"]["test"]]},
            )
        )
    )  # mteb's own task, other data
    outcome = mteb.evaluate(model, tasks, show_progress_bar=False)
    # equal but for the order of a mean over subsets (1.1e-16 measured), never the cached 0.123 or another variant's
    assert _largest_difference(outcome, tasks, ours) < 1e-12
    again = mteb.evaluate(model, tasks, show_progress_bar=False)  # now every variant is served from the cache
    assert _largest_difference(again, tasks, ours) < 1e-12
    assert {p.stem for p in folder.glob("*.hteb-*.json")} == {t.metadata.name for t in tasks}


def test_plain_mteb_evaluate_runs_the_tasks_in_order(model, scored):
    """The issue's literal use: mteb.evaluate(model, tasks) with no cache, results in the tasks' order."""
    tasks = tasks_from_revision(STORE, SAMPLE_REVISION, datasets=["STSBenchmark"], transformations=["paraphrasing"])
    outcome = mteb.evaluate(model, tasks, cache=None, show_progress_bar=False)
    ours = _card_scores(scored[0])
    assert [r.get_score() for r in outcome.task_results] == pytest.approx(
        [ours[("STSBenchmark", t.hteb_variant.transformation, t.hteb_variant.seed)] for t in tasks], abs=1e-9
    )


def _layout(root: Path) -> dict[str, dict]:
    """Task files under the one model/revision folder of a results root: file name -> JSON."""
    [revision] = [p for p in (root / "results").glob("*/*") if p.is_dir()]
    return {p.name: json.loads(p.read_text()) for p in revision.glob("*.json") if p.name != "model_meta.json"}


def test_hteb_score_writes_mtebs_layout_for_every_variant(scored, evaluated):
    ours, theirs = _layout(scored[1]), _layout(evaluated[1])
    revision = scored[0]["dataset"]["revision"]
    assert (
        set(ours)
        == set(theirs)
        == {
            f"{variant_task_name(task, revision, t, s)}.json"
            for t, s in VARIANTS
            for task in ("STSBenchmark", "SciFact", "SemRel24STS")
        }
    )
    for path, result in ours.items():
        mine = {e["hf_subset"]: e["main_score"] for e in result["scores"]["test"]}
        mtebs = {e["hf_subset"]: e["main_score"] for e in theirs[path]["scores"]["test"]}
        assert mine == pytest.approx(mtebs, abs=1e-6), path
        assert result["dataset_revision"] == theirs[path]["dataset_revision"], path


def test_mtebs_result_cache_reads_what_hteb_score_wrote_apart(scored):
    """mteb's documented reader: every variant a task of its own, and to_dataframe one row per variant."""
    card, root = scored
    loaded = mteb.ResultCache(root).load_results(include_remote=False)
    [model_result] = loaded.model_results
    by_task = {t.task_name: t.get_score() for t in model_result.task_results}
    ours = _card_scores(card)
    revision = card["dataset"]["revision"]
    assert by_task[variant_task_name("SemRel24STS", revision, "original", None)] == pytest.approx(
        ours[("SemRel2024", "original", None)], abs=1e-6
    )
    assert by_task[variant_task_name("SciFact", revision, "paraphrasing", 1339)] == pytest.approx(
        ours[("SciFact", "paraphrasing", 1339)], abs=1e-6
    )
    frame = loaded.to_dataframe()
    assert len(frame) == len(by_task) == len(ours)


def test_refused_a_task_not_made_from_a_revision(model):
    with pytest.raises(HtebError, match="not an HTEB task .*STSBenchmark"):
        evaluate_tasks(model, [mteb.get_task("STSBenchmark")])


def test_refused_a_transformation_the_revision_lacks():
    with pytest.raises(HtebError, match="has no transformation 'numerisation'"):
        tasks_from_revision(STORE, SAMPLE_REVISION, datasets=["STSBenchmark"], transformations=["numerisation"])


def _compare(*args) -> dict:
    out = Path(args[-1])
    assert main(["compare", *map(str, args[:-1]), "--out", str(out)]) == 0
    return json.loads((out / "comparison.json").read_text())


def _per_dataset(comparison: dict) -> dict:
    return {row["model"]: row for row in comparison["leaderboard"]}


def test_compare_reads_hteb_scores_mteb_folder_as_its_card(scored, tmp_path):
    card, root = scored
    from_card = _compare(Path(root).parent / "result_card.json", tmp_path / "a")
    from_folder = _compare("--mteb-results", root, tmp_path / "b")
    assert from_folder["datasets"] == from_card["datasets"] == sorted(SELECTION["datasets"])
    [a], [b] = from_card["leaderboard"], from_folder["leaderboard"]
    assert b["model"] == a["model"] and b["original"] == pytest.approx(a["original"], abs=1e-4)
    assert b["axes"] == pytest.approx(a["axes"], abs=1e-4) and b["hteb"] == pytest.approx(a["hteb"], abs=1e-4)
    assert from_folder["inputs"][0]["dataset_revision"] == card["dataset"]["revision"]


def test_compare_names_mteb_evaluate_results_as_the_cards_datasets(scored, evaluated, tmp_path):
    """mteb.evaluate's files name tasks only (SemRel24STS); the card beside them says which dataset
    that is, so both models are compared on the same three datasets, with equal numbers."""
    card, root = scored
    comparison = _compare(Path(root).parent / "result_card.json", "--mteb-results", evaluated[1], tmp_path / "c")
    assert comparison["datasets"] == sorted(SELECTION["datasets"])
    rows = _per_dataset(comparison)
    assert len(rows) == 2
    ours, theirs = rows[card["model"]["model_id"]], rows["no_model_name/available"]
    assert theirs["original"] == pytest.approx(ours["original"], abs=1e-4)
    assert theirs["hteb"] == pytest.approx(ours["hteb"], abs=1e-4)
