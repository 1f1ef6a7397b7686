"""docs/extending/adding-a-transformation.md, followed to the letter: a copy of the three packages
gets a toy transformation through the page's steps only (one row of the transformation table, a
template row and its prompt in every prompt set), and the copy generates it on real STSBenchmark
rows and scores it end to end (tests/generate/toy_run.py, a fresh interpreter on the copy).

If adding a transformation ever needs another file, the run fails here, and the page must say so.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hteb_generate.transform.transformations import PROMPT_SETS

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "extending" / "adding-a-transformation.md"
TOY = "simplification"
TABLE = "schemas/hteb_contract/specs/transformations.yaml"
PROMPTS = "generate/hteb_generate/transform/transformations.py"


def _steps() -> str:
    return PAGE.read_text(encoding="utf-8").split("## Steps", 1)[1].split("\n## ", 1)[0]


def _blocks() -> list[str]:
    """The page's code blocks in its steps, as they go into the files (the list's indent removed)."""
    found = re.findall(r"^    ```\w+\n(.*?)^    ```$", _steps(), re.MULTILINE | re.DOTALL)
    return ["".join(line[4:] + "\n" for line in block.splitlines()) for block in found]


def _edits() -> tuple[tuple[str, str, str], ...]:
    """The page's steps, each (file, the place the text goes before, text): the row in its axis's block
    (after style_change, the last lexical row), the template row at the end of `templates:`, and the
    prompt before the "translate" template of every prompt set."""
    row, template_row, prompt = _blocks()
    return (
        (TABLE, "  - name: expansion\n", row),
        (TABLE, "\ntransformations:\n", template_row),
        (PROMPTS, '        "translate": Template(\n', prompt),
    )


def _copy_packages(root: Path) -> None:
    for folder, package in (("schemas", "hteb_contract"), ("generate", "hteb_generate"), ("score", "hteb_score")):
        shutil.copytree(REPO / folder / package, root / folder / package, ignore=shutil.ignore_patterns("__pycache__"))


def _follow_the_page(root: Path, *, leaving_out: int | None = None) -> None:
    """The page's steps on the copy at `root`; `leaving_out`: the index of an edit not made."""
    for index, (path, anchor, text) in enumerate(_edits()):
        if index == leaving_out:
            continue
        target = root / path
        body = target.read_text(encoding="utf-8")
        assert anchor in body, f"{path} no longer has the place the page names: {anchor!r}"
        target.write_text(body.replace(anchor, text + anchor), encoding="utf-8")


def test_the_page_names_exactly_the_files_its_steps_touch():
    assert set(re.findall(r"`((?:schemas|generate|score)/[\w/.]+)`", _steps())) == {TABLE, PROMPTS}
    assert len(_blocks()) == 3 and _blocks()[0].startswith(f"  - name: {TOY}\n")


def _toy_run(tmp_path: Path, shared_data: Path, *, leaving_out: int | None = None) -> subprocess.CompletedProcess:
    """tests/generate/toy_run.py on a copy of the packages the page's steps were followed on."""
    root, work = tmp_path / "repo", tmp_path / "work"
    _copy_packages(root)
    _follow_the_page(root, leaving_out=leaving_out)
    work.mkdir()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(str(root / folder) for folder in ("schemas", "generate", "score")),
    }
    command = [sys.executable, str(Path(__file__).with_name("toy_run.py")), str(work), TOY, str(shared_data)]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False)


@pytest.mark.slow  # a fresh interpreter imports both programs: about half a minute
def test_a_toy_transformation_added_as_the_page_says_is_generated_and_scored(tmp_path, shared_data):
    work = tmp_path / "work"
    done = _toy_run(tmp_path, shared_data)
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])

    # Its prompt reached the model, in the text's language; the new template changed the set's hash (the page says so).
    system = re.search(r'"(.*\{target_language\}.*)"', _blocks()[2]).group(1)
    assert system.format(target_language="English") in summary["systems"]
    assert summary["prompt_set_sha256"] != PROMPT_SETS.get("smollm2-fewshot").sha256

    assert summary["transformations"] == [TOY]
    records = summary["records"]
    assert len(records) == 8 and {r["template_id"] for r in records} == {"smollm2-fewshot/simplify"}
    for record in records:
        words = record["original"].split()
        assert record["transformed"] == " ".join(words[: max(1, 2 * len(words) // 3)])
        assert record["parapluie"] == pytest.approx(1.0, abs=1e-6)  # log p(yes) - log p(no) of the stand-in

    # Scored on its axis, into the HTEB total, and printed under the axis's label.
    card = json.loads((work / "out" / "result_card.json").read_text(encoding="utf-8"))
    (score,) = [s["value"] for s in card["scores"] if s["transformation"] == TOY]
    aggregates = card["aggregates"]
    assert list(aggregates["per_transformation"]) == [TOY]
    assert aggregates["per_transformation"][TOY]["mean"] == pytest.approx(100 * score)
    assert aggregates["per_axis"] == {"lexical": aggregates["hteb_total"]} == {"lexical": pytest.approx(100 * score)}
    assert f"| {TOY} | Lexical/Stylistic |" in (work / "out" / "result_card.md").read_text(encoding="utf-8")

    # The mteb protocol scores it too, on the same axis: its card says which protocol made it.
    mteb_card = json.loads((work / "out-mteb" / "result_card.json").read_text(encoding="utf-8"))
    assert (card["protocol"], mteb_card["protocol"]) == ("hteb", "mteb")
    (mteb_score,) = [s["value"] for s in mteb_card["scores"] if s["transformation"] == TOY]
    assert mteb_card["aggregates"]["per_axis"] == {"lexical": pytest.approx(100 * mteb_score)}


@pytest.mark.slow  # a fresh interpreter per step left out, each stopped where the step is missed
@pytest.mark.parametrize(
    ("left_out", "said"),
    [
        (0, f"unknown transformation '{TOY}'"),
        (1, "unknown template 'simplify'"),
        (2, "must define exactly ('paraphrase', 'style_change', 'expand', 'summarise', 'translate', 'simplify')"),
    ],
    ids=["row", "template-row", "prompt"],
)
def test_leaving_out_any_step_of_the_page_fails(tmp_path, shared_data, left_out, said):
    """A test of the test: each step the page lists is needed, so the run above cannot pass without it,
    and the run says which is missing."""
    done = _toy_run(tmp_path, shared_data, leaving_out=left_out)
    assert done.returncode != 0 and said in done.stderr.strip().splitlines()[-1], done.stderr[-2000:]
