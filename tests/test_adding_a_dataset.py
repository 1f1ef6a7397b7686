"""docs/extending/adding-a-dataset.md followed to the letter: a copy of the contract package gets the
page's example row in the one file the page lists, and that dataset (STS12's local copy under a new
name) is generated with the noise rules (no LLM) by `hteb-generate` reading the copy, then scored by
`hteb-score` on the copy under both protocols. Nothing else is edited; without the row the name is unknown."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision
from hteb_contract.specs.datasets import load_dataset_specs
from hteb_contract.stores import open_store
from hteb_generate.sources.sources_table import lookup_source

sys.path.insert(0, str(Path(__file__).resolve().parent / "generate"))
from toy_run import ENCODER  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs" / "extending" / "adding-a-dataset.md"
CONTRACT = REPO / "schemas" / "hteb_contract"
MAIN_METRIC = {"hteb": "spearman", "mteb": "cosine_spearman"}  # an STS dataset's, as each protocol names it


def _section(heading: str) -> str:
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert found, f"{PAGE.name} has no section {heading!r}"
    return found.group(1)


def files_to_touch() -> list[str]:
    """The repository paths the page's "Files to touch" list names, in order."""
    return re.findall(r"^- `([^`]+)`", _section("Files to touch"), re.M)


def example_row() -> str:
    """The page's example row: the first YAML block of its "The row" section."""
    block = re.search(r"```yaml\n(.*?)```", _section("The row"), re.S)
    assert block, "the page shows no example row"
    return block.group(1)


def _digests(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.fixture(scope="module")
def added(tmp_path_factory, shared_data):
    """The example row added to a copy of the contract; `hteb-generate` (noise profile) run on it."""
    tmp = tmp_path_factory.mktemp("adding")
    package = tmp / "schemas" / "hteb_contract"
    shutil.copytree(CONTRACT, package, ignore=shutil.ignore_patterns("__pycache__"))
    (name,) = [row["name"] for row in yaml.safe_load(example_row())]
    for path in files_to_touch():  # the page's one step: append the row to the table
        target = tmp / path
        target.write_text(target.read_text(encoding="utf-8") + "\n" + example_row(), encoding="utf-8")
    store = tmp / "store"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(package.parent), str(REPO / "score"), str(REPO / "generate")]),
        "HF_HUB_OFFLINE": "1",
    }
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from hteb_generate.cli import main; main()",
            "--seed",
            "1339",
            "--profile",
            "noise",
            "--datasets",
            name,
            "--max-texts",
            "16",
            "--data-dir",
            str(shared_data),
            "--cache-dir",
            str(tmp / "cache"),
            "--store",
            str(store),
            "--manifest-md",
            str(tmp / "MANIFEST.md"),
        ],
        cwd=tmp,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    revision = open_store(f"file://{store}").fetch("noise3-1339")
    return {"name": name, "package": package, "revision": revision, "env": env, "store": store, "tmp": tmp}


@pytest.mark.slow  # a fresh interpreter runs the page's steps
def test_the_page_lists_one_file_and_the_test_touched_only_it(added):
    assert files_to_touch() == ["schemas/hteb_contract/specs/datasets.yaml"]
    before, after = _digests(CONTRACT), _digests(added["package"])
    assert sorted(path for path in after if after[path] != before.get(path)) == ["specs/datasets.yaml"]


def test_the_example_row_is_valid_and_new(tmp_path):
    table = tmp_path / "datasets.yaml"
    table.write_text(example_row(), encoding="utf-8")
    (row,) = load_dataset_specs(table)
    assert row.registry and row.mteb_task is None and row.local == "STS12"
    with pytest.raises(HtebError, match=f"unknown dataset '{row.name}'"):  # nothing but the row makes it known
        lookup_source(row.name)


@pytest.mark.slow  # a fresh interpreter runs the page's steps
def test_the_new_dataset_is_generated_under_its_name_with_its_licence(added):
    revision: Revision = added["revision"]
    name = added["name"]
    assert revision.dataset_names() == [name]
    (source,) = revision.manifest["sources"]
    assert (source["name"], source["task_type"], source["languages"]) == (name, "STS", ["eng"])
    front = yaml.safe_load((revision.root / "README.md").read_text(encoding="utf-8").split("---")[1])
    assert front["source_licenses"] == [
        {
            "dataset": name,
            "license": "cc-by-4.0",
            "license_name": "CC BY 4.0",
            "license_link": "https://example.org/toy-sts",
        }
    ]


@pytest.mark.slow  # a fresh interpreter runs the page's steps
@pytest.mark.parametrize("protocol", ["hteb", "mteb"])
def test_the_new_dataset_is_scored_under_both_protocols(added, protocol):
    """`hteb-score` on the copy (a hashed bag of words through `--encoder python`): the new dataset's
    Original and every Noise rule scored with its task type's main metric, by the protocol asked."""
    revision: Revision = added["revision"]
    tmp, out = added["tmp"], added["tmp"] / f"scores-{protocol}"
    (tmp / "bag_of_words.py").write_text(ENCODER, encoding="utf-8")
    command = [sys.executable, "-c", "from hteb_score.cli import main; main()", f"{tmp / 'bag_of_words.py'}:BagOfWords"]
    command += ["--encoder", "python", "--store", f"file://{added['store']}", "--revision", "noise3-1339"]
    command += ["--protocol", protocol, "--out", str(out), "--quiet"]
    done = subprocess.run(command, cwd=tmp, env=added["env"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    card = json.loads((out / "result_card.json").read_text(encoding="utf-8"))
    assert card["protocol"] == protocol and card["dataset"]["datasets"] == [added["name"]]
    scores = {s["transformation"]: s for s in card["scores"] if s["dataset"] == added["name"]}
    assert set(scores) == {"original", *revision.manifest["transformations"]} and len(scores) == 6
    assert {s["metric"] for s in scores.values()} == {MAIN_METRIC[protocol]}
    assert all(math.isfinite(s["value"]) and -1 <= s["value"] <= 1 for s in scores.values())
