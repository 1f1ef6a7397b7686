"""hteb-score --source-dir on folders that contradict themselves (issue 24): a folder whose
dataset.json names another dataset (it was scored under both names), graded relevance that mteb
and pytrec_eval read as integers (0.5 became 0: nDCG@10 66.67 instead of 100), qrels judging
queries the queries table lacks (dropped without a word), an empty split (a message about
languages). Each is refused before the model loads, or flagged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hteb_contract.sources import read_source_dir
from hteb_score.cli import main
from hteb_score.evaluators.trec import check_judged
from models import minilm_path


def _copy(shared_data: Path, name: str, target: Path, *, folder: str | None = None, rows: int = 6) -> Path:
    dest = target / (folder or name)
    dest.mkdir(parents=True)
    shutil.copy(shared_data / name / "dataset.json", dest / "dataset.json")
    for path in (shared_data / name).glob("*.jsonl"):
        with open(path, encoding="utf-8") as handle:
            (dest / path.name).write_text("".join(line for _, line in zip(range(rows), handle)), encoding="utf-8")
    return dest


def _score(source: Path, tmp_path: Path, capsys) -> tuple[int, str]:
    status = main([minilm_path(), "--source-dir", str(source), "--out", str(tmp_path / "out"), "--quiet"])
    return status, capsys.readouterr().err


def _refused_before_any_work(status: int, err: str, expected: str, tmp_path: Path) -> None:
    assert status == 2 and err.count("\n") == 1 and "Traceback" not in err and expected in err, err
    assert not (tmp_path / "out").exists()


def test_refused_folder_naming_another_dataset(tmp_path, shared_data, capsys):
    source = tmp_path / "src"
    _copy(shared_data, "STSBenchmark", source, folder="FolderA")
    status, err = _score(source, tmp_path, capsys)
    _refused_before_any_work(
        status, err, f"{source / 'FolderA'}: its dataset.json names the dataset 'STSBenchmark'", tmp_path
    )


def test_refused_two_folders_of_one_dataset(tmp_path, shared_data, capsys):
    """STSBenchmark and a copy of it under another folder name: refused before embedding, not after."""
    source = tmp_path / "src"
    _copy(shared_data, "STSBenchmark", source)
    _copy(shared_data, "STSBenchmark", source, folder="STSCopy")
    status, err = _score(source, tmp_path, capsys)
    _refused_before_any_work(status, err, "STSCopy: its dataset.json names the dataset 'STSBenchmark'", tmp_path)


@pytest.mark.parametrize("score, shown", [(0.5, "0.5"), (1e30, "1e+30"), (-0.25, "-0.25")])
def test_refused_qrels_relevance_no_integer_grade(tmp_path, shared_data, capsys, score, shown):
    source = tmp_path / "src"
    folder = _copy(shared_data, "SciFact", source)
    lines = (folder / "qrels.jsonl").read_text().splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), "score": score})
    (folder / "qrels.jsonl").write_text("\n".join(lines) + "\n")
    status, err = _score(source, tmp_path, capsys)
    _refused_before_any_work(
        status,
        err,
        f"qrels row 1: score must be an integer relevance grade within int32, as "
        f"mteb and pytrec_eval read qrels, got {shown}",
        tmp_path,
    )


def test_refused_empty_split(tmp_path, shared_data, capsys):
    source = tmp_path / "src"
    folder = _copy(shared_data, "STSBenchmark", source)
    (folder / "test.jsonl").write_text("")
    status, err = _score(source, tmp_path, capsys)
    _refused_before_any_work(
        status, err, f"{folder}: no rows in test (an empty file?): no text to transform or score", tmp_path
    )


@pytest.mark.parametrize("protocol", ["hteb", "mteb"])
def test_flagged_qrels_of_an_absent_query(tmp_path, shared_data, protocol):
    """A judgement of a query the queries table lacks is flagged as absent documents are."""
    folder = tmp_path / "SciFact"
    shutil.copytree(shared_data / "SciFact", folder)
    with open(folder / "qrels.jsonl", "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"query_id": "no-such-query", "doc_id": "4983", "score": 1}) + "\n")
    dataset = read_source_dir(folder)
    flags = check_judged(dataset, protocol, dataset.tables["queries"])
    absent = [f for f in flags if f.code == "missing_judged_queries"]
    assert len(absent) == 1 and "are absent from the queries table (first: 'no-such-query')" in absent[0].message
    assert "1 of " in absent[0].message
