"""What "reproduces" means (hteb_contract.reproduction), on copies of the bundled sample revision
resealed with one change each: a ParaPLUIE value one rounding step away reproduces, a larger one, a
changed text, a missing record or another configuration do not, and the report says where."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from hteb_contract.records import ItemRecord
from hteb_contract.reproduction import PARAPLUIE_TOLERANCE, compare_revisions
from hteb_contract.revision import MANIFEST, Revision, seal, write_items
from hteb_contract.stores import open_store

SAMPLE_STORE = Path(__file__).resolve().parents[2] / "score" / "hteb_score" / "sample" / "store"
DATASET, TRANSFORMATION, SEED = "MasakhaNEWS", "paraphrasing", 1339


@pytest.fixture(scope="module")
def published() -> Revision:
    return open_store(str(SAMPLE_STORE)).fetch("sample-1339")


def _resealed(published: Revision, tmp_path: Path, edit, *, config_change: dict | None = None) -> Revision:
    """A copy of the sample whose MasakhaNEWS paraphrasing records went through `edit`, sealed again."""
    root = tmp_path / "candidate"
    shutil.copytree(published.root, root)
    root.chmod(0o755)
    for path in root.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    records = edit(published.items(DATASET, TRANSFORMATION, SEED))
    write_items(root, DATASET, TRANSFORMATION, SEED, records)
    fields = {k: v for k, v in json.loads((root / MANIFEST).read_text()).items()
              if k not in ("schema_version", "files", "content_hash")}
    fields["config"] = {**fields["config"], **(config_change or {})}
    seal(root, fields)
    return Revision.open(root)


def _judged(records: list[ItemRecord]) -> int:
    return next(i for i, r in enumerate(records) if r.judge.parapluie is not None)


def _move_parapluie(by: float):
    def edit(records):
        i = _judged(records)
        records[i] = replace(records[i], judge=replace(records[i].judge, parapluie=round(records[i].judge.parapluie + by, 3)))
        return records
    return edit


def test_the_same_revision_reproduces_itself(published):
    report = compare_revisions(published, published)
    assert report.reproduced and report.records == report.identical == 416 and report.differing == 0


def test_a_parapluie_value_across_one_rounding_step_still_reproduces(published, tmp_path):
    candidate = _resealed(published, tmp_path, _move_parapluie(0.001))
    assert candidate.manifest["content_hash"] != published.manifest["content_hash"]  # identity: every byte
    report = compare_revisions(candidate, published)
    assert report.reproduced and report.judge_within_tolerance == 1 and report.identical == 415
    assert "reproduces" in report.summary() and f"ParaPLUIE ±{PARAPLUIE_TOLERANCE:g}" in report.summary()


def test_a_larger_judge_difference_does_not_and_the_report_names_it(published, tmp_path):
    candidate = _resealed(published, tmp_path, _move_parapluie(0.01))
    report = compare_revisions(candidate, published)
    assert not report.reproduced and report.differing == 1
    difference = report.differences[0]
    assert difference.what == "judge.parapluie" and difference.where.startswith(f"{DATASET} {TRANSFORMATION}_{SEED} ")
    assert compare_revisions(candidate, published, parapluie_tolerance=0.01).reproduced
    assert json.loads(json.dumps(report.to_dict()))["reproduced"] is False


def test_a_changed_text_or_a_missing_record_does_not_reproduce(published, tmp_path):
    def change_text(records):
        records[0] = replace(records[0], transformed_text=records[0].transformed_text + " ")
        return records

    report = compare_revisions(_resealed(published, tmp_path / "a", change_text), published)
    assert not report.reproduced and report.differences[0].what == "transformed_text"
    report = compare_revisions(_resealed(published, tmp_path / "b", lambda records: records[1:]), published)
    assert not report.reproduced and [(d.what, d.candidate, d.reference) for d in report.differences] == [
        ("record", "absent", "present")]


def test_another_configuration_does_not_reproduce(published, tmp_path):
    report = compare_revisions(_resealed(published, tmp_path, lambda r: r, config_change={"temperature": 0.5}),
                               published)
    assert not report.reproduced and report.differences[0].where == "manifest"
    assert report.differences[0].what == "config"
