"""compare_revisions: a regeneration reproduces a revision when its texts are identical and its judge
numbers are within the tolerance; everything else that differs is reported, where and what."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from hteb_contract import revision as rev
from hteb_contract.errors import HtebError
from hteb_contract.records import ItemRecord, Judge
from hteb_contract.reproduction import Tolerance, compare_revisions, described
from hteb_contract.revision import Revision
from hteb_contract.validation import validate
from revision_factory import build_revision, reseal

NAMES = ["STSBenchmark", "MasakhaNEWS"]
#: The record the perturbations hit: MasakhaNEWS's first text (the issue's paraphrasing case).
TARGET = ("MasakhaNEWS", 0)


def _judged(record: ItemRecord, parapluie: float = -0.019, quality: float = 4.0) -> ItemRecord:
    return replace(record, judge=Judge(model="judge/test", quality=quality, fluency=5.0, parapluie=parapluie))


def _build(root: Path, data: Path, names: list[str] = NAMES, **change) -> Revision:
    """A judged revision; `change` (record fields or judge numbers) applies to the TARGET record only."""
    seen: dict[str, int] = {}

    def edit(record: ItemRecord) -> ItemRecord:
        index = seen[record.dataset] = seen.get(record.dataset, -1) + 1
        if (record.dataset, index) != TARGET:
            return _judged(record)
        judge_change = {k: change[k] for k in ("parapluie", "quality") if k in change}
        record_change = {k: v for k, v in change.items() if k not in judge_change}
        if "transformed_text" in record_change:  # the kept attempt's output too: a record agrees with its attempts
            text = record_change["transformed_text"]
            record_change["attempts"] = (replace(record.attempts[0], steps=(text,), output=text),)
        return replace(_judged(record, **judge_change), **record_change)

    build_revision(root, data, names, edit=edit)
    return Revision.open(root)


def _reseal(root: Path, **fields) -> Revision:
    """Seal a changed folder again (its manifest's content fields replaced by `fields`)."""
    reseal(root, **fields)
    return Revision.open(root)


@pytest.fixture(scope="module")
def reference(tmp_path_factory, shared_data) -> Revision:
    return _build(tmp_path_factory.mktemp("reference") / "rev", shared_data)


def test_an_identical_regeneration_reproduces_with_every_record_identical(reference, tmp_path, shared_data):
    report = compare_revisions(_build(tmp_path / "rev", shared_data), reference)
    assert report.reproduced and report.differences == () and report.differences_total == 0
    assert report.records_compared == report.identical > 0
    assert (report.within_tolerance, report.differing, report.missing, report.extra) == (0, 0, 0, 0)
    assert report.files_compared == len([f for f in reference.manifest["files"] if f["path"].startswith("source/")])


def test_parapluie_across_a_rounding_step_reproduces_and_is_counted(reference, tmp_path, shared_data):
    """The issue's case: -0.020 here, -0.019 published."""
    ours = _build(tmp_path / "rev", shared_data, parapluie=-0.020)
    assert ours.manifest["content_hash"] != reference.manifest["content_hash"]
    report = compare_revisions(ours, reference)
    assert report.reproduced and report.differences_total == 0
    assert (report.within_tolerance, report.judge_values_within_tolerance) == (1, 1)
    assert report.identical == report.records_compared - 1
    assert "reproduced by" in report.render() and "ParaPLUIE ±0.002" in report.render()


def test_parapluie_moved_beyond_the_tolerance_is_named(reference, tmp_path, shared_data):
    ours = _build(tmp_path / "rev", shared_data, parapluie=-0.029)
    report = compare_revisions(ours, reference)
    assert not report.reproduced and report.differing == 1 and report.differences_total == 1
    (difference,) = report.differences
    dataset, transformation, seed, split, item_id, field, subset = difference.where.split("/")
    assert (dataset, transformation, seed) == ("MasakhaNEWS", "paraphrasing", "1337")
    assert any(
        r.ref == (split, item_id, field) and r.subset == subset
        for r in reference.items("MasakhaNEWS", "paraphrasing", 1337)
    )
    assert (difference.what, difference.ours, difference.theirs) == ("judge.parapluie", -0.029, -0.019)
    assert compare_revisions(ours, reference, Tolerance(parapluie=0.01)).reproduced
    assert "NOT reproduced" in report.render() and "judge.parapluie: ours -0.029, theirs -0.019" in report.render()


def test_a_changed_text_differs_whatever_the_tolerance(reference, tmp_path, shared_data):
    ours = _build(tmp_path / "rev", shared_data, transformed_text="something else entirely")
    report = compare_revisions(ours, reference, Tolerance(parapluie=100, rating=100))
    assert not report.reproduced and report.differing == 1
    assert [d.what for d in report.differences] == ["transformed_text", "attempts[0].steps[0]", "attempts[0].output"]
    assert report.differences[0].ours == "something else entirely"
    assert report.differences[0].where.startswith("MasakhaNEWS/paraphrasing/1337/")


def test_ratings_are_compared_exactly_by_default(reference, tmp_path, shared_data):
    ours = _build(tmp_path / "rev", shared_data, quality=3.0)
    assert [(d.what, d.ours, d.theirs) for d in compare_revisions(ours, reference).differences] == [
        ("judge.quality", 3.0, 4.0)
    ]
    assert compare_revisions(ours, reference, Tolerance(rating=1)).reproduced


def test_a_judge_number_against_none_differs(reference, tmp_path, shared_data):
    ours = _build(tmp_path / "rev", shared_data, parapluie=None)
    report = compare_revisions(ours, reference, Tolerance(parapluie=1))
    assert [(d.what, d.ours, d.theirs) for d in report.differences] == [("judge.parapluie", None, -0.019)]


def test_missing_and_extra_records_are_differences(reference, tmp_path, shared_data):
    root = tmp_path / "rev"
    _build(root, shared_data)
    records = Revision.open(root).items("STSBenchmark", "paraphrasing", 1337)
    rev.write_items(root, "STSBenchmark", "paraphrasing", 1337, records[1:])
    ours = _reseal(root)
    report = compare_revisions(ours, reference)
    assert (report.missing, report.extra, report.differences_total) == (1, 0, 1)
    gone = records[0]
    assert report.differences[0].where == (
        f"STSBenchmark/paraphrasing/1337/{gone.split}/{gone.item_id}/{gone.field}/{gone.subset}"
    )
    assert (report.differences[0].what, report.differences[0].ours, report.differences[0].theirs) == (
        "record",
        "(absent)",
        "present",
    )
    back = compare_revisions(reference, ours)
    assert (back.missing, back.extra) == (0, 1)


def test_a_different_config_and_generator_are_differences(reference, tmp_path, shared_data):
    root = tmp_path / "rev"
    _build(root, shared_data)
    generator = {**reference.manifest["generator"], "revision": "abc123"}
    ours = _reseal(
        root,
        config={"rows": 6},
        generator=generator,
        created="2030-01-01T00:00:00+00:00",
        counters={"items": 1, "llm_calls": 99, "cache_hits": 0, "errors": {}},
        repo_id="hf://x/y",
    )
    report = compare_revisions(ours, reference)
    assert {(d.where, d.what, d.ours, d.theirs) for d in report.differences} == {
        ("manifest", "config.rows", 6, 5),
        ("manifest", "config_hash", rev.config_hash({"rows": 6}), rev.config_hash({"rows": 5})),
        ("manifest", "generator.revision", "abc123", ""),
    }
    assert report.records_compared == report.identical  # created, counters and repo_id are not compared


def test_a_source_file_must_be_byte_identical(reference, tmp_path, shared_data):
    root = tmp_path / "rev"
    _build(root, shared_data)
    info = root / "source" / "STSBenchmark" / "dataset.json"
    info.write_text(json.dumps(json.loads(info.read_text()), indent=4))
    report = compare_revisions(_reseal(root), reference)
    assert [(d.where, d.what) for d in report.differences] == [("source/STSBenchmark/dataset.json", "sha256")]


def test_a_missing_dataset_is_missing_records_and_sources(reference, tmp_path, shared_data):
    ours = _build(tmp_path / "rev", shared_data, names=["STSBenchmark"])
    report = compare_revisions(ours, reference, limit=4)
    masakha = len(reference.items("MasakhaNEWS", "paraphrasing", 1337))
    assert report.missing == masakha and report.extra == 0
    assert len(report.differences) == 4 and report.differences_total > masakha
    assert any(
        d.where.startswith("source/MasakhaNEWS/") and d.ours == "(absent)"
        for d in compare_revisions(ours, reference).differences
    )
    assert "and" in report.first(2) and report.first(2).count("ours") == 2


def test_the_report_as_json_follows_its_schema(reference, tmp_path, shared_data):
    report = compare_revisions(_build(tmp_path / "rev", shared_data, parapluie=-0.020), reference)
    data = json.loads(json.dumps(report.to_dict()))
    validate("reproduction", data, what="report")
    assert data["reproduced"] is True and data["judge_values_within_tolerance"] == 1
    assert data["tolerance"] == {"parapluie": 0.002, "rating": 0.0}
    assert data["reference"]["content_hash"] == reference.manifest["content_hash"]
    assert "README.md" in data["not_compared"] and "manifest.runtime" in data["not_compared"]


def test_negative_tolerance_is_a_one_line_error():
    with pytest.raises(HtebError, match="tolerances must be >= 0"):
        Tolerance(parapluie=-0.1)


def test_a_manifest_field_added_later_reads_as_its_stated_default():
    """A revision made before `corpus_perturbed` existed describes the same content as one that says False,
    and not the same as one that says True."""
    older = {"label": "x", "seeds": [1339]}
    assert described(older) == described({**older, "corpus_perturbed": False})
    assert described(older) != described({**older, "corpus_perturbed": True})
