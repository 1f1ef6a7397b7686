"""`--encoder mteb` refused before any work: mteb missing, a name mteb has not registered, no
model named, a dataset naming no mteb task or one mteb does not have. One line, exit 2, nothing
written, no weights loaded (these tests are not `slow`: loading weights would fail them)."""

from __future__ import annotations

import json
import shutil
import sys

import pytest

from refusal import assert_one_line, partials, run

pytest.importorskip("mteb")

REGISTERED = "intfloat/e5-small-v2"  # in mteb 2.26's registry; never loaded here


def _refused(tmp_path, *args, needles=()):
    out = tmp_path / "out"
    code, _, err = run(*args, "--out", out, "--quiet")
    assert_one_line(code, err, *needles)
    assert not out.exists() and partials(tmp_path) == []


def test_refused_a_name_mteb_has_not_registered(tmp_path):
    _refused(
        tmp_path,
        "hteb-test/not-in-mteb",
        "--encoder",
        "mteb",
        needles=("--encoder mteb", "'hteb-test/not-in-mteb' not found in MTEB registry"),
    )


def test_refused_mteb_encoder_without_a_model(tmp_path):
    _refused(tmp_path, "--encoder", "mteb", needles=("--encoder mteb needs a MODEL_ID",))


def test_refused_mteb_encoder_when_mteb_is_missing(tmp_path, monkeypatch):
    """mteb not importable (None in sys.modules is how Python marks a module that must not import)."""
    monkeypatch.setitem(sys.modules, "mteb", None)
    _refused(tmp_path, REGISTERED, "--encoder", "mteb", needles=("needs mteb", "pip install"))


@pytest.mark.parametrize(
    ("mteb_task", "needles"),
    [
        (None, ("'STSBenchmark' names no mteb task",)),
        ("NoSuchMtebTask", ("mteb has no task 'NoSuchMtebTask'",)),
    ],
    ids=["none", "unknown"],
)
def test_refused_dataset_without_an_mteb_task(mteb_task, needles, shared_data, tmp_path):
    """mteb's prompt depends on the task: a dataset naming no mteb task (or a wrong one) cannot be encoded."""
    source = tmp_path / "data" / "STSBenchmark"
    shutil.copytree(shared_data / "STSBenchmark", source)
    info = json.loads((source / "dataset.json").read_text())
    info.pop("mteb_task")
    if mteb_task is not None:
        info["mteb_task"] = mteb_task
    (source / "dataset.json").write_text(json.dumps(info))
    _refused(tmp_path, REGISTERED, "--encoder", "mteb", "--source-dir", source.parent, needles=needles)
