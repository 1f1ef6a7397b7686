"""The taxonomy's four axes: the paper's three make the HTEB total, Noise stands beside it; the
contract's schemas and revision format take the Noise transformations and still take what they
took before."""

from __future__ import annotations

import dataclasses

import pytest
from jsonschema import Draft202012Validator

from hteb_contract.errors import HtebError
from hteb_contract.records import ItemRecord
from hteb_contract.revision import Revision
from hteb_contract.errors import ContractError
from hteb_contract.specs.resolved import specs_block
from hteb_contract.specs.transformations import Axis
from hteb_contract.taxonomy import (
    AXES,
    AXIS_LABELS,
    AXIS_OF,
    BEFORE_SPECS,
    INSTALLED,
    PAPER_AXES,
    PAPER_TRANSFORMATIONS,
    RECORDED,
    TRANSFORMATIONS,
    Taxonomy,
    axis_of,
    in_total,
    of_manifest,
    recorded_in,
    transformation_order,
)
from hteb_contract.validation import schema
from hteb_generate.transform.noise import PERTURBATIONS, perturb
from revision_factory import build_revision

PAPER_EIGHT = (
    "paraphrasing",
    "backtranslation",
    "style_change",
    "expansion",
    "summarisation",
    "summarised_expansion",
    "translation",
    "cross_translation",
)
NOISE_FIVE = (
    "random_capitalisation",
    "character_deletion",
    "numerisation",
    "keyboard_typos",
    "punctuation_casing_loss",
)


def test_the_paper_axes_make_the_total_and_noise_stands_beside_them():
    assert list(PAPER_AXES) == ["lexical", "length", "language"]
    assert PAPER_TRANSFORMATIONS == PAPER_EIGHT
    assert list(AXES) == ["lexical", "length", "language", "noise", "sensitivity"] and AXIS_LABELS["noise"] == "Noise"
    assert AXES["noise"] == NOISE_FIVE and TRANSFORMATIONS == PAPER_EIGHT + NOISE_FIVE + AXES["sensitivity"]
    assert not in_total("sensitivity") and not any(map(in_total, AXES["sensitivity"]))
    assert {AXIS_OF[t] for t in NOISE_FIVE} == {"noise"}
    assert sorted(TRANSFORMATIONS, key=transformation_order) == list(TRANSFORMATIONS)


def test_the_noise_axis_holds_the_generators_perturbations_in_order():
    assert tuple(PERTURBATIONS.names()) == AXES["noise"]


@pytest.mark.parametrize(
    ("name", "counted"),
    [
        ("lexical", True),
        ("length", True),
        ("language", True),
        ("noise", False),
        ("paraphrasing", True),
        ("cross_translation", True),
        ("numerisation", False),
        ("keyboard_typos", False),
        ("hteb", True),
    ],
    ids=lambda v: str(v),
)
def test_in_total(name, counted):
    assert in_total(name) is counted


def test_a_misspelt_noise_transformation_is_named_with_a_hint():
    assert axis_of("punctuation_casing_loss") == "noise"
    with pytest.raises(HtebError, match="unknown transformation 'numerization' \\(did you mean 'numerisation'"):
        axis_of("numerization")


@pytest.mark.parametrize(
    "axes",
    [["lexical", "length", "language"], ["lexical", "length", "language", "noise"], ["noise"], []],
    ids=["paper", "paper+noise", "noise-only", "none"],
)
def test_comparison_columns_take_the_noise_axis_and_what_they_took_before(axes):
    columns = Draft202012Validator(schema("comparison")["properties"]["columns"])
    columns.validate({"transformations": [], "axes": axes, "total": []})


def test_comparison_columns_still_refuse_an_unknown_axis():
    columns = Draft202012Validator(schema("comparison")["properties"]["columns"])
    assert not columns.is_valid({"transformations": [], "axes": ["noize"], "total": []})


def _noisy(record: ItemRecord) -> ItemRecord:
    if record.transformation not in NOISE_FIVE:
        return record
    text = perturb(
        record.transformation,
        record.original_text,
        key=(record.seed, record.dataset, record.transformation, record.original_text),
    )
    attempt = dataclasses.replace(record.attempts[0], steps=(text,), output=text)
    return dataclasses.replace(record, transformed_text=text, attempts=(attempt,))


def test_a_revision_with_noise_transformations_is_written_verified_and_read(tmp_path, shared_data):
    manifest = build_revision(
        tmp_path / "rev",
        shared_data,
        ["STSBenchmark", "SciFact"],
        label="noise-1",
        rows=3,
        transformations=("paraphrasing", *NOISE_FIVE),
        seeds=(1339,),
        edit=_noisy,
    )
    assert manifest["transformations"] == ["paraphrasing", *NOISE_FIVE]
    revision = Revision.open(tmp_path / "rev")
    assert revision.variants("SciFact") == [(t, 1339) for t in ("paraphrasing", *NOISE_FIVE)]
    records = revision.items("STSBenchmark", "numerisation", 1339)
    assert records and all(
        r.transformed_text == r.original_text.translate(str.maketrans("eiao", "3140")) for r in records
    )


# --- a taxonomy as a value: a revision's own, a card's, joined across cards (issue 43) ------------------------


def _moved(name: str, to: str) -> Taxonomy:
    """The installed taxonomy with `name` moved to axis `to`."""
    axes = [
        Axis(
            a.name,
            a.label,
            tuple(t for t in a.transformations if t != name) + ((name,) if a.name == to else ()),
            a.paper,
        )
        for a in INSTALLED.axes
    ]
    return Taxonomy(tuple(axes), RECORDED)


def test_a_taxonomy_round_trips_through_a_card_and_a_specs_block_gives_the_revisions_own():
    assert Taxonomy.from_json(INSTALLED.to_json()) == INSTALLED
    assert recorded_in({}) is BEFORE_SPECS and recorded_in(
        {"taxonomy": _moved("paraphrasing", "length").to_json()}
    ) == _moved("paraphrasing", "length")
    block = specs_block(["STSBenchmark"], ["keyboard_typos"], noise_scripts=False, language_detector=None)
    own = Taxonomy.of_specs(block)
    assert own.source == RECORDED and own.transformations == ("keyboard_typos",)
    assert list(own.paper_axes) == list(PAPER_AXES)  # every axis recorded: the total keeps its definition
    assert of_manifest({"specs": block}) == own and of_manifest({}) is BEFORE_SPECS
    # an axis whose rules make revisions of their own is recorded only where used, and never before the block
    assert "sensitivity" not in own.members and "sensitivity" not in BEFORE_SPECS.members
    assert list(BEFORE_SPECS.members) == [a for a in INSTALLED.members if a != "sensitivity"]
    pairs = Taxonomy.of_specs(specs_block(["STS16"], ["negation_flip"], noise_scripts=False, language_detector=None))
    assert pairs.members["sensitivity"] == ("negation_flip",) and "noise" in pairs.members
    assert Taxonomy.from_json(pairs.to_json()) == pairs


@pytest.mark.parametrize("name", TRANSFORMATIONS)
def test_two_taxonomies_that_put_a_transformation_on_two_axes_are_one_line_error(name):
    elsewhere = next(a for a in AXES if a != AXIS_OF[name])
    with pytest.raises(
        ContractError, match=f"transformation '{name}' is on axis '{AXIS_OF[name]}' in one and '{elsewhere}' in another"
    ):
        INSTALLED.joined(_moved(name, elsewhere), where="a and b")
    relabelled = Taxonomy(
        tuple(dataclasses.replace(a, label="X") if a.name == AXIS_OF[name] else a for a in INSTALLED.axes), RECORDED
    )
    with pytest.raises(ContractError, match=f"axis '{AXIS_OF[name]}' is"):
        INSTALLED.joined(relabelled, where="a and b")


def test_taxonomies_that_agree_join_to_every_row_either_has_in_the_axes_order():
    noise = Taxonomy.of_specs(specs_block([], ["keyboard_typos"], noise_scripts=False, language_detector=None))
    lexical = Taxonomy.of_specs(
        specs_block(
            [], ["paraphrasing"], noise_scripts=False, language_detector={"library": "lingua-language-detector"}
        )
    )
    joined = noise.joined(lexical, where="a and b")
    assert joined.transformations == ("paraphrasing", "keyboard_typos") and joined.source == RECORDED
    assert INSTALLED.joined(noise, where="x").transformations == TRANSFORMATIONS
