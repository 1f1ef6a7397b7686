"""Transformations, prompt sets and the seeded language rules of SPEC.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hteb_generate.transform import languages
from hteb_generate.transform.transformations import (
    PAPER,
    PROMPT_SETS,
    TRANSFORMATIONS,
    PromptSet,
    Template,
    plan_languages,
)
from hteb_contract import taxonomy
from hteb_contract.errors import HtebError

PAPER_TEXT = Path(__file__).resolve().parents[2].parent / "shared" / "seeds" / "002_c9cf0ea557d8a79d.txt"


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_the_generator_makes_exactly_the_paper_transformations_in_its_order():
    assert TRANSFORMATIONS.names() == list(taxonomy.PAPER_TRANSFORMATIONS)
    assert all(t.name == name for name, t in TRANSFORMATIONS.items())


def test_two_step_transformations():
    assert [s.template for s in TRANSFORMATIONS.get("backtranslation").steps] == ["translate", "translate"]
    assert [s.template for s in TRANSFORMATIONS.get("summarised_expansion").steps] == ["expand", "summarise"]
    assert all(
        len(t.steps) == 1
        for name, t in TRANSFORMATIONS.items()
        if name not in ("backtranslation", "summarised_expansion")
    )


@pytest.mark.parametrize("key", ["paraphrase", "style_change", "expand", "summarise", "translate"])
def test_paper_prompts_are_verbatim_app_d(key):
    """Every paper prompt occurs word for word in the paper's App. D (whitespace normalised)."""
    if not PAPER_TEXT.is_file():
        pytest.fail(f"paper text not found at {PAPER_TEXT}")
    appendix = _normalise(PAPER_TEXT.read_text(encoding="utf-8").split("Appendix D Prompts", 1)[1][:8000])
    assert _normalise(PAPER.template(key).system) in appendix


def test_request_layout_prompt_then_text_with_language_name():
    messages = PAPER.template("translate").messages("Hola amigo.", "deu")
    assert messages[0] == (
        "system",
        "Translate the following text to German. Provide only the translation -- no explanations or notes!",
    )
    assert messages[-1] == ("user", "Hola amigo.")
    fewshot = PROMPT_SETS.get("smollm2-fewshot").template("paraphrase").messages("A dog runs.", "eng")
    assert [role for role, _ in fewshot] == ["system", "user", "assistant", "user", "assistant", "user"]


def test_prompt_hash_changes_with_any_template_text():
    changed = PromptSet(
        "changed", {**PAPER.templates, "paraphrase": Template(PAPER.template("paraphrase").system + " ")}
    )
    assert changed.hash_of(("paraphrase",)) != PAPER.hash_of(("paraphrase",))
    assert changed.hash_of(("translate",)) == PAPER.hash_of(("translate",))
    assert len({p.sha256 for _, p in PROMPT_SETS.items()}) == len(PROMPT_SETS)


def test_a_prompt_set_defines_every_template():
    assert all(prompts.id == name for name, prompts in PROMPT_SETS.items())
    with pytest.raises(ValueError, match="must define exactly"):
        PromptSet("partial", {"paraphrase": PAPER.template("paraphrase")})


def test_unknown_names_are_user_errors_with_a_hint():
    with pytest.raises(HtebError, match="unknown transformation 'paraphrase' \\(did you mean 'paraphrasing'\\?\\)"):
        TRANSFORMATIONS.get("paraphrase")
    with pytest.raises(HtebError, match="unknown prompt set 'nope'; known: paper, smollm2-fewshot"):
        PROMPT_SETS.get("nope")


def test_translation_target_is_one_per_run_and_never_the_source():
    targets = {
        plan_languages(
            "translation", seed=1339, dataset="STSBenchmark", item=f"test/{i}/sentence1", source="eng"
        ).target
        for i in range(50)
    }
    assert len(targets) == 1 and targets <= set(languages.TRANSLATION_TARGETS)
    run_target = targets.pop()
    # A text already in the run's target language gets the next language of the run's ranking.
    other = plan_languages("translation", seed=1339, dataset="STSBenchmark", item="x", source=run_target).target
    assert other != run_target and other in languages.TRANSLATION_TARGETS
    # Arabic dialects count as Arabic.
    for seed in range(20):
        assert plan_languages("translation", seed=seed, dataset="SemRel2024", item="x", source="arq").target != "ara"
    # The seed changes the draw for some seeds.
    assert len({languages.run_target(s, "STSBenchmark", "translation", "eng") for s in range(30)}) > 1


def test_cross_translation_and_pivot_redrawn_per_item_and_exclude_the_source():
    cross = [
        plan_languages("cross_translation", seed=7, dataset="D", item=f"i{i}", source="spa").target for i in range(200)
    ]
    assert set(cross) == set(languages.TRANSLATION_TARGETS) - {"spa"}
    pivots = [
        plan_languages("backtranslation", seed=7, dataset="D", item=f"i{i}", source="eng").pivot for i in range(200)
    ]
    assert set(pivots) == set(languages.PIVOTS) - {"eng"}


def test_choices_depend_only_on_seed_dataset_transformation_item():
    a = plan_languages("cross_translation", seed=1, dataset="D", item="test/5/sentence2", source="eng")
    assert a == plan_languages("cross_translation", seed=1, dataset="D", item="test/5/sentence2", source="eng")
    draws = {
        plan_languages("cross_translation", seed=s, dataset="D", item="test/5/sentence2", source="eng").target
        for s in range(40)
    }
    assert len(draws) > 1


def test_every_benchmark_language_has_a_prompt_name():
    from hteb_generate.sources.sources_table import SOURCES

    for _, entry in SOURCES.items():
        for code in entry.languages:
            assert languages.name_of(code)
    with pytest.raises(HtebError, match="no language name"):
        languages.name_of("xxx")
