"""The two protocols as objects: what each answers per task type."""

from __future__ import annotations

import pytest

from hteb_contract.tasks import TASK_TYPES
from hteb_score.evaluators import mteb_tasks
from hteb_score.protocol import HTEB, MTEB, PROTOCOLS


def test_the_registry_holds_both_protocols():
    assert PROTOCOLS.get("hteb") is HTEB and PROTOCOLS.get("mteb") is MTEB
    assert MTEB.mteb_version == mteb_tasks.MTEB_VERSION and HTEB.mteb_version is None


def test_estimator_seed_rule():
    assert [MTEB.estimator_seed(s) for s in (42, 7)] == [mteb_tasks.SEED, mteb_tasks.SEED]
    assert [HTEB.estimator_seed(s) for s in (42, 7)] == [42, 7]


def test_main_metrics_are_the_task_types_own():
    for name, spec in TASK_TYPES.items():
        assert (MTEB.main_metric(name), HTEB.main_metric(name)) == (spec.mteb_main_score, spec.metric)
    assert (MTEB.main_metric("PairClassification"), HTEB.main_metric("PairClassification")) == ("max_ap", "ap")


@pytest.mark.parametrize(("rule", "table"), [
    ("few_shot", mteb_tasks.CLASSIFICATION),
    ("clustering", mteb_tasks.CLUSTERING),
    ("retrieval", mteb_tasks.RETRIEVAL),
    ("summarization", mteb_tasks.SUMMARIZATION),
])
def test_mteb_reads_the_task_table_and_its_defaults(rule, table):
    per_task = getattr(MTEB, rule)
    for name, settings in table.items():
        assert per_task(name) is settings
    assert per_task("NoSuchTask") == per_task(None) == type(next(iter(table.values())))()


def test_hteb_rules_do_not_follow_mteb_task_classes():
    for task in (*mteb_tasks.CLASSIFICATION, None):
        assert HTEB.few_shot(task) is None
    for task in (*mteb_tasks.CLUSTERING, None):
        assert HTEB.clustering(task).kind == "legacy"
    for task in (*mteb_tasks.SUMMARIZATION, None):
        assert not HTEB.summarization(task).deprecated
    for task in (*mteb_tasks.RETRIEVAL, None):
        assert HTEB.retrieval(task) == MTEB.retrieval(task)  # self-hit removal in both
