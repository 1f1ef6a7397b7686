"""The scorer against the rows a revision was made by (issue 43). Its axes (which transformation is on
which, an axis's label and place in the total) are read from the revision: a later release whose table
says otherwise scores it to the same card, byte for byte but for when it was made (a scorer run on an
edited copy of the contract package, hteb_contract.taxonomy). A revision whose recorded rows differ from
the installed tables in a column the scorer still reads from them (scoring/revision_specs.py) is refused
in one line naming the row and column, before anything loads; a column it never reads may differ; a
revision without the block is scored as before, by the installed table, and its card says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

import pytest
import hteb_contract
from edited_tables import edit_installed_table
from revision_factory import build_revision, install, reseal

from hteb_contract.specs.resolved import specs_block
from hteb_score.cli import main


def _revision(tmp_path: Path, shared_data: Path, *, with_specs: bool) -> Path:
    """A real two-dataset revision (published), with the `specs` block today's tables give, or none."""
    build_revision(tmp_path / "rev", shared_data, ["STSBenchmark", "Banking77"], label="s1", rows=6,
                   transformations=("paraphrasing", "keyboard_typos"))
    if with_specs:
        detector = {"library": "lingua-language-detector", "version": "2.1.1"}
        reseal(tmp_path / "rev", specs=specs_block(["STSBenchmark", "Banking77"], ["paraphrasing", "keyboard_typos"],
                                                   noise_scripts=True, language_detector=detector))
    install(tmp_path / "store", tmp_path / "rev")
    return tmp_path / "store"


def _score(store: Path, out: Path, capsys) -> tuple[int, str]:
    status = main(["hteb:random", "--store", str(store), "--revision", "s1", "--out", str(out), "--quiet"])
    return status, capsys.readouterr().err


def _row(rows: list, name: str) -> dict:
    return next(r for r in rows if r["name"] == name)


@pytest.mark.parametrize(("table", "edit", "where"), [
    ("transformations.yaml", lambda d: _row(d["transformations"], "keyboard_typos").update(made_by="llm"),
     "transformations row 'keyboard_typos': made_by"),
    ("datasets.yaml", lambda d: _row(d, "Banking77").update(eval_split="train"), "datasets row 'Banking77': eval_split"),
    ("datasets.yaml", lambda d: _row(d, "STSBenchmark").update(subsets={"default": ["deu"]}),
     "datasets row 'STSBenchmark': subsets"),
    ("noise_scripts.yaml", lambda d: d["scripts"]["Latn"].update(cased=False), "noise_scripts"),
])
def test_a_row_the_scorer_reads_that_changed_since_is_refused_in_one_line(tmp_path, shared_data, monkeypatch, capsys,
                                                                          table, edit, where):
    store = _revision(tmp_path, shared_data, with_specs=True)
    edit_installed_table(monkeypatch, table, edit)
    status, err = _score(store, tmp_path / "out", capsys)
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"revision 's1': its {where} differs from this hteb-score's table" in err
    assert not (tmp_path / "out").exists()


def test_a_column_the_scorer_never_reads_may_change_and_the_revision_scores(tmp_path, shared_data, monkeypatch,
                                                                          capsys):
    store = _revision(tmp_path, shared_data, with_specs=True)
    edit_installed_table(monkeypatch, "transformations.yaml",
          lambda d: _row(d["transformations"], "paraphrasing").update(judge_task="rewrite it"))
    edit_installed_table(monkeypatch, "datasets.yaml", lambda d: _row(d, "Banking77").update(citation="@misc{x}"))
    status, err = _score(store, tmp_path / "out", capsys)
    assert status == 0, err
    assert json.loads((tmp_path / "out" / "result_card.json").read_text())["dataset"]["label"] == "s1"


def test_a_revision_without_the_block_is_scored_as_before_with_nothing_to_check(tmp_path, shared_data, monkeypatch, capsys):
    store = _revision(tmp_path, shared_data, with_specs=False)
    edit_installed_table(monkeypatch, "datasets.yaml", lambda d: _row(d, "Banking77").update(eval_split="train"))
    status, err = _score(store, tmp_path / "out", capsys)
    assert status == 0, err


#: Per card, what two runs of the same revision differ in: when each was made and how long it took.
PER_RUN = ("created", "timings")


def _later_release(tmp_path: Path) -> Path:
    """A copy of the contract package as a later release might ship it: the Noise axis relabelled and counted
    in the HTEB total, paraphrasing moved from the Lexical axis to Length."""
    packages = tmp_path / "later-release"
    shutil.copytree(Path(hteb_contract.__file__).parent, packages / "hteb_contract",
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = packages / "hteb_contract" / "specs" / "transformations.yaml"
    table = yaml.safe_load(path.read_text(encoding="utf-8"))
    _row(table["axes"], "noise").update(label="Perturbation", paper=True)
    rows = table["transformations"]
    moved = rows.pop(rows.index(_row(rows, "paraphrasing")))
    moved["axis"] = "length"
    rows.insert(next(i for i, r in enumerate(rows) if r["axis"] == "length"), moved)
    path.write_text(yaml.safe_dump(table, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return packages


def _score_with(packages: Path, store: Path, out: Path) -> dict:
    """hteb-score, in a process whose contract package is `packages`' copy; the card it writes."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(packages), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "hteb_score.cli", "hteb:random", "--store", str(store), "--revision",
                           "s1", "--out", str(out), "--quiet"], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads((out / "result_card.json").read_text())


def _same_run(card: dict) -> dict:
    return {k: v for k, v in card.items() if k not in PER_RUN}


def _markdown(folder: Path) -> str:
    """result_card.md less its line of timings."""
    return "".join(line for line in (folder / "result_card.md").read_text().splitlines(keepends=True)
                   if not line.startswith("Embedded "))


def test_a_later_release_with_other_axes_scores_a_revision_to_the_same_card(tmp_path, shared_data, capsys):
    store = _revision(tmp_path, shared_data, with_specs=True)
    assert _score(store, tmp_path / "now", capsys)[0] == 0
    now = json.loads((tmp_path / "now" / "result_card.json").read_text())
    assert now["taxonomy"]["from"] == "revision"
    assert {a["name"]: a["transformations"] for a in now["taxonomy"]["axes"]}["lexical"] == ["paraphrasing"]
    assert "the revision's own (its manifest's `specs`)" in _markdown(tmp_path / "now")
    later = _score_with(_later_release(tmp_path), store, tmp_path / "later")
    assert _same_run(later) == _same_run(now)
    assert _markdown(tmp_path / "later") == _markdown(tmp_path / "now")


def test_the_later_release_does_rescore_a_revision_that_records_no_axes(tmp_path, shared_data, capsys):
    """The control: the edited copy is in effect, and a revision made before the block is read by it (stated)."""
    store = _revision(tmp_path, shared_data, with_specs=False)
    assert _score(store, tmp_path / "now", capsys)[0] == 0
    now = json.loads((tmp_path / "now" / "result_card.json").read_text())
    later = _score_with(_later_release(tmp_path), store, tmp_path / "later")
    assert "taxonomy" not in now and "taxonomy" not in later
    assert set(now["aggregates"]["per_axis"]) == {"lexical", "noise"}
    assert set(later["aggregates"]["per_axis"]) == {"length", "noise"}
    beside = "is reported beside HTEB, not in its total"
    assert beside in _markdown(tmp_path / "now") and beside not in _markdown(tmp_path / "later")
    assert "| Perturbation |" in _markdown(tmp_path / "later")
    assert "this hteb-score's table (the revision records none" in _markdown(tmp_path / "later")
