"""The dataset table (hteb_contract/specs/datasets.yaml) against the installed mteb's task metadata
(one test, every row: pin, splits, subsets and languages, loading, main score, evaluation settings,
licence, citation, plan statistics), SPEC.md's pin table and the paper's dataset tables; its readers
in both programs (the generator's registry, the scorer's `mteb` protocol); the local copies it
points to; and a bad table refused in one line."""

from __future__ import annotations

import json
import re
from dataclasses import fields
from pathlib import Path

import pytest

from hteb_contract.errors import ContractError, HtebError
from hteb_contract.sources import read_source_dir
from hteb_contract.specs import datasets as spec_module
from hteb_contract.specs.datasets import TABLE, DatasetSpec, dataset_specs, load_dataset_specs, registry_specs
from hteb_contract.mteb_settings import (
    MTEB_VERSION,
    ClassificationSettings,
    ClusteringSettings,
    PairClassificationSettings,
    RetrievalSettings,
    STSSettings,
    SummarizationSettings,
)
from hteb_contract.tasks import task_type
from hteb_generate.sources.sources_table import SAMPLE_DATASETS, SOURCES, lookup_source
from hteb_score.evaluators import task_settings
from hteb_score.evaluators.protocol import PROTOCOLS

mteb = pytest.importorskip("mteb")

TESTS = Path(__file__).resolve().parents[1]
SPEC = TESTS.parents[1] / "shared" / "SPEC.md"
MTEB_NAMED = TESTS / "data" / "mteb-subsets"
ROWS = {spec.name: spec for spec in dataset_specs()}
#: Attributes a task class may set that do not change what is evaluated: loading and the abstract
#: class's own bookkeeping (dataset_transform: mteb's Hub rows -> its columns, HTEB's rows are made).
NOT_EVALUATION = {"_abc_impl", "metadata", "fast_loading", "dataset_transform"}
#: The abstract class of each settings kind (clustering: by its `kind`).
ABSTASK = {
    ClassificationSettings: "AbsTaskClassification",
    RetrievalSettings: "AbsTaskRetrieval",
    STSSettings: "AbsTaskSTS",
    SummarizationSettings: "AbsTaskSummarization",
    PairClassificationSettings: "AbsTaskPairClassification",
}
#: The fields of each task type whose mteb descriptive statistics a row's `stats` holds, in order.
STAT_FIELDS = {
    "Retrieval": ("queries",),
    "Reranking": ("queries",),
    "STS": ("text1", "text2"),
    "PairClassification": ("text1", "text2"),
    "Summarization": ("human_summaries", "machine_summaries"),
    "Classification": ("text",),
    "Clustering": ("text",),
}


def _registry() -> list[DatasetSpec]:
    return list(registry_specs())


def _abstask(task: object) -> str:
    return next(c.__name__ for c in type(task).__mro__ if c.__module__.startswith("mteb.abstasks"))


def _check_evaluation(row: DatasetSpec, task: object) -> None:
    """The row's evaluation settings are what the task object reads, and its class sets nothing else."""
    settings = row.evaluation
    if isinstance(settings, ClusteringSettings):
        assert _abstask(task) == {"fast": "AbsTaskClustering", "legacy": "AbsTaskClusteringLegacy"}[settings.kind]
    else:
        assert _abstask(task) == ABSTASK[type(settings)]
    mirrored = () if isinstance(settings, ClusteringSettings) and settings.kind == "legacy" else settings.MTEB
    for attribute in mirrored:
        theirs = getattr(task, attribute)
        assert getattr(settings, attribute) == (tuple(theirs) if isinstance(theirs, list) else theirs), attribute
    if isinstance(settings, ClassificationSettings):
        model = task.evaluator_model
        assert type(model).__name__ == settings.classifier and model.max_iter == settings.max_iter
        # sklearn's defaults otherwise; random_state mteb sets from the task's seed when it evaluates (on an estimator
        # its task classes share, so an evaluation earlier in this process has already set it)
        defaults = type(model)().get_params()
        found = {k: v for k, v in model.get_params().items() if k != "random_state"}
        assert found == {k: v for k, v in {**defaults, "max_iter": settings.max_iter}.items() if k != "random_state"}
        assert model.get_params()["random_state"] in (None, task.seed)
    if isinstance(settings, SummarizationSettings):
        assert (task.evaluator.__name__ == "DeprecatedSummarizationEvaluator") == settings.deprecated
    # a task class overriding anything else (a future mteb's new setting) fails here
    own = {
        k
        for cls in type(task).__mro__
        if not cls.__module__.startswith("mteb.abstasks") and cls.__module__.startswith("mteb")
        for k in vars(cls)
        if not k.startswith("__")
    }
    assert own - set(settings.MTEB) - {"evaluator", "evaluator_model"} - NOT_EVALUATION == set()


def _check_stats(row: DatasetSpec, metadata: object) -> None:
    """Each subset's counts are mteb's descriptive statistics of the eval split, the script its langscript's."""
    assert row.stats is not None and set(row.stats) == set(row.subsets)
    stats = metadata.descriptive_stats[row.eval_split]
    by_subset = stats.get("hf_subset_descriptive_stats") or {"default": stats}
    for subset, table in row.stats.items():
        scripts = [code.split("-")[1] for code in metadata.hf_subsets_to_langscripts[subset]]
        for index, (field, got) in enumerate(zip(STAT_FIELDS[metadata.type], table, strict=True)):
            want = by_subset[subset][f"{field}_text_statistics" if field == "queries" else f"{field}_statistics"]
            assert (got.unique, got.chars) == (want["unique_texts"], want["total_text_length"]), subset
            assert got.texts == round(want["total_text_length"] / want["average_text_length"]), subset
            pair = metadata.type in ("STS", "PairClassification")
            assert got.script == scripts[min(index, len(scripts) - 1) if pair else 0], subset


@pytest.mark.parametrize("name", list(ROWS))
def test_each_row_is_the_installed_mteb_s_task_metadata(name):
    row = ROWS[name]
    if row.mteb_task is None:
        pytest.skip("not an mteb task: nothing of mteb's to compare")
    task = mteb.get_task(row.mteb_task)
    meta = task.metadata
    assert meta.dataset == {"path": row.hf_path, "revision": row.hf_revision}  # nothing else to pass to load_dataset
    assert row.eval_split in meta.eval_splits
    assert row.main_score == meta.main_score
    assert [task_type(row.task_type).hub_category] == meta._hf_task_type()
    # The English datasets evaluate mteb's English subsets, the multilingual ones all of mteb's.
    expected = mteb.get_task(row.mteb_task, languages=["eng"]).hf_subsets if row.english else meta.hf_subsets
    assert list(row.subsets) == list(expected)
    for subset, codes in row.subsets.items():
        assert [code.split("-")[0] for code in meta.hf_subsets_to_langscripts[subset]] == list(codes), subset
    assert row.fast_loading == bool(getattr(type(task), "fast_loading", False))
    assert row.cluster_sets == ("AbsTaskClusteringLegacy" in [c.__name__ for c in type(task).__mro__])
    if row.task_type == "Classification":
        assert row.train_split == task.train_split
    if row.renames:  # sent1/sent2 -> sentence1/sentence2 is the task's own dataset_transform
        assert "dataset_transform" in vars(type(task))
        assert (task.input1_column_name, task.input2_column_name) == tuple(row.renames.values())
    _check_evaluation(row, task)
    # licence: mteb's record mapped to a Hub id as mteb maps it for its own cards, unless the release states another
    assert row.license == meta.license
    stated = row.source_license
    assert stated.license == (row.release_license.license if row.release_license else meta._hf_license())
    assert stated.link.startswith("https://")
    assert row.citation == (meta.bibtex_citation.strip() or None if meta.bibtex_citation else None)
    # the dataset's own paper only where mteb cites another work: it is what HTEB cites
    assert row.release_citation is None or row.release_citation != row.citation
    assert row.source_citation == (row.release_citation or row.citation)
    if row.registry:
        _check_stats(row, meta)


def _spec_rows() -> dict[str, dict[str, str]]:
    rows = {}
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9a-f]{40}", cells[3]):
            rows[cells[0]] = {"type": cells[1], "hf_path": cells[2], "revision": cells[3], "splits": cells[5]}
    return rows


def test_32_datasets_from_the_31_pins_of_spec():
    rows = _spec_rows()
    assert (
        len(rows) == 31
        and len(SOURCES) == 32
        and [name for name, _ in SOURCES.items()] == [e.name for e in _registry()]
    )
    assert {e.mteb_task for e in _registry()} == set(rows)
    assert [e.name for e in _registry() if e.mteb_task == "SemRel24STS"] == ["SemRel2024-eng", "SemRel2024"]
    assert sum(e.english for e in _registry()) == 19 and sum(not e.english for e in _registry()) == 13  # Tables 9, 10
    for entry in _registry():
        row = rows[entry.mteb_task]
        assert (entry.hf_path, entry.hf_revision) == (row["hf_path"], row["revision"]), entry.name
        assert entry.task_type == ("STR" if entry.mteb_task == "SemRel24STS" else row["type"])
        assert entry.eval_split in [s.strip() for s in row["splits"].split(",")], entry.name


def test_languages_the_paper_lists_that_mteb_lacks():
    """The paper's Tables 9-10 against mteb's subsets: only SemRel2024 lists languages mteb has no data for."""
    missing = {e.name: e.languages_not_in_mteb for e in _registry() if e.languages_not_in_mteb}
    assert missing == {"SemRel2024": ("pan", "spa")}
    for entry in _registry():
        assert set(entry.languages) <= set(entry.paper_languages), entry.name
    every = {code for e in _registry() for code in e.paper_languages}
    assert len(every) == 45  # the paper's Table 11: 45 codes


def test_the_docstring_counts_the_registry():
    counted = re.search(r"the (\d+) source datasets of the HTEB paper", spec_module.__doc__ or "")
    assert counted and int(counted.group(1)) == len(SOURCES) == len(_registry()) == 32
    assert not [r.name for r in dataset_specs() if not r.registry and r.paper_languages]


def test_retrieval_and_reranking_transform_queries_only():
    for entry in _registry():
        fields_ = entry.info.transformed_fields()
        if entry.task_type in ("Retrieval", "Reranking"):
            assert fields_ == ["queries.text"]
        elif entry.task_type == "Classification":
            assert fields_ == [f"{entry.eval_split}.text"]


def test_local_copies_agree_with_the_registry(shared_data: Path):
    for name in (*SAMPLE_DATASETS, "SemRel2024-eng"):
        entry = lookup_source(name)
        dataset = read_source_dir(shared_data / str(entry.local))
        assert dataset.info.task_type == entry.task_type
        assert dataset.info.eval_split == entry.eval_split
        assert dataset.info.mteb_task == entry.mteb_task
        assert {s: dataset.info.subsets[s] for s in entry.subsets} == dict(entry.subsets)


def test_lookup_by_any_name_and_unknown_names():
    assert lookup_source("SemRel24STS").name == lookup_source("SemRel2024").name == "SemRel2024"
    assert lookup_source("SemRel2024-eng").subsets == {"eng": ("eng",)}
    assert lookup_source("TwentyNewsgroupsClustering.v2").local == "TwentyNewsgroups"
    with pytest.raises(HtebError, match="unknown dataset 'STSBenchmrk' \\(did you mean 'STSBenchmark'\\?\\); known: "):
        lookup_source("STSBenchmrk")
    with pytest.raises(HtebError, match="did you mean 'SemRel24STS'"):
        lookup_source("SemRel24STSS")
    with pytest.raises(HtebError, match="unknown dataset 'STS12'"):  # a row, but not one of HTEB's datasets
        lookup_source("STS12")


def test_a_folder_no_entry_names_is_a_dataset_of_its_data_dir():
    entry = lookup_source("STSBCrossLingual", data_dir=MTEB_NAMED)
    assert (entry.name, entry.task_type, entry.local, entry.mteb_task) == (
        "STSBCrossLingual",
        "STS",
        "STSBCrossLingual",
        None,
    )
    assert entry.subsets == {"en-de": ("eng", "deu"), "en-en": ("eng",)}
    assert (entry.source_license.license, entry.source_license.link, entry.citation) == ("unknown", None, None)
    with pytest.raises(HtebError, match="unknown dataset 'STSBCrossLingual'"):
        lookup_source("STSBCrossLingual")


# --- the scorer's mteb protocol -----------------------------------------------------------------


def _named_tasks(shared_data: Path) -> set[str]:
    """Every mteb task the registry, ../shared/data and tests/data name."""
    names = {entry.mteb_task for entry in _registry() if entry.mteb_task}
    for path in [*shared_data.glob("*/dataset.json"), *TESTS.joinpath("data").rglob("dataset.json")]:
        names.add(json.loads(path.read_text()).get("mteb_task"))
    return names - {None}


def test_the_table_covers_every_task_we_name(shared_data):
    missing = sorted(_named_tasks(shared_data) - set(task_settings.INSTALLED.tasks))
    assert not missing, f"no row of datasets.yaml names: {missing}"
    assert len(_named_tasks(shared_data)) >= 36


def test_the_mteb_protocol_reads_the_table():
    mteb_protocol = PROTOCOLS.get("mteb")
    kinds = {
        ClassificationSettings: mteb_protocol.few_shot,
        ClusteringSettings: mteb_protocol.clustering,
        RetrievalSettings: mteb_protocol.retrieval,
        SummarizationSettings: mteb_protocol.summarization,
    }
    assert set(task_settings.INSTALLED.tasks) == {row.mteb_task for row in dataset_specs()}
    for row in dataset_specs():
        assert mteb_protocol.main_metric(row.task_type, row.mteb_task) == row.main_score
        if type(row.evaluation) in kinds:
            assert kinds[type(row.evaluation)](row.mteb_task) == row.evaluation, row.name


def _differences(row: DatasetSpec) -> dict[str, object]:
    """What a row sets apart from its task type's defaults (main score, settings fields)."""
    default = type(row.evaluation)()
    out: dict[str, object] = {
        f.name: getattr(row.evaluation, f.name)
        for f in fields(row.evaluation)
        if getattr(row.evaluation, f.name) != getattr(default, f.name)
    }
    if row.main_score != task_type(row.task_type).mteb_main_score:
        out["main_score"] = row.main_score
    return out


def test_the_tasks_whose_settings_differ_from_their_types():
    """The list pinned: a change in mteb or the table shows up here."""
    differ = {name: _differences(row) for name, row in task_settings.INSTALLED.tasks.items() if _differences(row)}
    assert differ == {
        "AmazonCounterfactualClassification": {"samples_per_label": 32},
        "SentimentAnalysisHindi": {"main_score": "f1"},
        "BiorxivClusteringS2S": {"contiguous_sets": None},
        "MasakhaNEWSClusteringS2S": {"contiguous_sets": 5},
        "MedrxivClusteringS2S.v2": {"kind": "fast"},
        "PlscClusteringS2S": {"kind": "fast"},
        "TwentyNewsgroupsClustering.v2": {"kind": "fast"},
        "ArguAna": {"ignore_identical_ids": True},
        "QuoraRetrieval": {"ignore_identical_ids": True},
        "SemRel24STS": {"max_score": 1},
        "SummEval": {"deprecated": True},
    }


def test_the_mirrored_mteb_is_the_installed_one():
    assert mteb.__version__ == MTEB_VERSION
    assert f"mteb {MTEB_VERSION}" in "".join(TABLE.read_text(encoding="utf-8").splitlines()[:5])


# --- a bad table ----------------------------------------------------------------------------------

GOOD = """\
- name: Toy
  task_type: STS
  eval_split: test
  subsets: {default: [eng]}
"""


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (GOOD.replace("  eval_split: test\n", ""), "row 1 (Toy): (row): 'eval_split' is a required property"),
        (GOOD + "  hf_revision: main\n", "row 1 (Toy): hf_revision: 'main' does not match"),
        (
            GOOD + "  colour: red\n",
            "row 1 (Toy): (row): Additional properties are not allowed ('colour' was unexpected)",
        ),
        (GOOD.replace("[eng]", "[en]"), "row 1 (Toy): subsets/default/0: 'en' does not match"),
        (
            GOOD + "  evaluation: {samples_per_label: 4}\n",
            "row 1 (Toy): evaluation: STS has no evaluation setting 'samples_per_label'; known: min_score, max_score",
        ),
        (GOOD.replace("STS", "STSS"), "row 1 (Toy): unknown task type 'STSS'; known: Classification, "),
        (GOOD + GOOD, "dataset 'Toy' has two rows"),
        (
            GOOD
            + "  mteb_task: STS12\n"
            + GOOD.replace("Toy", "Toy2")
            + "  mteb_task: STS12\n  main_score: cosine_pearson\n",
            "rows 'Toy' and 'Toy2' name mteb task STS12 but differ in task type, main score or evaluation settings",
        ),
        (GOOD + "  stats: {default: [[1, 1, 10]]}\n", "row 1 (Toy): stats/default/0: [1, 1, 10] is too short"),
        ("- name: [unclosed\n", "not valid YAML (while parsing a flow sequence"),
        ("{}\n", "(top level): {} is not of type 'array'"),
    ],
    ids=[
        "missing",
        "revision",
        "unknown-column",
        "language",
        "setting",
        "task-type",
        "duplicate",
        "disagree",
        "stats",
        "yaml",
        "not-a-list",
    ],
)
def test_a_bad_table_is_refused_in_one_line(tmp_path, text, message):
    table = tmp_path / "datasets.yaml"
    table.write_text(text, encoding="utf-8")
    with pytest.raises(ContractError) as refused:
        load_dataset_specs(table)
    assert str(refused.value).startswith("datasets.yaml: ") and message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_minimal_row_gets_its_task_type_s_defaults(tmp_path):
    table = tmp_path / "datasets.yaml"
    table.write_text(GOOD, encoding="utf-8")
    (toy,) = load_dataset_specs(table)
    assert (toy.main_score, toy.evaluation, toy.registry, toy.english, toy.stats) == (
        "cosine_spearman",
        STSSettings(),
        True,
        True,
        None,
    )
    assert (toy.source_license.license, toy.source_license.name, toy.source_license.link) == (
        "unknown",
        "not stated",
        None,
    )
