"""Object folders whose files are not what the manifest sealed, in ways a re-seal cannot show (issue 24
items 1, 3 and 4): a link out of the object, a FIFO, a file swapped after it was verified, a label
file pointing at a revision of another label, and a writer handed a record that contradicts itself.
Each is one line from `verify` and from the reader, never a hang, never the other bytes."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest

from deadline import deadline
from hteb_contract.errors import ContractError, HtebError, IntegrityError, StoreError
from hteb_contract.revision import Revision, write_items
from hteb_contract.stores.local import LocalStore
from hteb_score.cli import main
from revision_factory import install

ITEMS = "data/STSBenchmark/paraphrasing_1337.parquet"
SOURCE = "source/STSBenchmark/test.parquet"


@pytest.fixture
def store(tmp_path, bad_revision) -> tuple[Path, Path]:
    """A store holding the sealed revision under label `bad`, and its object folder."""
    digest = install(tmp_path / "store", bad_revision)
    return tmp_path / "store", tmp_path / "store" / "objects" / digest


def _one_line(text: str) -> str:
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text


def _verify_refuses(store: Path, expected: str, capsys, *, revision: str = "bad") -> None:
    with deadline():
        assert main(["verify", "--store", str(store), "--revision", revision]) == 2
    err = _one_line(capsys.readouterr().err)
    assert err.startswith("hteb-score: error: ") and expected in err, err


def _replace_by_link(path: Path, target: Path) -> None:
    path.chmod(0o644)
    path.unlink()
    path.symlink_to(target)


def test_refused_data_file_linked_out_of_the_object(store, tmp_path, capsys):
    """The same bytes, but a symbolic link to a file outside the store: passed `verify` before."""
    root, obj = store
    outside = tmp_path / "outside.parquet"
    shutil.copy(obj / ITEMS, outside)
    _replace_by_link(obj / ITEMS, outside)
    _verify_refuses(root, f"revision bad: {ITEMS} is a symbolic link, not a regular file", capsys)
    with pytest.raises(IntegrityError, match="is a symbolic link"):
        LocalStore(root).fetch("bad")


def test_refused_manifest_linked_out_of_the_object(store, tmp_path, capsys):
    root, obj = store
    shutil.copy(obj / "manifest.json", tmp_path / "manifest.json")
    _replace_by_link(obj / "manifest.json", tmp_path / "manifest.json")
    _verify_refuses(root, "manifest.json: cannot be read (is a symbolic link)", capsys)


@pytest.mark.parametrize("rel", [ITEMS, SOURCE, "source/STSBenchmark/dataset.json"])
def test_refused_fifo_in_the_object(store, capsys, rel):
    """A FIFO where a file was: refused from its kind, never opened for reading (that would block)."""
    root, obj = store
    (obj / rel).chmod(0o644)
    (obj / rel).unlink()
    os.mkfifo(obj / rel)
    _verify_refuses(root, f"revision bad: {rel} is a FIFO, not a regular file", capsys)


def test_refused_fifo_beside_the_files(store, capsys):
    root, obj = store
    os.mkfifo(obj / "data" / "STSBenchmark" / "pipe")
    _verify_refuses(root, "revision bad: data/STSBenchmark/pipe is a FIFO, not a regular file", capsys)


def test_refused_label_asked_is_not_the_label_recorded(store, capsys):
    """labels/other.json points at the object of `bad`: the manifest's label (no hash covers it) must
    not become the card's label of a run that asked for `other`."""
    root, obj = store
    record = json.loads((root / "labels" / "bad.json").read_text())
    (root / "labels" / "other.json").write_text(json.dumps(dict(record, label="other")))
    _verify_refuses(root, "label 'other' points at object", capsys, revision="other")
    with pytest.raises(StoreError, match="whose manifest says it is revision 'bad'"):
        LocalStore(root).fetch("other")
    assert LocalStore(root).fetch(obj.name).label == "bad"  # asked by its hash: no label to contradict


@pytest.mark.parametrize("rel", [ITEMS, SOURCE, "source/STSBenchmark/dataset.json"])
def test_a_file_swapped_after_the_check_is_never_read(store, bad_revision, rel):
    """`open` verified every file; the file is then replaced by another revision's bytes (here those
    of a sibling file, or a dataset.json naming another task type). What is read must be what was
    verified: the read hashes the bytes it parses and refuses the swapped ones."""
    _, obj = store
    revision = Revision.open(obj)
    swapped = obj / rel
    swapped.chmod(0o644)
    if rel.endswith(".json"):
        swapped.write_text(json.dumps({**json.loads(swapped.read_text()), "task_type": "STR"}))
    else:
        shutil.copy(obj / rel.replace("STSBenchmark", "TwitterSemEval2015"), swapped)
    with pytest.raises(IntegrityError) as refused:
        revision.items("STSBenchmark", "paraphrasing", 1337)
    assert f"file {rel} changed after it was verified (sha256 mismatch)" in str(refused.value)


def test_refused_by_the_writer_a_record_contradicting_its_attempts(tmp_path, bad_revision):
    """The writer checks what the reader checks: a record with errors no attempt had is not written."""
    revision = Revision.open(bad_revision)
    record = revision.items("STSBenchmark", "paraphrasing", 1337)[0]
    bad = dataclasses.replace(record, errors=("wrong_language",))
    with pytest.raises(ContractError, match="item 0: the record contradicts its own attempts: errors"):
        write_items(tmp_path, "STSBenchmark", "paraphrasing", 1337, [bad])
    assert not (tmp_path / "data").exists()


def test_refused_by_the_sealer_a_link_in_the_folder(tmp_path, bad_revision):
    """`seal` hashes regular files only: a link would make a revision whose bytes live elsewhere."""
    from revision_factory import reseal

    root = tmp_path / "rev"
    shutil.copytree(bad_revision, root)
    shutil.copy(root / ITEMS, tmp_path / "elsewhere.parquet")
    (root / ITEMS).unlink()
    (root / ITEMS).symlink_to(tmp_path / "elsewhere.parquet")
    with pytest.raises(HtebError, match=f"{ITEMS} is a symbolic link, not a regular file"):
        reseal(root)
