"""Facts of a row come from the row (issue 43): a new transformation row is labelled for mteb as its
steps say, with no list in code to extend; which task types search their corpus is the task type's."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from hteb_contract.revision import CORPUS_TASK_TYPES
from hteb_contract.specs import transformations
from hteb_contract.tasks import TASK_TYPES
from hteb_score.mteb_interop.tasks import sample_creation

from edited_tables import with_axis_rows

TABLE = Path(transformations.__file__).with_name("transformations.yaml")


@pytest.mark.parametrize(
    ("row", "label"),
    [
        (
            {
                "name": "to_formal_german",
                "axis": "language",
                "made_by": "llm",
                "languages": "run_target",
                "steps": [
                    {"template": "paraphrase", "language": "source"},
                    {"template": "translate", "language": "target"},
                ],
                "judge_task": "translate",
                "detectors": ["empty"],
            },
            "machine-translated and LM verified",
        ),
        (
            {
                "name": "round_trip",
                "axis": "language",
                "made_by": "llm",
                "languages": "item_pivot",
                "steps": [
                    {"template": "translate", "language": "pivot"},
                    {"template": "translate", "language": "source"},
                ],
                "judge_task": "say it again",
                "detectors": ["empty"],
            },
            "LM-generated and verified",
        ),
        ({"name": "vowel_swap", "axis": "noise", "made_by": "rules"}, "created"),
    ],
)
def test_a_new_rows_sample_creation_is_read_from_its_steps(row, label, monkeypatch):
    data = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    with_axis_rows(data, row)
    table = transformations.parse_transformation_table(data)
    monkeypatch.setattr(transformations, "transformation_table", lambda: table)
    assert sample_creation(row["name"], "found") == label
    assert sample_creation("original", "found") == "found"


def test_the_task_types_whose_corpus_a_revision_may_perturb_are_those_that_search_it():
    assert CORPUS_TASK_TYPES == tuple(name for name, kind in TASK_TYPES.items() if kind.searches_corpus)
    assert CORPUS_TASK_TYPES == ("Retrieval",)  # a reranking query ranks its candidates only


@pytest.mark.parametrize(
    ("needs", "arabic"),
    [(None, None), ("case", "the script has no case"), ("layout", None), ("digits", "no look-alike")],
)
def test_where_a_new_rule_applies_is_read_from_what_its_row_needs(needs, arabic, monkeypatch):
    """A new Noise rule row says what it needs of a script; which subsets it applies to follows with no code."""
    from hteb_contract.specs.noise_scripts import noise_scripts

    data = yaml.safe_load(TABLE.read_text(encoding="utf-8"))
    with_axis_rows(
        data, {"name": "vowel_swap", "axis": "noise", "made_by": "rules", **({"needs": needs} if needs else {})}
    )
    table = transformations.parse_transformation_table(data)
    monkeypatch.setattr(transformations, "transformation_table", lambda: table)
    scripts = noise_scripts()
    assert scripts.why_not("vowel_swap", "Latn") is None
    found = scripts.why_not("vowel_swap", "Arab")
    assert found is None if arabic is None else arabic in found
    assert (scripts.why_not("vowel_swap", None) is None) == (needs is None)  # no script read: only a rule needing none
