"""The Sensitivity axis's minimal pairs (issue 45): each meaning-changing rule and its twin on hand-worked
examples, the pair's one span on every text of real data (both rules edit a text or neither, at the same place),
properties on generated sentences, and a revision made by the `sensitivity` profile: its change shares say where
each rule applies, its card's configs load (the run checks them) and `reproduce` remakes it byte for byte."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.errors import HtebError
from hteb_contract.sources import read_source_dir
from hteb_contract.specs.transformations import transformation_spec
from hteb_contract.stores import open_store
from hteb_generate.transform import sensitivity
from hteb_generate.transform.sensitivity import PAIRS, edit
from revision_factory import reproduce

needs_wordnet = pytest.mark.skipif(
    not (sensitivity.wordnet_dir() / "data.adj").is_file(),
    reason="Debian's wordnet-base is not installed (.ci/run installs it)",
)
KEY = (1339, "test")


def _both(rule: str, text: str, language: str = "eng") -> tuple[str, str]:
    pair = sensitivity.pair_of(rule)
    return (
        edit(pair.changed, text, key=KEY + (pair.changed,), language=language),
        edit(pair.kept, text, key=KEY + (pair.kept,), language=language),
    )


@pytest.mark.parametrize(
    ("rule", "text", "language", "changed", "kept"),
    [
        ("negation_flip", "The card isn't working.", "eng", "The card is working.", "The card is not working."),
        ("negation_flip", "I cannot log in", "eng", "I can log in", "I can't log in"),
        ("negation_flip", "We will not pay", "eng", "We will pay", "We won't pay"),
        ("negation_flip", "They are late again", "eng", "They are not late again", "They're late again"),
        ("negation_flip", "It is not only cheap but good", "eng", "It is not only cheap but good", None),
        ("negation_flip", "Je ne sais pas.", "fra", "Je sais.", "Je sais pas."),
        ("negation_flip", "Il n'aime pas le café", "fra", "Il aime le café", "Il aime pas le café"),
        ("negation_flip", "Je n'aime pas", "fra", "J'aime", "J'aime pas"),
        (
            "role_swap",
            "Madrid beat Barcelona 2-1",
            "eng",
            "Barcelona beat Madrid 2-1",
            "Barcelona was beaten by Madrid 2-1",
        ),
        (
            "role_swap",
            "prices rose from 5 to 9 dollars",
            "eng",
            "prices rose from 9 to 5 dollars",
            "prices rose to 9 from 5 dollars",
        ),
        ("role_swap", "the voltage goes from 0 to 1.5", "eng", None, None),
        ("number_change", "version 1.5 of 3.0", "eng", None, None),
        ("number_change", "call 0800 now", "eng", None, None),
        ("number_change", "Il y a 21 jours", "fra", None, "Il y a vingt et un jours"),
        ("number_change", "ምንም 25", "amh", None, None),  # num2words's Amharic fails on most integers
    ],
)
def test_a_pair_edits_one_span_its_two_ways(rule, text, language, changed, kept):
    got_changed, got_kept = _both(rule, text, language)
    if kept is None and changed in (None, text):  # no span both can edit: both leave the text as it was
        assert (got_changed, got_kept) == (text, text)
        return
    assert got_kept == kept
    if changed is not None:
        assert got_changed == changed
    assert got_changed not in (text, got_kept)


def test_a_number_change_keeps_the_format_and_draws_from_the_key_alone():
    text = "I was charged 250 dollars twice"
    outs = {edit("number_change", text, key=(seed, "d", "number_change", text), language="eng") for seed in range(40)}
    assert text not in outs and len(outs) > 5
    for out in outs:
        (number,) = [w for w in out.split() if w.isdigit()]
        assert len(number) == 3 and number[0] != "0" and number != "250"
    again = edit("number_change", text, key=(7, "d", "number_change", text), language="eng")
    assert again == edit("number_change", text, key=(7, "d", "number_change", text), language="eng")


@needs_wordnet
def test_antonym_and_synonym_swap_the_same_adjective_from_wordnet():
    assert _both("antonym_swap", "The payment was incorrect") == ("The payment was correct", "The payment was wrong")
    assert _both("antonym_swap", "Visible marks remained") == ("Invisible marks remained", "Seeable marks remained")
    pairs = sensitivity.adjective_pairs()
    assert len(pairs) > 500 and all(a.isalpha() and s.isalpha() and a != s for a, s in pairs.values())


@needs_wordnet
def test_docs_sensitivity_page_counts_the_word_lists_the_rules_read():
    """docs/sensitivity.md's table: the adjectives WordNet gives the antonym rules, and the integers of 0-9999
    num2words cannot write in Amharic (why the number rules leave Amharic out), each counted here."""
    from num2words import num2words

    def fails(number: int) -> bool:
        try:
            num2words(number, lang="am")
        except Exception:  # num2words raises what its language module raises
            return True
        return False

    page = " ".join(
        (Path(__file__).resolve().parents[2] / "docs" / "sensitivity.md").read_text(encoding="utf-8").split()
    )
    assert (
        f"WordNet 3.0 adjectives that are no noun, verb or adverb ({len(sensitivity.adjective_pairs())} words)" in page
    )
    failed = sum(map(fails, range(10_000)))
    assert failed and "amh" not in sensitivity.NUMBER_LANGUAGES
    assert f"(not Amharic: it fails on {failed:,} of them)" in page


@needs_wordnet
@pytest.mark.parametrize("dataset", ["STS16", "STSBenchmark", "MasakhaNEWS", "SemRel2024", "Banking77"])
def test_on_real_texts_both_rules_of_a_pair_edit_a_text_or_neither_and_at_one_span(shared_data, dataset):
    columns = read_source_dir(shared_data / dataset).text_columns()
    edited = Counter()
    for text, language in zip(columns["text"], columns["language"]):
        for pair in PAIRS:
            changed, kept = (
                edit(rule, text, key=KEY + (rule, text), language=language) for rule in (pair.changed, pair.kept)
            )
            assert (changed == text) == (kept == text), (pair.changed, text)
            if changed == text:
                continue
            edited[pair.changed] += 1
            assert changed != kept
            span = pair.locate(text, language)
            assert span is not None and language in pair.languages
            for out in (changed, kept):  # outside the span nothing moved
                assert out[: span.start] == text[: span.start] and out.endswith(text[span.end :])
    assert edited["negation_flip"] > 0 and edited["number_change"] > 0, edited


WORDS = st.lists(st.sampled_from(["the", "report", "Anna", "said", "quickly", "every", "day", "blue"]), max_size=6)
LOWER = st.lists(st.sampled_from(["the", "report", "said", "quickly", "every", "day", "blue"]), max_size=6)


@settings(max_examples=200, deadline=None)
@given(before=WORDS, after=WORDS, aux=st.sampled_from(sorted(sensitivity.EN_NEGATIONS)), contracted=st.booleans())
def test_on_a_negated_auxiliary_the_twin_is_an_involution_and_the_flip_removes_the_negation(
    before, after, aux, contracted
):
    expanded, short = sensitivity.EN_NEGATIONS[aux]
    text = " ".join([*before, short if contracted else expanded, *after])
    changed, kept = _both("negation_flip", text)
    assert changed == " ".join([*before, aux, *after])
    assert edit("negation_contraction", kept, key=KEY, language="eng") == text  # contracting back gives the text


@settings(max_examples=200, deadline=None)
@given(
    before=WORDS,
    after=LOWER,
    a=st.sampled_from(["Paris", "New York", "12", "Lagos"]),
    b=st.sampled_from(["Rome", "Tel Aviv", "40", "Accra"]),
)
def test_a_role_swap_twice_is_the_text_and_its_twin_names_the_same_two(before, after, a, b):
    text = " ".join([*before, "from", a, "to", b, *after])
    changed, kept = _both("role_swap", text)
    assert edit("role_swap", changed, key=KEY, language="eng") == text
    assert f"to {b} from {a}" in kept and f"from {b} to {a}" in changed


def test_missing_wordnet_is_one_line_naming_the_package(monkeypatch, tmp_path):
    monkeypatch.setenv("HTEB_WORDNET", str(tmp_path))
    sensitivity.adjective_pairs.cache_clear()
    try:
        with pytest.raises(HtebError, match=r"^the antonym rules need WordNet 3\.0 in .*apt-get install wordnet-base"):
            sensitivity.adjective_pairs()
    finally:
        monkeypatch.delenv("HTEB_WORDNET")
        sensitivity.adjective_pairs.cache_clear()


def _config(tmp: Path, shared_data: Path, **given):
    from hteb_generate.setup.config import build_config

    overrides = {
        "datasets": "STS16,MasakhaNEWS",
        "cache_dir": str(tmp / "cache"),
        "store": str(tmp / "store"),
        "data_dir": str(shared_data),
        "manifest_md": str(tmp / "MANIFEST.md"),
        **given,
    }
    return build_config(seed="1339", profile="sensitivity", overrides=overrides)


@pytest.fixture(scope="module")
def made(tmp_path_factory, shared_data):
    if not (sensitivity.wordnet_dir() / "data.adj").is_file():
        pytest.skip("Debian's wordnet-base is not installed (.ci/run installs it)")
    from hteb_generate.run.pipeline import run

    tmp = tmp_path_factory.mktemp("sensitivity")
    cfg = _config(tmp, shared_data)
    run(cfg, log=lambda message: None)
    return cfg, open_store(cfg.store).fetch(cfg.label)


def test_the_profile_makes_every_pair_at_full_size_under_its_own_label(made, shared_data):
    cfg, revision = made
    assert cfg.label == "sensitivity-1339" and cfg.transformations == tuple(sensitivity.RULES.names())
    manifest = revision.manifest
    assert manifest["generator"]["model_id"] == sensitivity.RULES_MODEL
    assert manifest["config"]["sensitivity_rules_sha256"] == sensitivity.definitions_hash()
    assert "noise_rules_sha256" not in manifest["config"] and "noise_scripts" not in manifest["specs"]
    axes = [a["name"] for a in manifest["specs"]["axes"]]
    assert axes == ["lexical", "length", "language", "noise", "sensitivity"]
    texts = sum(len(read_source_dir(shared_data / d).text_columns()["text"]) for d in ("STS16", "MasakhaNEWS"))
    assert manifest["counters"]["items"] == texts * len(cfg.transformations)


def test_change_shares_say_where_each_rule_applies_and_a_pair_edits_the_same_texts(made):
    _, revision = made
    shares = revision.manifest["change_shares"]
    by = {(e["dataset"], e["transformation"], e["subset"]): e for e in shares}
    for e in shares:
        assert e["applicable"] is (e["changed"] > 0)
        assert (e["why_not"] is None) is e["applicable"]
        twin = by[(e["dataset"], transformation_spec(e["transformation"]).twin, e["subset"])]
        assert twin["changed"] == e["changed"]  # both rules of a pair edit a text, or neither
    applies = {s for (d, t, s), e in by.items() if d == "MasakhaNEWS" and t == "negation_flip" and e["applicable"]}
    assert applies == {"eng", "fra"}  # the languages with a negation rule
    assert by[("STS16", "number_change", "default")]["share"] > 0.03


def test_reproduce_remakes_it_byte_for_byte(made, tmp_path, shared_data):
    cfg, revision = made
    said = reproduce(cfg.store, cfg.label, shared_data, tmp_path / "cache")
    short = revision.manifest["content_hash"][:12]
    assert f"{cfg.label} ({short}) reproduced by {cfg.label} ({short})" in said


def test_sensitivity_rules_make_a_revision_of_their_own(tmp_path, shared_data):
    with pytest.raises(HtebError, match="cannot join them"):
        _config(tmp_path, shared_data, transformations="negation_flip,keyboard_typos")
    with pytest.raises(HtebError, match="unknown sensitivity rules version '9'"):
        _config(tmp_path, shared_data, sensitivity_rules="9")
