"""The per-task settings table (issue 23 item 4) equals what the installed mteb 2.26.24's task
objects read at evaluation, for every task the generator's registry, ../shared/data and the test
data name, and no task class sets an evaluation attribute the table does not mirror."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import mteb
import pytest

from hteb_generate.sources_table import SOURCES
from hteb_score.evaluators import task_settings
from hteb_score.evaluators.protocol import PROTOCOLS

TEST_DATA = Path(__file__).resolve().parents[2] / "data"
#: Attributes a task class may set that do not change what is evaluated: loading and the abstract
#: class's own bookkeeping (dataset_transform: mteb's Hub rows -> its columns, HTEB's rows are made).
NOT_EVALUATION = {"_abc_impl", "metadata", "fast_loading", "dataset_transform"}
#: The abstract class of each settings kind (clustering: by its `kind`).
ABSTASK = {task_settings.ClassificationSettings: "AbsTaskClassification", task_settings.RetrievalSettings:
           "AbsTaskRetrieval", task_settings.STSSettings: "AbsTaskSTS", task_settings.SummarizationSettings:
           "AbsTaskSummarization", task_settings.PairClassificationSettings: "AbsTaskPairClassification"}


def named_tasks(shared_data: Path) -> set[str]:
    """Every mteb task the registry, ../shared/data and tests/data name."""
    names = {entry.mteb_task for _, entry in SOURCES.items() if entry.mteb_task}
    for path in [*shared_data.glob("*/dataset.json"), *TEST_DATA.rglob("dataset.json")]:
        names.add(json.loads(path.read_text()).get("mteb_task"))
    return names - {None}


def test_the_table_covers_every_task_we_name(shared_data):
    missing = sorted(named_tasks(shared_data) - set(task_settings.TASKS))
    assert not missing, f"not in task_settings.TASKS: {missing}"
    assert len(named_tasks(shared_data)) >= 36


def _abstask(task: object) -> str:
    return next(c.__name__ for c in type(task).__mro__ if c.__module__.startswith("mteb.abstasks"))


@pytest.mark.parametrize("name", sorted(task_settings.TASKS))
def test_every_setting_equals_mtebs_task_object(name):
    task, ours = mteb.get_task(name), task_settings.TASKS[name]
    settings = ours.settings
    assert task.metadata.main_score == ours.main_score
    if isinstance(settings, task_settings.ClusteringSettings):
        assert _abstask(task) == {"fast": "AbsTaskClustering", "legacy": "AbsTaskClusteringLegacy"}[settings.kind]
    else:
        assert _abstask(task) == ABSTASK[type(settings)]
    mirrored = settings.MTEB if not isinstance(settings, task_settings.ClusteringSettings) or settings.kind == "fast" \
        else ()
    for attribute in mirrored:
        theirs = getattr(task, attribute)
        assert getattr(settings, attribute) == (tuple(theirs) if isinstance(theirs, list) else theirs), attribute
    if isinstance(settings, task_settings.ClassificationSettings):
        model = task.evaluator_model
        assert type(model).__name__ == settings.classifier and model.max_iter == settings.max_iter
        # sklearn's defaults otherwise; random_state mteb sets from the task's seed when it evaluates (on an estimator
        # its task classes share, so an evaluation earlier in this process has already set it)
        defaults = type(model)().get_params()
        found = {k: v for k, v in model.get_params().items() if k != "random_state"}
        assert found == {k: v for k, v in {**defaults, "max_iter": settings.max_iter}.items() if k != "random_state"}
        assert model.get_params()["random_state"] in (None, task.seed)
    if isinstance(settings, task_settings.SummarizationSettings):
        assert (task.evaluator.__name__ == "DeprecatedSummarizationEvaluator") == settings.deprecated


@pytest.mark.parametrize("name", sorted(task_settings.TASKS))
def test_no_task_class_sets_an_attribute_the_table_does_not_mirror(name):
    """A task class overriding anything else (a future mteb's new setting) fails here."""
    task, settings = mteb.get_task(name), task_settings.TASKS[name].settings
    mirrored = set(settings.MTEB) | {"evaluator", "evaluator_model"}
    own = {k for cls in type(task).__mro__ if not cls.__module__.startswith("mteb.abstasks")
           and cls.__module__.startswith("mteb") for k in vars(cls) if not k.startswith("__")}
    assert own - mirrored - NOT_EVALUATION == set()


def test_the_mteb_protocol_reads_the_table():
    mteb_protocol = PROTOCOLS.get("mteb")
    for name, task in task_settings.TASKS.items():
        assert mteb_protocol.main_metric(task.task_type, name) == task.main_score
        kinds = {task_settings.ClassificationSettings: mteb_protocol.few_shot,
                 task_settings.ClusteringSettings: mteb_protocol.clustering,
                 task_settings.RetrievalSettings: mteb_protocol.retrieval,
                 task_settings.SummarizationSettings: mteb_protocol.summarization}
        if type(task.settings) in kinds:
            assert kinds[type(task.settings)](name) == task.settings, name


def test_the_tasks_whose_settings_differ_from_their_types(capsys):
    """The list the issue asks for, pinned: a change in mteb or the table shows up here."""
    differ = {name: task.differences() for name, task in task_settings.TASKS.items() if task.differences()}
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
    assert all(f.name in {x.name for x in fields(type(t.settings))} for t in task_settings.TASKS.values()
               for f in fields(t.settings))


def test_the_mirrored_mteb_is_the_installed_one():
    assert mteb.__version__ == task_settings.MTEB_VERSION
