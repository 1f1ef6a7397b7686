"""The transformation table (hteb_contract/specs/transformations.yaml) against what the code needs:
every template a step names has a prompt in every prompt set, every detector and language plan it
names exists, every rule row has its perturbation, the axes partition the rows in the paper's
order; and a bad row is refused in one line naming it."""

from __future__ import annotations

import copy

import pytest
import yaml
from hteb_contract import taxonomy
from hteb_contract.errors import ContractError
from hteb_contract.specs.transformations import (
    TABLE_PATH,
    is_pair_rule,
    load_transformation_table,
    parse_transformation_table,
    transformation_table,
)
from hteb_generate.transform import budget, noise, sensitivity
from hteb_generate.checks import judge
from hteb_generate.checks.detectors import DETECTORS, ERROR_TYPES
from hteb_generate.transform.transformations import LANGUAGE_PLANS, PROMPT_SETS, TRANSFORMATIONS, plan_languages

TABLE = transformation_table()
LLM = [t for t in TABLE.transformations if not t.is_rule]
RULES = [t for t in TABLE.transformations if t.is_rule and t.twin is None]
PAIRS = [t for t in TABLE.transformations if t.twin is not None]
#: Paper Table 1, in its order, and the Noise axis of issue 12.
PAPER_AXES = {
    "lexical": ("paraphrasing", "backtranslation", "style_change"),
    "length": ("expansion", "summarisation", "summarised_expansion"),
    "language": ("translation", "cross_translation"),
}
NOISE = ("random_capitalisation", "character_deletion", "numerisation", "keyboard_typos", "punctuation_casing_loss")
SENSITIVITY = (
    "negation_flip",
    "negation_contraction",
    "number_change",
    "number_words",
    "role_swap",
    "role_reorder",
    "antonym_swap",
    "synonym_swap",
)
#: Source languages a plan is tried with: Latin, an Arabic dialect, a pivot and a target language.
SOURCES = ("eng", "arq", "spa", "deu")


def test_the_axes_partition_the_rows_in_the_papers_order():
    assert {a.name: a.transformations for a in TABLE.axes if a.paper} == PAPER_AXES
    assert [(a.name, a.transformations, a.paper, a.own_revision) for a in TABLE.axes if not a.paper] == [
        ("noise", NOISE, False, False),
        ("sensitivity", SENSITIVITY, False, True),
    ]
    members = [t for a in TABLE.axes for t in a.transformations]
    assert sorted(members) == sorted(TABLE.names) and len(set(members)) == len(members)
    assert taxonomy.TRANSFORMATIONS == TABLE.names  # the table's order is every table's and card's
    assert all(taxonomy.AXIS_OF[t.name] == t.axis for t in TABLE.transformations)


def test_llm_rows_are_the_generators_transformations_and_rule_rows_its_perturbations():
    assert TRANSFORMATIONS.names() == [t.name for t in LLM]
    assert noise.PERTURBATIONS.names() == [t.name for t in RULES]
    assert sensitivity.RULES.names() == [t.name for t in PAIRS]
    assert all(noise.is_rule(t.name) for t in RULES + PAIRS) and not any(noise.is_rule(t.name) for t in LLM)
    assert all(is_pair_rule(t.name) for t in PAIRS) and not any(is_pair_rule(t.name) for t in RULES + LLM)
    assert not is_pair_rule("no_such_transformation")
    assert not noise.is_rule("no_such_transformation")


def test_each_minimal_pair_is_one_generator_pair_changed_then_kept():
    assert [(p.changed, p.kept) for p in sensitivity.PAIRS] == [
        (t.name, t.twin) for t in PAIRS if t.meaning == "changed"
    ]
    assert all(TABLE.get(t.twin).twin == t.name for t in PAIRS)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda row: row.pop("twin"), "states both meaning and twin, or neither"),
        (lambda row: row.update(twin="role_swap"), "must name it back"),
        (lambda row: row.update(twin="paraphrasing"), "must name it back"),
        (lambda row: row.update(twin="no_such_rule"), "is not a row of the table"),
    ],
    ids=["one-sided", "not-named-back", "another-axis", "unknown"],
)
def test_a_broken_minimal_pair_is_one_line_naming_its_row(edit, message):
    data = yaml.safe_load(TABLE_PATH.read_text(encoding="utf-8"))
    edit(next(r for r in data["transformations"] if r["name"] == "negation_flip"))
    with pytest.raises(ContractError, match=rf"transformations\[\d+\] \(negation_flip\): .*{message}"):
        parse_transformation_table(data)


@pytest.mark.parametrize("prompts", PROMPT_SETS.names())
def test_every_prompt_set_has_exactly_the_templates_the_steps_name(prompts):
    used = {step.template for t in LLM for step in t.steps}
    assert set(PROMPT_SETS.get(prompts).templates) == {t.name for t in TABLE.templates} == used


def test_every_template_has_a_budget_with_room_above_what_it_writes_and_every_step_holds_its_own():
    assert all(t.growth >= t.expected for t in TABLE.templates)
    for row in TABLE.transformations:
        for step in row.steps:
            assert step.budget is TABLE.template(step.template)
            assert (step.check is None) == (step.check_as is None)
            assert step.check is None or step.check == TABLE.get(step.check_as)


def test_a_step_is_budgeted_by_the_template_it_holds():
    step = TABLE.get("expansion").steps[0]
    text = "word " * 240
    assert (
        budget.step_max_tokens(step, text, 1024, 4096)
        == budget.max_tokens_for(step.budget, budget.estimate_tokens(text), 1024, 4096)
        == 6 * budget.estimate_tokens(text) + budget.MARGIN
    )


@pytest.mark.parametrize("spec", LLM, ids=lambda t: t.name)
def test_every_detector_named_exists_and_every_llm_row_is_checked_and_judged(spec):
    assert set(spec.detectors) <= set(ERROR_TYPES) <= set(DETECTORS.names())
    assert {"identical", "empty", "wrong_language", "truncated"} <= set(spec.detectors)
    quality, _ = judge.judge_requests([judge.JudgePair(spec, "a", "b", "eng", "eng")], seed=0, max_tokens=8)
    assert spec.judge_task in quality.messages[0][1]


@pytest.mark.parametrize("spec", LLM, ids=lambda t: t.name)
def test_every_plan_exists_and_gives_every_language_its_steps_ask_for(spec):
    assert spec.languages in LANGUAGE_PLANS
    for source in SOURCES:
        for item in ("a", "b", "c"):
            plan = plan_languages(spec.name, seed=1339, dataset="D", item=item, source=source)
            assert plan.source == source
            languages = [plan.of(step.language) for step in spec.steps]
            assert languages[-1] == plan.expected
            if spec.crosses_languages:
                assert any(language != source for language in languages)


def test_an_intermediate_check_names_an_llm_row():
    checks = [(t.name, s.check_as, s.language) for t in LLM for s in t.steps if s.check_as]
    assert checks == [("backtranslation", "translation", "pivot")]
    assert all(TABLE.get(check).crosses_languages for _, check, _ in checks)


def _data() -> dict:
    return yaml.safe_load(TABLE_PATH.read_text(encoding="utf-8"))


def _row(data: dict, name: str) -> dict:
    return next(r for r in data["transformations"] if r["name"] == name)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: _row(d, "expansion").pop("judge_task"),
            r"transformations\[3\] \(expansion\): 'judge_task' is a required property",
        ),
        (
            lambda d: _row(d, "numerisation").update(steps=[{"template": "expand", "language": "source"}]),
            r"transformations\[10\] \(numerisation\): Additional properties are not allowed \('steps' was unexpected\)",
        ),
        (
            lambda d: _row(d, "translation")["steps"][0].update(language="middle"),
            r"transformations\[6\] \(translation\)\.steps\[0\]\.language: 'middle' is not one of",
        ),
        (
            lambda d: _row(d, "style_change").update(axis="lexicl"),
            r"\(style_change\): unknown axis 'lexicl'; known: lexical, length, language, noise",
        ),
        (
            lambda d: _row(d, "paraphrasing").update(axis="length"),
            r"transformations\[1\] \(backtranslation\): its axis 'lexical' must stand with its other rows",
        ),
        (
            lambda d: _row(d, "summarisation")["steps"][0].update(template="summarize"),
            r"\(summarisation\): steps\[0\]: unknown template 'summarize'",
        ),
        (
            lambda d: _row(d, "backtranslation")["steps"][0].update(check_as="numerisation"),
            r"\(backtranslation\): steps\[0\]: check_as 'numerisation' is no LLM transformation",
        ),
        (
            lambda d: _row(d, "paraphrasing")["steps"][0].update(check_as="translation"),
            r"\(paraphrasing\): steps\[0\]: check_as is for an intermediate step",
        ),
        (
            lambda d: d["transformations"].insert(1, dict(_row(d, "paraphrasing"))),
            r"transformation 'paraphrasing' is defined twice",
        ),
        (
            lambda d: d["axes"].append({"name": "syntax", "label": "Syntax", "paper": False}),
            r"axis 'syntax' has no transformation",
        ),
        (
            lambda d: d["templates"][2].update(growth=0),
            r"templates\[2\] \(expand\)\.growth: 0 is less than or equal to the minimum of 0",
        ),
        (
            lambda d: d["presets"][0]["slots"][1].append("expansoin"),
            r"preset 'minimal' names 'expansoin', not a row of the table",
        ),
        (
            lambda d: d["presets"].append(dict(d["presets"][1])),
            r"preset 'full' is defined twice",
        ),
    ],
    ids=[
        "no-judge-task",
        "rule-with-steps",
        "bad-language",
        "unknown-axis",
        "axis-split",
        "unknown-template",
        "check-as-rule",
        "check-as-last-step",
        "twice",
        "empty-axis",
        "no-growth",
        "preset-unknown-row",
        "preset-twice",
    ],
)
def test_a_bad_row_is_one_line_naming_it(edit, message):
    data = _data()
    edit(data)
    with pytest.raises(ContractError, match=f"^transformations.yaml: .*{message}") as refused:
        parse_transformation_table(data)
    assert "\n" not in str(refused.value)


def test_the_table_parses_as_loaded_and_unreadable_yaml_is_one_line(tmp_path):
    assert parse_transformation_table(copy.deepcopy(_data())) == TABLE
    broken = tmp_path / "transformations.yaml"
    broken.write_text("axes: [\n", encoding="utf-8")
    with pytest.raises(ContractError, match=r"^transformations.yaml: not valid YAML \(") as refused:
        load_transformation_table(broken)
    assert "\n" not in str(refused.value)
