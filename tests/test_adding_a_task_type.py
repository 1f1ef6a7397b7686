"""docs/extending/adding-a-task-type.md kept honest: the page lists at most five files, each one that
exists does hold the entry point the page names, and a toy task type added through those entry points
alone (tests/toy_task_type.py, in a fresh interpreter so nothing it registers outlives it) is seen by
every registry: the schemas, both protocols, the evaluators, the mteb and Hub converters; a dataset
of it scores under the `mteb` protocol as mteb itself scores it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toy_task_type import NAME, PIECES

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "extending" / "adding-a-task-type.md"
SAMPLE_REVISION = next((REPO / "score" / "hteb_score" / "sample" / "store" / "objects").iterdir())
#: what each listed file holds that the page tells a newcomer to extend
ENTRY_POINTS = {
    "schemas/hteb_contract/tasks.py": "TASK_TYPES: Registry[TaskType]",
    "score/hteb_score/mteb_interop/task_data.py": "def per_subset(",
    "generate/hteb_generate/sources/hub_converters.py": "@CONVERTERS.register(",
}


def files_to_touch() -> list[str]:
    """The repository paths of the page's "Files to touch" list, in order."""
    section = re.search(r"^## Files to touch\n(.*?)(?=^## )", PAGE.read_text(encoding="utf-8"), re.M | re.S)
    assert section, f"{PAGE.name} has no 'Files to touch' section"
    return re.findall(r"^- `([^`]+)`", section.group(1), re.M)


def test_the_page_lists_at_most_five_files_and_the_toy_follows_them():
    listed = files_to_touch()
    assert len(listed) <= 5
    assert listed == list(PIECES)
    for path in listed:
        if "<type>" in path:  # a new file, beside the existing ones of its kind
            assert (REPO / path).parent.is_dir(), path
        else:
            assert ENTRY_POINTS[path] in (REPO / path).read_text(encoding="utf-8"), path


def run_toy(shared_data: Path, leave_out: str | None = None) -> subprocess.CompletedProcess[str]:
    """tests/toy_task_type.py in a fresh interpreter, with one of the page's pieces left out (`leave_out`)."""
    env = {**os.environ, **({"TOY_LEAVE_OUT": leave_out} if leave_out else {})}
    command = [sys.executable, str(REPO / "tests" / "toy_task_type.py"), str(shared_data), str(SAMPLE_REVISION)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO, env=env)


@pytest.fixture(scope="module")
def toy(shared_data) -> dict:
    done = run_toy(shared_data)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow  # a fresh interpreter runs the page's steps
def test_the_schemas_take_the_toy_once_it_is_a_row_and_still_refuse_an_unknown_type(toy):
    assert "is not one of" in toy["refused_before"]["item"] and NAME in toy["refused_before"]["item"]
    assert "is not one of" in toy["refused_before"]["manifest"]
    assert toy["item"] is None and toy["manifest"] is None
    for refused in (toy["item_unknown"], toy["manifest_unknown"]):
        assert refused.startswith("ContractError: ") and "'NoSuchType' is not one of" in refused
        assert f"'{NAME}'" in refused  # the enum is the task table's names, the toy among them


@pytest.mark.slow  # a fresh interpreter runs the page's steps
def test_every_registry_finds_the_toy(toy):
    assert toy["main_metrics"] == {"hteb": "spearman", "mteb": "cosine_spearman"}
    assert toy["evaluator"] == "ToySimilarityEvaluator"
    assert toy["evaluator_module"] == "hteb_score.evaluators.toy_similarity"  # found as a file of the package
    assert toy["hub_converter"] == "toy_hub_rows" and toy["mteb_converter"] is True
    assert toy["dataset_task_type"] == NAME and toy["rows"] == 40


@pytest.mark.slow  # a fresh interpreter runs the page's steps
def test_a_dataset_of_the_toy_scores_as_mteb_scores_it(toy):
    assert toy["ours"]["metric"] == "cosine_spearman"
    assert toy["ours"]["subsets"].keys() == toy["mteb"].keys() == {"default"}
    assert isinstance(toy["mteb"]["default"], float)
    assert toy["ours"]["subsets"]["default"] == pytest.approx(toy["mteb"]["default"], abs=1e-9)


@pytest.mark.slow  # a fresh interpreter runs the page's steps
def test_a_dataset_of_the_toy_goes_generate_revision_score_under_both_protocols(toy):
    """The new type's dataset in a source folder, made a Noise revision by hteb-generate and scored by hteb-score
    under both protocols, each with its main metric (the test below leaves each piece out in turn)."""
    assert toy["revision"]["sources"] == [NAME]
    for protocol, metric in (("hteb", "spearman"), ("mteb", "cosine_spearman")):
        card = toy["revision"]["cards"][protocol]
        assert card["protocol"] == protocol
        assert card["scores"] == [
            ["ToyBenchmark", NAME, "character_deletion", metric],
            ["ToyBenchmark", NAME, "original", metric],
        ]


#: What is refused when the page's step of each file is left out (its last line of stderr).
REFUSED_WITHOUT = {
    "schemas/hteb_contract/tasks.py": "unknown task type 'ToySimilarity'",
    "score/hteb_score/evaluators/<type>.py": "unknown task type 'ToySimilarity'",  # no evaluator is registered
    "score/hteb_score/mteb_interop/task_data.py": "unknown mteb converter for task type 'ToySimilarity'",
    "generate/hteb_generate/sources/hub_converters.py": "unknown Hub task type 'ToySimilarity'",
}


@pytest.mark.slow  # a fresh interpreter per piece
@pytest.mark.parametrize("piece", list(REFUSED_WITHOUT))
def test_leaving_out_any_step_of_the_page_fails(shared_data, piece):
    """A test of the test: the toy without one of the page's pieces does not pass (the fifth file is this test)."""
    assert set(REFUSED_WITHOUT) | {"tests/score/evaluators/test_<type>.py"} == set(PIECES)
    done = run_toy(shared_data, piece)
    assert done.returncode != 0
    assert REFUSED_WITHOUT[piece] in done.stderr.strip().splitlines()[-1]
