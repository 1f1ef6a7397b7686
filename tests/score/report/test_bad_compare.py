"""`compare` refuses inputs it cannot vouch for (mixed protocols, revisions unknown for some inputs)
unless --force, and then says so in comparison.json; its --out is written whole or not at all."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from cards import MODELS, make_card, paper_rows, write_card
from hypothesis import given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract.taxonomy import INSTALLED
from hteb_contract.errors import HtebError
from hteb_score.cli import main
from hteb_score.report.compare.inputs import check_inputs
from hteb_score.scoring.model_scores import ModelScores
from hteb_score.cli.output import PARTIAL

SPLITS = ("--splits", "5")


def assert_refused(code: int, err: str, *needles: str) -> None:
    assert code == 2 and err.count("\n") == 1 and err.startswith("hteb-score: error: "), err
    assert "Traceback" not in err and all(n in err for n in needles), err


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def partials(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(PARTIAL)]


def mteb_card(folder: Path, model: str) -> Path:
    card = make_card(model, model_index=2)
    card["protocol"] = card["evaluation"]["protocol"] = "mteb"
    return write_card(folder, card)


def table(path: Path, model: str, **extra: str) -> Path:
    """The paper's rows of one model, as a scores table, with `extra` columns."""
    rows = [
        {
            "model": r["model"],
            "dataset": r["dataset"],
            "task_type": r["task_type"],
            "original": r["original"],
            "hteb": r["hteb"],
            **extra,
        }
        for r in paper_rows()
        if r["model"] == model
    ]
    with path.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_refused_mixed_protocols(card_files, tmp_path, run_cli):
    other = mteb_card(tmp_path, "F2LLM-v2-4B")
    code, _, err = run_cli("compare", *card_files[:2], other, "--out", tmp_path / "out", *SPLITS)
    assert_refused(
        code, err, "different evaluation protocols", "hteb: All-MiniLM-L12-v2", "mteb: F2LLM-v2-4B", "--force"
    )
    assert not (tmp_path / "out").exists() and partials(tmp_path) == []


def test_flagged_mixed_protocols_forced(card_files, tmp_path, run_cli):
    other = mteb_card(tmp_path, "F2LLM-v2-4B")
    code, _, err = run_cli("compare", *card_files[:2], other, "--out", tmp_path / "out", "--force", *SPLITS)
    assert code == 0 and "FORCED" in err
    result = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))
    assert result["forced"] is True
    assert any(
        w.startswith("FORCED: the inputs were scored on different evaluation protocols") for w in result["warnings"]
    )
    assert "different evaluation protocols" in (tmp_path / "out" / "comparison.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("column", ["revision", "protocol"])
def test_refused_table_rows_without_what_the_cards_state(card_files, tmp_path, run_cli, column):
    """Cards name their revision and protocol; a table that names one but not the other cannot be checked."""
    stated = {"revision": "sha256:" + "a" * 64, "protocol": "hteb"}
    del stated[column]
    rows = table(tmp_path / "t.csv", "NV-Embed-v2", **stated)
    code, _, err = run_cli("compare", *card_files[:2], "--scores-table", rows, "--out", tmp_path / "out", *SPLITS)
    noun = {"revision": "dataset revision", "protocol": "evaluation protocol"}[column]
    assert_refused(code, err, f"NV-Embed-v2 state(s) no {noun}", "--force")
    assert not (tmp_path / "out").exists()


def test_flagged_table_rows_without_revision_forced(card_files, tmp_path, run_cli):
    rows = table(tmp_path / "t.csv", "NV-Embed-v2")
    code, _, err = run_cli(
        "compare", *card_files[:2], "--scores-table", rows, "--out", tmp_path / "out", "--force", *SPLITS
    )
    assert code == 0, err
    warnings = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))["warnings"]
    forced = [w for w in warnings if w.startswith("FORCED")]
    assert len(forced) == 2
    assert forced[0].startswith("FORCED: NV-Embed-v2 state(s) no dataset revision, so it cannot be checked")
    assert forced[1].startswith("FORCED: NV-Embed-v2 state(s) no evaluation protocol, so it cannot be checked")


def test_flagged_tables_that_state_no_revision(tmp_path, run_cli):
    """Tables alone (a paper's numbers) name no revision or protocol: compared, and said so."""
    tables = [table(tmp_path / f"{i}.csv", m) for i, m in enumerate(MODELS[:3])]
    args = [a for t in tables for a in ("--scores-table", t)]
    code, _, err = run_cli("compare", *args, "--out", tmp_path / "out", *SPLITS)
    assert code == 0, err
    warnings = json.loads((tmp_path / "out" / "comparison.json").read_text(encoding="utf-8"))["warnings"]
    assert "no input names its dataset revision: whether the scores are comparable was not checked" in warnings
    assert "no input names its evaluation protocol: whether the scores are comparable was not checked" in warnings


def test_refused_table_with_two_protocols_for_one_model(tmp_path, run_cli):
    path = table(tmp_path / "t.csv", "NV-Embed-v2", protocol="hteb")
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[-1] = lines[-1].rsplit(",", 1)[0] + ",mteb"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = run_cli("compare", "--scores-table", path, "--out", tmp_path / "out")
    assert_refused(code, err, "model 'NV-Embed-v2' has rows on different evaluation protocols (hteb vs mteb)")


@pytest.fixture
def earlier(card_files, tmp_path, run_cli) -> tuple[Path, dict[str, bytes]]:
    """An earlier comparison of three models in tmp_path/out."""
    assert run_cli("compare", *card_files[:3], "--out", tmp_path / "out", *SPLITS)[0] == 0
    return tmp_path / "out", snapshot(tmp_path / "out")


def test_refused_out_holding_an_earlier_comparison(card_files, earlier, run_cli):
    out, before = earlier
    code, _, err = run_cli("compare", *card_files[:2], "--out", out, *SPLITS)
    assert_refused(code, err, f"--out {out} holds an earlier result", "--overwrite")
    assert snapshot(out) == before and partials(out.parent) == []


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]], ids=["plain", "with-overwrite"])
def test_refused_out_holding_other_files(card_files, tmp_path, run_cli, overwrite):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine\n")
    code, _, err = run_cli("compare", *card_files[:2], "--out", tmp_path / "out", *overwrite, *SPLITS)
    assert_refused(code, err, "non-empty folder without comparison.json")
    assert snapshot(tmp_path / "out") == {"notes.txt": b"mine\n"}


def test_refused_write_failing_midway_leaves_the_earlier_comparison(card_files, earlier, run_cli, monkeypatch):
    """A write that fails while the model-index files are written, after comparison.json (the disk
    refuses a name): the earlier comparison stays whole and no partial folder is left. (A model name too
    long for a file name no longer fails: its folder name is shortened, test_escaping.py.)"""
    out, before = earlier
    from hteb_score.report.compare import comparison_files

    written = comparison_files.atomic_write_bytes

    def refuse_model_index(path, data):
        if "model_index" in Path(path).parts:
            raise OSError(36, "File name too long", str(path))
        return written(path, data)

    monkeypatch.setattr(comparison_files, "atomic_write_bytes", refuse_model_index)
    code, _, err = run_cli("compare", *card_files[:3], "--out", out, "--overwrite", *SPLITS)
    assert_refused(code, err, "File name too long")
    assert snapshot(out) == before and partials(out.parent) == []


def test_overwrite_replaces_the_earlier_comparison_whole(card_files, earlier, run_cli):
    out, before = earlier
    assert {p.name for p in (out / "model_index").iterdir()} == {"All-MiniLM-L12-v2", "Jasper-600M", "Qwen3-Emb-8B"}
    code, stdout, err = run_cli("compare", *card_files[:2], "--out", out, "--overwrite", *SPLITS)
    assert code == 0, err
    assert {p.name for p in (out / "model_index").iterdir()} == {"All-MiniLM-L12-v2", "Jasper-600M"}
    assert len(json.loads((out / "comparison.json").read_text(encoding="utf-8"))["inputs"]) == 2
    assert partials(out.parent) == []


@settings(max_examples=examples(100), deadline=None)
@given(
    splits=st.one_of(st.integers(-(2**70), 2**70).map(str), st.floats().map(str), st.text(max_size=20)),
    seed=st.one_of(st.integers(-(2**70), 2**70).map(str), st.text(max_size=20)),
    ci=st.one_of(st.sampled_from(["walsh", "bootstrap"]), st.text(max_size=12)),
)
def test_fuzz_compare_options(card_files, splits, seed, ci):
    """Whatever --splits, --seed and --ci are, the run (refused at its --out, which holds an
    earlier comparison) ends in one line on stderr and touches nothing."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        (out / "comparison.json").write_text("{}\n")
        stdout, stderr = io.StringIO(), io.StringIO()
        with redirect_stdout(stdout), redirect_stderr(stderr):
            code = main(
                [
                    "compare",
                    *map(str, card_files[:2]),
                    "--out",
                    str(out),
                    "--splits",
                    splits,
                    "--seed",
                    seed,
                    "--ci",
                    ci,
                ]
            )
        assert_refused(code, stderr.getvalue())
        assert snapshot(out) == {"comparison.json": b"{}\n"} and partials(Path(tmp)) == []


_VALUE = st.one_of(st.none(), st.sampled_from(["hteb", "mteb", "sha256:" + "a" * 64, "sha256:" + "b" * 64]))


@settings(max_examples=examples(200), deadline=None)
@given(stated=st.lists(st.tuples(_VALUE, _VALUE), min_size=1, max_size=5), force=st.booleans())
def test_fuzz_check_inputs(stated, force):
    """Inputs stating any revision and protocol (or none): refused in one line exactly when some
    differ or some are missing beside stated ones, unless forced; forcing is always in the warnings."""
    models = [
        ModelScores(f"m{i}", "fuzz", revision, INSTALLED, protocol=protocol)
        for i, (revision, protocol) in enumerate(stated)
    ]
    problems = 0
    for values in (list(v) for v in zip(*stated)):
        known = {v for v in values if v is not None}
        problems += len(known) > 1 or (bool(known) and None in values)
    try:
        warnings = check_inputs(models, force=force)
    except HtebError as err:
        assert problems and not force and "\n" not in str(err) and "--force" in str(err)
        return
    assert sum(w.startswith("FORCED") for w in warnings) == (problems if force else 0)
