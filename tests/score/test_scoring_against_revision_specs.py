"""The scorer against the rows a revision was made by (issue 43, scoring/revision_specs.py): a revision
whose recorded rows differ from the installed tables in a column the scorer reads is refused in one line
naming the row and column, before anything loads; a column it never reads may differ; a revision
without the block is scored as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
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
    ("transformations.yaml", lambda d: _row(d["transformations"], "keyboard_typos").update(axis="lexical"),
     "transformations row 'keyboard_typos': axis"),
    ("transformations.yaml", lambda d: _row(d["axes"], "noise").update(paper=True), "axes row 'noise': paper"),
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
