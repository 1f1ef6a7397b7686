"""The Hub export attaches (issue 33 item 3): on real scored runs of the bundled sample and of a
revision with the Noise axis, everything written parses with huggingface_hub's own parsers
(`ModelCard` for the model-index, `parse_eval_result_entries` for `.eval_results`), every task id is
one the revision's eval.yaml declares or one the written `add-to-dataset-eval.yaml` adds, every
figure of result_card.md is written under its own task, and different selections never share an id.

The runs are scored by the real read, scoring and card code with hashed bag-of-words embeddings
(tests/score/scored_parts.py): the figures are real, the model needs no download.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from huggingface_hub import ModelCard, parse_eval_result_entries
from scored_parts import scored_part
from test_noise_axis import NAMES, NOISE, PAPER, SEED, transformed

from hteb_contract.hub_eval import AVERAGE, PROTOCOLS, Selection, declared_ids, revision_eval_yaml
from hteb_contract.revision import EVAL, Revision
from hteb_contract.stores import open_store
from hteb_contract.stores.local import LocalStore
from hteb_contract.taxonomy import AXIS_LABELS, PAPER_AXES
from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from hteb_score.evaluators.protocol import PROTOCOLS as SCORER_PROTOCOLS
from hteb_score.report.compare.inputs import load_card
from hteb_score.report.card.model_index import (
    AVERAGE_CATEGORY,
    EVAL_ADDITIONS,
    MODEL_INDEX,
    eval_results_path,
    hub_files,
    is_main,
)
from hteb_score.report.card.run_outputs import publish
from hteb_score.scoring.data import chosen_part
from hteb_score.scoring.selection import PRESETS
from revision_factory import build_revision

HUB_ID = "hteb/sample"


def scored_card(part, folder: Path) -> Path:
    """The run's result_card.json as `hteb-score` writes it, its store as if it were on the Hub."""
    card = publish(part, folder)
    card["dataset"]["repo_id"] = f"hf://{HUB_ID}"
    path = folder / "hub_card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    return path


def eval_yaml_of(revision: Revision) -> str:
    return revision_eval_yaml(revision.manifest, {n: revision.variants(n) for n in revision.dataset_names()})


@pytest.fixture(scope="module")
def sample() -> Revision:
    return open_store(f"file://{SAMPLE_STORE}").fetch(SAMPLE_REVISION)


@pytest.fixture(scope="module")
def noise_store(tmp_path_factory, shared_data) -> Path:
    """A revision with the paper's three axes and Noise (test_noise_axis's rules), in a local store."""
    root = tmp_path_factory.mktemp("noise") / "rev"
    build_revision(
        root,
        shared_data,
        NAMES[:2],
        label="noise-1",
        rows=12,
        transformations=(*PAPER, *NOISE),
        seeds=(SEED,),
        edit=transformed,
    )
    store = tmp_path_factory.mktemp("store")
    LocalStore(store).publish(root)
    return store


@pytest.fixture(scope="module")
def runs(tmp_path_factory, noise_store) -> dict[str, Path]:
    """Cards of real runs: four of the sample's datasets, two of them, one dataset under mteb's protocol
    and under one transformation, and the whole Noise revision."""
    out = tmp_path_factory.mktemp("runs")
    noise = {"store": f"file://{noise_store}", "ref": "noise-1"}
    parts = {
        "four": scored_part(None),
        "two": scored_part(None, planned=["SciFact", "STSBenchmark"]),
        "mteb": scored_part(None, planned=["STSBenchmark"], protocol="mteb"),
        "paraphrasing": scored_part(None, planned=["STSBenchmark"], transformations=["paraphrasing"]),
        "noise": scored_part(None, planned=NAMES[:2], **noise),
    }
    return {name: scored_card(part, out / name) for name, part in parts.items()}


def written(path: Path) -> dict[str, str]:
    return hub_files(load_card(path))


def eval_results_text(files: dict[str, str]) -> str:
    (path,) = [p for p in files if p.startswith(".eval_results/")]
    return files[path]


def eval_result_ids(files: dict[str, str]) -> list[str]:
    return [e.task_id for e in parse_eval_result_entries(yaml.safe_load(eval_results_text(files)))]


# --- every figure, parsed by huggingface_hub --------------------------------------------------------------------


HEADLINE = {
    "Original": "original",
    "HTEB": "hteb_total",
    "delta": "hteb_total_delta",
    **{AXIS_LABELS[a]: f"hteb_{a}" for a in AXIS_LABELS},
    **{f"{AXIS_LABELS[a]} delta": f"hteb_{a}_delta" for a in AXIS_LABELS},
}
NUMBER = re.compile(r"^[+-]?\d+\.\d+")


def card_figures(markdown: str) -> dict[tuple[str, str], float]:
    """(row, column) -> value of every number in result_card.md's tables of scores: the headline (the
    model row and each dataset's), the per-axis and the per-transformation tables."""
    figures: dict[tuple[str, str], float] = {}
    lines = markdown.splitlines()
    cells = lambda line: [c.strip() for c in line.strip().strip("|").split("|")]  # noqa: E731

    def table(header: str) -> tuple[list[str], list[list[str]]]:
        start = next(i for i, line in enumerate(lines) if line.startswith(header))
        body = list(itertools.takewhile(lambda line: line.startswith("|"), lines[start + 2 :]))
        return cells(lines[start]), [cells(line) for line in body]

    def put(row: str, column: str, cell: str) -> None:
        if NUMBER.match(cell):
            figures[(row, column)] = float(NUMBER.match(cell)[0])

    head, body = table("| | Original |")
    for row in body:
        name = AVERAGE if row[0] == "**model**" else row[0].split(" (")[0]
        for label, cell in zip(head[1:], row[1:]):
            put(name, HEADLINE[label], cell)
    axes = {label: axis for axis, label in AXIS_LABELS.items()}
    for row in table("| axis | datasets |")[1]:
        put(AVERAGE, f"hteb_{axes[row[0]]}", row[3])
        put(AVERAGE, f"hteb_{axes[row[0]]}_delta", row[4])
    for row in table("| transformation | axis |")[1]:
        put(AVERAGE, row[0], row[2])
        put(AVERAGE, f"{row[0]}_delta", row[3])
    return figures


@pytest.mark.parametrize("run", ["four", "noise"])
def test_every_card_figure_is_written_and_parses_with_huggingface_hub(runs, run):
    path = runs[run]
    files, card = written(path), json.loads(path.read_text())
    markdown = (path.parent / "result_card.md").read_text(encoding="utf-8")
    expected = card_figures(markdown)
    assert len(expected) > 40

    model_card = ModelCard(f"---\n{files[MODEL_INDEX]}---\n")  # raises on a model-index it cannot parse
    results = model_card.data.eval_results
    assert model_card.data.model_name == "hashed-bow"
    raw = yaml.safe_load(files[MODEL_INDEX])["model-index"][0]["results"]
    assert len(raw) == len(results) and all(len(r["metrics"]) == 1 for r in raw)  # each metric its own task
    names = [r.task_name for r in results]
    assert len(set(names)) == len(names)
    by_figure = {tuple(r.task_name.split(".")[:2]): r for r in results}
    main = {figure: value for figure, value in expected.items() if is_main(figure[1])}
    assert set(main) <= set(by_figure) and all(is_main(column) for _, column in by_figure)
    assert len(main) < len(expected)  # deltas and transformations stay in the card
    for (row, column), value in main.items():
        result = by_figure[(row, column)]
        assert result.metric_value == value, (row, column)
        assert result.dataset_config == (None if row == AVERAGE else row)
        assert result.source_url.startswith(f"https://huggingface.co/datasets/{HUB_ID}/tree/")

    entries = parse_eval_result_entries(yaml.safe_load(eval_results_text(files)))
    values = {tuple(e.task_id.split(".")[:2]): e.value for e in entries}
    assert {figure: values.get(figure) for figure in expected} == expected  # every figure, deltas too
    assert [e.task_id for e in entries if is_main(e.task_id.split(".")[1])] == names
    assert {e.dataset_id for e in entries} == {HUB_ID} and {e.dataset_revision for e in entries} == {
        card["dataset"]["revision"]
    }
    assert all(e.date == card["created"] and "protocol=hteb" in e.notes for e in entries)


def test_noise_is_written_under_its_own_task(runs):
    """The two bugs of the issue: Noise missing from `.eval_results`, and filed under `*.original`."""
    files, card = written(runs["noise"]), json.loads(runs["noise"].read_text())
    ids = eval_result_ids(files)
    assert {"average.hteb_noise", "average.hteb_noise_delta", "STSBenchmark.hteb_noise"} <= set(ids)
    metric_of = {row["dataset"]: row["metric"] for row in card["aggregates"]["per_dataset"]} | {AVERAGE: AVERAGE}
    for result in yaml.safe_load(files[MODEL_INDEX])["model-index"][0]["results"]:
        (metric,) = result["metrics"]
        row, column = result["task"]["name"].split(".")[:2]
        assert metric["type"] == ("main_score" if row == AVERAGE else metric_of[row]) and is_main(column)


def test_the_model_index_holds_one_main_score_per_task_in_the_hubs_task_categories(runs):
    """As mteb's create-meta writes it: per task one metric, the dataset's main one; no delta published
    as a metric; task types from one vocabulary (the Hub's categories), STR filed as sentence similarity."""
    categories = {"sentence-similarity", "text-classification", "text-retrieval", "summarization", "text-ranking"}
    for run, path in runs.items():
        raw = yaml.safe_load(written(path)[MODEL_INDEX])["model-index"][0]["results"]
        keys = [(r["task"]["name"], r["metrics"][0]["type"]) for r in raw]
        assert len(set(keys)) == len(keys) and len({name for name, _ in keys}) == len(keys), run
        assert not any("delta" in name or "delta" in metric for name, metric in keys), run
        types = {r["task"]["type"] for r in raw}
        assert AVERAGE_CATEGORY in types and types - {AVERAGE_CATEGORY} <= categories, run


def test_two_revisions_scored_for_one_model_leave_two_eval_results_files(runs):
    paths = {run: next(p for p in written(path) if p.startswith(".eval_results/")) for run, path in runs.items()}
    assert paths["noise"] == ".eval_results/hteb-noise-1.yaml"
    assert paths["two"] != paths["four"] != paths["noise"] != paths["two"]  # another selection, another file
    assert len(set(paths.values())) == len(paths)


@given(label=st.one_of(st.none(), st.text(min_size=1, max_size=40)), revision=st.text(min_size=1, max_size=64))
def test_an_eval_results_file_is_named_inside_its_folder_whatever_the_label(runs, label, revision):
    card = json.loads(runs["noise"].read_text())
    card["dataset"].update(label=label, revision=revision)
    path = eval_results_path(card)
    folder, name = path.split("/")
    assert folder == ".eval_results" and name.startswith("hteb-") and name.endswith(".yaml")
    assert re.fullmatch(r"hteb-[A-Za-z0-9_-][A-Za-z0-9_.-]*\.yaml", name)


# --- every id declared ------------------------------------------------------------------------------------------


def test_every_task_id_is_declared_by_the_revision_or_by_the_additions_written_beside(runs, sample, noise_store):
    revisions = {"noise": open_store(f"file://{noise_store}").fetch("noise-1")}
    for run, path in runs.items():
        files = written(path)
        revision = revisions.get(run, sample)
        declared = declared_ids(eval_yaml_of(revision))
        if run == "noise":  # the revision's own eval.yaml, as write_revision wrote it
            assert declared == declared_ids((revision.root / EVAL).read_text(encoding="utf-8"))
        added = declared_ids(files.get(EVAL_ADDITIONS, ""))
        ids = set(eval_result_ids(files))
        assert ids <= declared | added and not added & declared, run
        assert added == {i for i in ids if i not in declared}, run  # the additions are exactly the ad hoc ids
        if EVAL_ADDITIONS in files:
            meta = yaml.safe_load(files[EVAL_ADDITIONS])
            assert set(meta) == {"name", "description", "evaluation_framework", "tasks"}
    # the whole Noise revision attaches as it is; four of the sample's eight datasets need their average added
    assert EVAL_ADDITIONS not in written(runs["noise"])
    assert {i.split(".")[0] for i in declared_ids(written(runs["four"])[EVAL_ADDITIONS])} == {AVERAGE}


def test_the_declared_protocols_are_the_scorers():
    assert set(PROTOCOLS) == set(SCORER_PROTOCOLS.names())


def test_compare_writes_the_additions_and_says_so(runs, tmp_path, run_cli):
    code, _, err = run_cli("compare", runs["four"], "--out", tmp_path / "cmp", "--splits", "5")
    assert code == 0, err
    folder = tmp_path / "cmp" / "model_index" / "hashed-bow"
    named = eval_results_path(json.loads(runs["four"].read_text())).split("/")[1]
    assert {p.name for p in folder.rglob("*") if p.is_file()} == {MODEL_INDEX, named, EVAL_ADDITIONS}
    assert (folder / EVAL_ADDITIONS).read_text() == written(runs["four"])[EVAL_ADDITIONS]
    assert f"model_index/hashed-bow/{EVAL_ADDITIONS} lists task ids the revision's eval.yaml does not declare" in err


# --- selections apart -------------------------------------------------------------------------------------------


def test_runs_of_different_selections_share_no_average_id_and_a_dataset_keeps_its_own(runs):
    ids = {run: set(eval_result_ids(written(path))) for run, path in runs.items()}
    averages = {run: {i for i in found if i.startswith(f"{AVERAGE}.")} for run, found in ids.items()}
    for a, b in itertools.combinations(averages, 2):
        assert averages[a].isdisjoint(averages[b]), (a, b)
    sts = {run: {i for i in found if i.startswith("STSBenchmark.")} for run, found in ids.items() if run != "noise"}
    assert sts["four"] == sts["two"]  # the same figures of the same dataset: one leaderboard
    values = [
        {e.task_id: e.value for e in parse_eval_result_entries(yaml.safe_load(eval_results_text(written(runs[r]))))}
        for r in ("four", "two")
    ]
    assert all(values[0][i] == values[1][i] for i in sts["four"])
    for other in ("mteb", "paraphrasing"):
        assert sts[other].isdisjoint(sts["four"]), other
    assert all(i.endswith(".mteb") for i in sts["mteb"]) and all(".sel_" in i for i in sts["paraphrasing"])
    notes = [
        e.notes for e in parse_eval_result_entries(yaml.safe_load(eval_results_text(written(runs["paraphrasing"]))))
    ]
    assert all("transformations=paraphrasing" in n for n in notes)


SELECTIONS = [
    Selection(protocol=p, min_judge=j, on_error=e, datasets=d, transformations=t, seeds=s)
    for p, j, e, d, t, s in itertools.product(
        PROTOCOLS,
        (None, 3.0, 3.5),
        ("original", "drop"),
        (None, ("SciFact",), ("SciFact", "STSBenchmark")),
        (None, ("paraphrasing",), ("paraphrasing", "translation")),
        (None, (1339,)),
    )
]


def test_generated_selections_get_distinct_ids_and_only_whole_revisions_are_declared():
    """Every combination of protocol, judge filter, error policy and part: the average's tags all
    differ; a dataset's differ unless only the datasets do (its figures are the same then)."""
    average_tags = [s.tag(AVERAGE) for s in SELECTIONS]
    assert len(set(average_tags)) == len(SELECTIONS)
    by_rest = {}
    for s in SELECTIONS:
        by_rest.setdefault((s.protocol, s.min_judge, s.on_error, s.transformations, s.seeds), set()).add(
            s.tag("SciFact")
        )
    assert all(len(tags) == 1 for tags in by_rest.values()) and len(set().union(*by_rest.values())) == len(by_rest)
    for s in SELECTIONS:
        whole = s.on_error == "original" and s.min_judge in (None, 3.0) and s.transformations is s.seeds is None
        assert s.declared("SciFact") == whole and s.declared(AVERAGE) == (whole and s.datasets is None)


def test_a_preset_is_the_part_it_chooses(sample):
    """--preset minimal names the part of the revision it chooses: the ids of the same part asked for
    with --datasets/--transformations, none of the whole revision's; --preset full is the whole."""
    datasets, transformations = PRESETS.get("minimal").choose(sample)
    minimal = Selection(
        **{k: None if v is None else tuple(v) for k, v in chosen_part(sample, datasets, transformations, None).items()},
        preset="minimal",
    )
    asked = Selection(datasets=tuple(sorted(datasets)), transformations=tuple(sorted(transformations)))
    assert minimal.tag(AVERAGE) == asked.tag(AVERAGE) != Selection().tag(AVERAGE)
    assert "preset=minimal" in minimal.notes(AVERAGE) and not minimal.declared("STSBenchmark")
    full = chosen_part(sample, *PRESETS.get("full").choose(sample), None)
    assert full == {"datasets": None, "transformations": None, "seeds": None}
    assert (
        chosen_part(sample, list(reversed(sample.dataset_names())), list(sample.manifest["transformations"]), [SEED])
        == full
    )  # all of the revision, however asked for


def test_the_bundled_sample_needs_its_judge_ids(sample):
    """The sample is judged: its eval.yaml declares the paper's threshold too, under both protocols."""
    declared = declared_ids(eval_yaml_of(sample))
    assert {
        "STSBenchmark.hteb_total.judge3",
        "average.hteb_total.mteb.judge3",
        "average.paraphrasing_delta",
    } <= declared
    assert not any(".sel_" in i or "onerror" in i for i in declared)
    assert all(f"average.hteb_{a}" in declared for a in PAPER_AXES)


def test_a_task_type_hteb_score_does_not_know_is_filed_as_the_embedding_task(runs, tmp_path):
    """A card naming a task type outside the table (an older or hand-made card) still gets a Hub task category."""
    card = json.loads(runs["noise"].read_text())
    dataset = card["scores"][0]["dataset"]
    for record in card["scores"]:
        if record["dataset"] == dataset:
            record["task_type"] = "CLS"
    path = tmp_path / "card.json"
    path.write_text(json.dumps(card), encoding="utf-8")
    raw = yaml.safe_load(hub_files(load_card(path))[MODEL_INDEX])["model-index"][0]["results"]
    types = {r["dataset"].get("config"): r["task"]["type"] for r in raw}
    assert types[dataset] == AVERAGE_CATEGORY and types[None] == AVERAGE_CATEGORY
