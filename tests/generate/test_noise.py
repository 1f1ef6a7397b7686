"""The Noise axis's rule-based perturbations: SAGE's definitions on hand-worked examples, the
literature's two, and determinism (the key alone decides the output)."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hteb_generate.transform.noise import PERTURBATIONS, QWERTY_NEIGHBOURS, perturb


def test_numerisation_replaces_the_four_lower_case_letters():
    assert perturb("numerisation", "Open the radio station", key=(1,)) == "Op3n th3 r4d10 st4t10n"
    assert perturb("numerisation", "EIAO", key=(1,)) == "EIAO"


def test_character_deletion_removes_every_tenth_character_and_keeps_word_boundaries():
    # non-space characters counted: "The quick brown fox jumps over the lazy dog"
    # 10th is 'r' of brown, 20th 'p' of jumps, 30th 'a' of lazy; every space stays
    out = perturb("character_deletion", "The quick brown fox jumps over the lazy dog", key=(1,))
    assert out == "The quick bown fox jums over the lzy dog"
    assert out.count(" ") == 8


def test_character_deletion_never_removes_white_space():
    text = "a b c d e f g h i j k l"
    out = perturb("character_deletion", text, key=(1,))
    assert out == "a b c d e f g h i  k l"


def test_random_capitalisation_upper_cases_a_quarter_of_the_positions_and_switches_nothing():
    text = "the quick brown fox jumps over the lazy dog" * 3
    out = perturb("random_capitalisation", text, key=(1339, "SciFact", "random_capitalisation", text))
    assert out.lower() == text
    changed = sum(a != b for a, b in zip(text, out))
    letters = sum(c.isalpha() for c in text)
    # 25% of all positions are drawn; spaces drawn stay spaces
    assert 0 < changed <= round(0.25 * len(text))
    assert abs(changed - 0.25 * letters) < 0.1 * letters
    assert perturb("random_capitalisation", "ABC", key=(2,)) == "ABC"


def test_keyboard_typos_use_qwerty_neighbours_and_keep_case():
    assert QWERTY_NEIGHBOURS["g"] == "bfhtvy"
    assert QWERTY_NEIGHBOURS["q"] == "aw"
    text = "Typing Quickly On A Small Keyboard Gives Typos " * 20
    out = perturb("keyboard_typos", text, key=(7,))
    assert len(out) == len(text)
    diffs = [(a, b) for a, b in zip(text, out) if a != b]
    assert diffs, "5% of ~900 characters: some typos"
    for a, b in diffs:
        assert b.lower() in QWERTY_NEIGHBOURS[a.lower()]
        assert a.isupper() == b.isupper()


def test_punctuation_casing_loss():
    assert perturb("punctuation_casing_loss", "Hello, World!  It's  «fine» — really?", key=(1,)) == (
        "hello world its fine really"  # the dash is punctuation (Pd)
    )


@pytest.mark.parametrize("name", list(PERTURBATIONS))
def test_the_key_alone_decides_the_output(name):
    texts = [
        "Scientists found no association between the drug and mortality.",
        "¿Dónde está la estación de tren?",
        "",
        "x",
    ]
    first = {t: perturb(name, t, key=(1339, "SciFact", name, t)) for t in texts}
    shuffled = texts[:]
    random.Random(0).shuffle(shuffled)
    np.random.seed(123)  # global state must not matter
    again = {t: perturb(name, t, key=(1339, "SciFact", name, t)) for t in shuffled}
    assert first == again
    assert all(isinstance(out, str) for out in first.values())


def test_another_seed_draws_other_noise():
    text = "the quick brown fox jumps over the lazy dog " * 5
    a = perturb("random_capitalisation", text, key=(1339, "d", text))
    b = perturb("random_capitalisation", text, key=(1340, "d", text))
    assert a != b and a.lower() == b.lower()


# -- the noise profile: a revision made by the rules alone ------------------------------------------------


def _noise_config(tmp_path, shared_data, **overrides):
    from hteb_generate.setup.config import build_config

    given = {
        "datasets": "STSBenchmark,SciFact",
        "max_texts": 6,
        "cache_dir": str(tmp_path / "cache"),
        "store": str(tmp_path / "store"),
        "data_dir": str(shared_data),
        "manifest_md": str(tmp_path / "M.md"),
        **overrides,
    }
    return build_config(seed="1339", profile="noise", overrides=given)


def _published_config(tmp_path, shared_data, **overrides):
    """`make generate SEED=1339 PROFILE=noise` as published: every dataset of shared/data at full size."""
    return _noise_config(tmp_path, shared_data, datasets=None, max_texts=None, **overrides)


def test_the_noise_profile_takes_every_dataset_of_the_data_dir_and_no_model(tmp_path, shared_data):
    from hteb_generate.setup.config import build_config

    cfg = build_config(
        seed="1339",
        profile="noise",
        overrides={
            "data_dir": str(shared_data),
            "cache_dir": str(tmp_path / "cache"),
            "store": str(tmp_path / "store"),
        },
    )
    assert set(cfg.datasets) >= {"STSBenchmark", "SciFact", "Banking77", "SummEval", "STS12"}
    assert len(cfg.datasets) == len(list(shared_data.glob("*/dataset.json")))
    assert cfg.transformations == tuple(PERTURBATIONS.names()) and cfg.llm_transformations == ()
    assert cfg.label == "noise3-1339" and cfg.sample is None and cfg.max_texts is None  # rules version 3's label
    second = build_config(seed="1339", profile="noise", overrides={"data_dir": str(shared_data), "noise_rules": "2"})
    assert second.label == "noise2-1339"  # the findings' revision, made by its version
    first = build_config(seed="1339", profile="noise", overrides={"data_dir": str(shared_data), "noise_rules": "1"})
    assert first.label == "noise-1339"  # the published label of version 1 never moves to other texts
    content = cfg.content_config()
    assert "model" not in content and "temperature" not in content and len(content["noise_rules_sha256"]) == 64


def test_a_mixed_run_records_the_model_and_the_rules(tmp_path, shared_data):
    cfg = _noise_config(tmp_path, shared_data, transformations="paraphrasing,numerisation")
    assert cfg.llm_transformations == ("paraphrasing",)
    content = cfg.content_config()
    assert content["model"] == "smollm2" and "noise_rules_sha256" in content


def test_an_unknown_transformation_names_both_kinds(tmp_path, shared_data):
    from hteb_contract.errors import HtebError

    with pytest.raises(HtebError, match="did you mean 'numerisation'.*paraphrasing.*keyboard_typos"):
        _noise_config(tmp_path, shared_data, transformations="numerization")


def test_a_noise_revision_is_made_by_the_rules_verified_and_rebuilt_identically(tmp_path, shared_data):
    from hteb_contract.stores import open_store
    from hteb_generate.transform.noise import RULES_MODEL
    from hteb_generate.run.pipeline import run

    cfg = _noise_config(tmp_path, shared_data)
    first = run(cfg, log=lambda m: None)
    revision = open_store(cfg.store).fetch(cfg.label)
    revision.check_content()
    assert revision.manifest["generator"]["model_id"] == RULES_MODEL and revision.manifest["judge"] is None
    assert revision.manifest["counters"]["llm_calls"] == 0
    for dataset in ("STSBenchmark", "SciFact"):
        assert {t for t, _ in revision.variants(dataset)} == set(PERTURBATIONS.names())
        for transformation, seed in revision.variants(dataset):
            for item in revision.items(dataset, transformation, seed):
                assert item.transformed_text == perturb(
                    transformation, item.original_text, key=(seed, dataset, transformation, item.original_text)
                )
                assert item.generator_model == RULES_MODEL and len(item.attempts) == 1 and not item.errors
                assert item.judge.quality is None and item.judge.parapluie is None
                assert item.rule_made and item.sampling is None and item.generator_revision is None  # nothing invented
    card = (revision.root / "README.md").read_text(encoding="utf-8")
    assert "Rule-transformed (noise) versions" in card and "no decoding settings, no errors checked, no judge" in card
    for llm_only in (
        "Generator:",
        "Decoding:",
        "## Error rates",
        "## Judge scores",
        "| dataset | transformation |",
        "Prompt layout",
        "Retries:",
        "Language identification",
    ):
        assert llm_only not in card, llm_only
    assert "Retrieval and reranking transform the queries only" in card  # a choice that applies to the rules
    said: list[str] = []
    again = run(replace(cfg, batch_size=1), log=said.append)
    assert again.manifest["content_hash"] == first.manifest["content_hash"] and again.published.created is False
    assert any("reusing" in line for line in said) and not any("made by the noise rules" in line for line in said)


def test_a_rerun_on_changed_sources_makes_the_records_again(tmp_path, shared_data):
    import shutil

    from hteb_generate.run.pipeline import run

    data = tmp_path / "data"
    shutil.copytree(shared_data / "STSBenchmark", data / "STSBenchmark")
    cfg = _noise_config(tmp_path, shared_data, datasets="STSBenchmark", data_dir=str(data), publish=False)
    first = run(cfg, log=lambda m: None)
    test = data / "STSBenchmark" / "test.jsonl"
    text = test.read_text(encoding="utf-8")
    test.write_text(
        text.replace(text.split('"')[3], "A boy is styling his hair.", 1), encoding="utf-8"
    )  # the first row
    said: list[str] = []
    again = run(cfg, log=said.append)
    assert again.manifest["content_hash"] != first.manifest["content_hash"]
    assert any("made by the noise rules" in line for line in said)


def test_a_rerun_after_a_rule_is_edited_makes_the_records_again(tmp_path, shared_data, monkeypatch):
    """A rule edited without a new version (while the version is being made) keeps the configuration's hash, which
    names the version's constants, not its code: the staging folder names the rules' code, so the next run makes
    the records with the edited rule instead of serving the ones staged before the edit."""
    from hteb_generate.run import pipeline
    from hteb_generate.transform import noise

    cfg = _noise_config(tmp_path, shared_data, datasets="STSBenchmark", publish=False)
    first = pipeline.run(cfg, log=lambda m: None)
    assert first.folder == pipeline.staging_folder(cfg) and noise.rules_code_digest()[:12] in first.folder.name
    edited = {**noise.RULE_SETS[cfg.noise_rules]._entries, "numerisation": lambda text, rng, language=None: text}
    monkeypatch.setattr(noise.RULE_SETS[cfg.noise_rules], "_entries", edited)
    monkeypatch.setattr(noise, "rules_code_digest", lambda: "e" * 64)  # what editing noise.py does to the digest
    said: list[str] = []
    again = pipeline.run(cfg, log=said.append)
    assert again.folder != first.folder and any("made by the noise rules" in line for line in said)
    assert again.manifest["content_hash"] != first.manifest["content_hash"]


@pytest.mark.slow
def test_the_published_noise_revision_is_what_the_noise_profile_makes_today(tmp_path, shared_data):
    """`make generate PROFILE=noise SEED=1339` on shared/data remakes the published noise-1339 file
    for file (docs/revisions/noise-1339/manifest.json, the revision the findings are scored on):
    the writer's columns, checks and encoding change no byte of its records and sources (about 20 s on
    2 cores). The files derived from them (the dataset card, eval.yaml) are not compared, as
    `reproduction` does not compare them: the published card predates the fix that made its configs
    load (issue 33), so today's card, and with it the content hash, differ: MANIFEST.md marks it superseded,
    quoting the hash this build seals. It names noise rules version 1,
    the version its config implies (`reproduce` rebuilds it so): version 2 (issue 34) never changes it."""
    import json

    from hteb_contract.reproduction import NOT_COMPARED_FILES
    from hteb_generate.run.pipeline import run

    published = json.loads(
        (Path(__file__).resolve().parents[2] / "docs" / "revisions" / "noise-1339" / "manifest.json").read_text(
            encoding="utf-8"
        )
    )
    cfg = _published_config(tmp_path, shared_data, noise_rules="1", record_specs=False)  # as it was made
    assert cfg.config_hash() == published["config_hash"]
    made = run(cfg, log=lambda m: None).manifest

    def content(manifest: dict) -> dict[str, str]:
        return {f["path"]: f["sha256"] for f in manifest["files"] if f["path"] not in NOT_COMPARED_FILES}

    assert content(made) == content(published) and made["counters"] == published["counters"]
    # so MANIFEST.md marks noise-1339 superseded, quoting the content hash this very build seals
    from hteb_generate.revision import manifest_md

    table = manifest_md.parse((Path(__file__).resolve().parents[2] / "MANIFEST.md").read_text(encoding="utf-8"))
    (row,) = [r for r in table if r["label"] == "noise-1339"]
    assert row["superseded by"].startswith("noise2-1339: ") and made["content_hash"] in row["superseded by"]
    assert made["content_hash"] != row["content hash"]


@pytest.mark.slow
def test_every_long_stage_shows_a_bar_with_its_total_and_time_left(tmp_path, shared_data, capsys):
    from hteb_generate.run.pipeline import run

    # one rule: the bars are the stages', not the rules' (five rules on SciFact's whole corpus cost 100 s here)
    cfg = _noise_config(tmp_path, shared_data, publish=False, corpus_noise=True, transformations="keyboard_typos")
    run(cfg, log=lambda m: None)
    err = capsys.readouterr().err
    files = len(cfg.datasets) * len(cfg.transformations)
    for stage, total in (
        ("reading sources", 2),
        ("noise rules", 2),
        ("noise rules on the corpus", 1),
        ("writing sources", 2),
        ("checking and writing the rules' items", files),
        ("writing the corpus", len(cfg.transformations)),
    ):
        assert re.search(rf"{stage}: 100%\S* +{total}/{total} \[\d\d:\d\d<\d\d:\d\d", err), stage
    assert re.search(r"sealing \(sha256\): 100%\S* +(\d+)/\1 \[\d\d:\d\d<\d\d:\d\d", err)
