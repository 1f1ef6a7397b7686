"""`hteb-score carry`: a work unit scored on one revision becomes the unit of the same run on a newer
revision only where the scorer reads the same data of that dataset in both. The two revisions are
what the generator's noise profile makes of real rows (shared/data) under rules version 1 and 2:
version 2 leaves the English texts of STSBenchmark as they were (in item files of other bytes: each
record names its rules' hash) and changes SemRel2024's non-Latin ones. Parts are scored by the
scorer's own code with a hashed bag-of-words encoder (scored_parts.py)."""

from __future__ import annotations

import json

import pytest

from hteb_contract.revision.manifest import source_languages
from hteb_contract.stores import open_store
from hteb_score.scoring.carry import scored_digest
from hteb_score.scoring.parts import PART_FILE, read_part
from refusal import assert_one_line, run, snapshot
from scored_parts import scored_part, write_part

PLANNED = ["STSBenchmark", "SemRel2024"]


@pytest.fixture(scope="module")
def store(tmp_path_factory, shared_data):
    """One store holding noise-1339 (rules 1), noise2-1339 (rules 2) of the two datasets, and rebuilt-1339:
    noise-1339's data again, under a label its dataset card names (another content hash)."""
    from hteb_generate.run.pipeline import run as generate
    from hteb_generate.setup.config import build_config

    tmp = tmp_path_factory.mktemp("carry")
    for rules, label in (("1", "noise-1339"), ("2", "noise2-1339"), ("1", "rebuilt-1339")):
        config = build_config(
            seed="1339",
            profile="noise",
            overrides={
                "datasets": ",".join(PLANNED),
                "sample": 6,
                "cache_dir": str(tmp / "cache"),
                "store": str(tmp / "store"),
                "data_dir": str(shared_data),
                "manifest_md": str(tmp / "M.md"),
                "noise_rules": rules,
                "label": label,
            },
        )
        generate(config, log=lambda m: None)
    return f"file://{tmp / 'store'}"


def _part(store, label, datasets):
    return scored_part(datasets, planned=PLANNED, store=store, ref=label)


def _files(revision, name):
    return {f["path"]: f["sha256"] for f in revision.manifest["files"] if f["path"].startswith(f"data/{name}/")}


def test_the_digest_is_of_what_is_read_not_of_the_bytes(store):
    old, new = (open_store(store).fetch(label) for label in ("noise-1339", "noise2-1339"))
    assert _files(old, "STSBenchmark").keys() == _files(new, "STSBenchmark").keys()
    assert _files(old, "STSBenchmark") != _files(new, "STSBenchmark")  # other bytes (the rules' hash) ...
    assert scored_digest(old, "STSBenchmark") == scored_digest(new, "STSBenchmark")  # ... the same texts
    assert scored_digest(old, "SemRel2024") != scored_digest(new, "SemRel2024")


def test_a_carried_unit_is_the_unit_scored_on_the_new_revision_and_says_so(store, tmp_path):
    scored = write_part(_part(store, "noise-1339", ["STSBenchmark"]), tmp_path / "old")
    code, out, err = run("carry", scored, "--store", store, "--revision", "noise2-1339", "--out", tmp_path / "carried")
    assert code == 0, err
    assert "carried STSBenchmark from noise-1339 to noise2-1339" in out
    carried, fresh = read_part(tmp_path / "carried"), _part(store, "noise2-1339", ["STSBenchmark"])
    assert carried.identity == fresh.identity  # the part of the same run on the new revision
    (unit,), (oracle,) = carried.units, fresh.units
    mine, theirs = unit.to_json(), oracle.to_json()
    assert [mine[k] for k in ("task", "scores", "results", "drift")] == [
        theirs[k] for k in ("task", "scores", "results", "drift")
    ]
    assert unit.coverage == oracle.coverage and unit.coverage  # what each figure rests on, in the new revision
    assert [f.code for f in unit.flags] == [f.code for f in oracle.flags] + ["carried_from_revision"]
    # merged with the unit the new revision changed, the card states which unit was carried
    write_part(_part(store, "noise2-1339", ["SemRel2024"]), tmp_path / "semrel")
    code, _, err = run("merge", tmp_path / "carried", tmp_path / "semrel", "--out", tmp_path / "card")
    assert code == 0, err
    card = json.loads((tmp_path / "card" / "result_card.json").read_text())
    assert card["dataset"]["label"] == "noise2-1339"
    assert [(f["code"], f["dataset"]) for f in card["flags"] if f["code"] == "carried_from_revision"] == [
        ("carried_from_revision", "STSBenchmark")
    ]
    assert "carried_from_revision" in (tmp_path / "card" / "result_card.md").read_text()
    # the datasets' languages as the new revision records them, narrowed to a card's datasets by merge --datasets
    recorded = source_languages(open_store(store).fetch("noise2-1339").manifest)
    assert (
        card["dataset"]["languages"] == {name: recorded[name] for name in PLANNED} and len(recorded["SemRel2024"]) == 12
    )
    code, _, err = run("merge", tmp_path / "carried", "--datasets", "STSBenchmark", "--out", tmp_path / "one")
    assert code == 0, err
    one = json.loads((tmp_path / "one" / "result_card.json").read_text())
    assert one["dataset"]["languages"] == {"STSBenchmark": ["eng"]}


def test_a_unit_whose_texts_changed_is_refused(store, tmp_path):
    scored = write_part(_part(store, "noise-1339", ["SemRel2024"]), tmp_path / "old")
    out = tmp_path / "carried"
    code, _, err = run("carry", scored, "--store", store, "--revision", "noise2-1339", "--out", out)
    assert_one_line(code, err, "SemRel2024's texts differ between noise-1339 and noise2-1339", "score it again")
    assert snapshot(out) == {}


def test_a_part_naming_a_revision_the_store_lacks_is_refused(store, tmp_path):
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    data = json.loads(
        (write_part(_part(store, "noise-1339", ["STSBenchmark"]), tmp_path / "p") / PART_FILE).read_text()
    )
    data["identity"]["dataset"]["revision"] = "0" * 64
    (damaged / PART_FILE).write_text(json.dumps(data))
    code, _, err = run("carry", damaged, "--store", store, "--revision", "noise2-1339", "--out", tmp_path / "y")
    assert_one_line(code, err, "0" * 16)
    assert snapshot(tmp_path / "y") == {}


def test_a_part_of_a_revision_rebuilt_under_another_hash_is_carried_given_the_manifest_it_was_scored_on(
    store, tmp_path
):
    first, rebuilt = (open_store(store).fetch(label) for label in ("noise-1339", "rebuilt-1339"))
    assert first.revision_id != rebuilt.revision_id  # the card differs, the data files do not
    scored = write_part(_part(store, "noise-1339", ["STSBenchmark"]), tmp_path / "old")
    carry = ("carry", scored, "--store", store, "--revision", "noise2-1339", "--from-revision", "rebuilt-1339")
    code, _, err = run(*carry, "--out", tmp_path / "a")
    assert_one_line(code, err, f"was scored on revision {first.revision_id}, not on rebuilt-1339", "--scored-manifest")
    code, _, err = run(*carry, "--scored-manifest", first.root / "manifest.json", "--out", tmp_path / "b")
    assert code == 0, err
    assert (
        read_part(tmp_path / "b").units[0].to_json()["scores"]
        == _part(store, "noise2-1339", ["STSBenchmark"]).units[0].to_json()["scores"]
    )
    # a "rebuild" holding other data files (version 2's bytes) is refused, naming the file
    code, _, err = run(
        "carry",
        scored,
        "--store",
        store,
        "--revision",
        "noise2-1339",
        "--from-revision",
        "noise2-1339",
        "--scored-manifest",
        first.root,
        "--out",
        tmp_path / "c",
    )
    assert_one_line(code, err, "does not hold the data the part was scored on", "file data/STSBenchmark/")
    # the manifest of another revision is not the one the part was scored on
    code, _, err = run(*carry, "--scored-manifest", rebuilt.root, "--out", tmp_path / "d")
    assert_one_line(code, err, "--scored-manifest")
    assert [snapshot(tmp_path / x) for x in "acd"] == [{}, {}, {}]


def test_a_unit_whose_figures_would_rest_on_other_subsets_is_refused(store, tmp_path):
    """SemRel2024 under rules 1: keyboard typos change no Ethiopic, Arabic or Indic text, so its figure rests
    on the Latin subsets. A part scored so carries to a rebuild of the same data; the same part as a scorer
    from before coverage wrote it (figures over every subset) does not."""
    part = _part(store, "noise-1339", ["SemRel2024"])
    assert any(c.left_out for c in part.units[0].coverage)
    carry = ("--store", store, "--revision", "rebuilt-1339", "--from-revision", "noise-1339")
    code, _, err = run("carry", write_part(part, tmp_path / "new"), *carry, "--out", tmp_path / "a")
    assert code == 0, err
    old = tmp_path / "old"
    old.mkdir()
    data = json.loads((tmp_path / "new" / PART_FILE).read_text())
    del data["units"][0]["coverage"]
    (old / PART_FILE).write_text(json.dumps(data))
    code, _, err = run("carry", old, *carry, "--out", tmp_path / "b")
    assert_one_line(code, err, "SemRel2024", "subsets, not all it was scored on: score it again")
    assert snapshot(tmp_path / "b") == {}


def test_a_part_written_before_the_encoder_was_recorded_merges_with_fresh_ones_of_its_run(store, tmp_path):
    """noise-1339's parts predate `model.encoder`: absent, it agrees with the fresh parts' value (taken into
    the merged card); a recorded value that differs is another run."""
    older = tmp_path / "older"
    older.mkdir()
    data = json.loads(
        (write_part(_part(store, "noise2-1339", ["STSBenchmark"]), tmp_path / "p") / PART_FILE).read_text()
    )
    data["identity"]["model"] = {
        **data["identity"]["model"],
        "encoder": "sentence-transformers",
        "encoder_reason": "auto: a local folder",
    }
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / PART_FILE).write_text(json.dumps(data))
    for key in ("encoder", "encoder_reason"):
        del data["identity"]["model"][key]
    (older / PART_FILE).write_text(json.dumps(data))
    semrel = json.loads(
        (write_part(_part(store, "noise2-1339", ["SemRel2024"]), tmp_path / "s") / PART_FILE).read_text()
    )
    semrel["identity"]["model"] = {
        **semrel["identity"]["model"],
        "encoder": "sentence-transformers",
        "encoder_reason": "auto: a local folder",
    }
    (tmp_path / "s" / PART_FILE).write_text(json.dumps(semrel))
    code, _, err = run("merge", older, tmp_path / "s", "--out", tmp_path / "card")
    assert code == 0, err
    card = json.loads((tmp_path / "card" / "result_card.json").read_text())
    assert card["model"]["encoder"] == "sentence-transformers"
    semrel["identity"]["model"]["encoder"] = "mteb"
    (tmp_path / "s" / PART_FILE).write_text(json.dumps(semrel))
    code, _, err = run("merge", fresh, tmp_path / "s", "--out", tmp_path / "other")
    assert_one_line(code, err, 'model.encoder: "sentence-transformers" vs "mteb"', "not parts of one run")
