"""The scorer against the rows a revision was made by (issue 43). A revision that records them (the
manifest's `specs`) is scored by them: its axes (which transformation is on which, an axis's label and
place in the total: hteb_contract.taxonomy) and its datasets' mteb settings and main scores
(evaluators/task_settings.py). A later release whose tables say otherwise (a scorer run on an edited
copy of the contract package) scores it to the same card, byte for byte but for when it was made; the
same release rescores a revision made before the block, which is read by the installed tables, and
its card says so (the control: the edited copy is in effect)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from revision_factory import build_revision, install, reseal

import hteb_contract
from hteb_contract.specs.resolved import specs_block
from hteb_score.cli import main

DATASETS, TRANSFORMATIONS = ["STSBenchmark", "Banking77"], ["paraphrasing", "keyboard_typos"]
#: Per card, what two runs of the same revision differ in: when each was made and how long it took.
PER_RUN = ("created", "timings")


def _revision(tmp_path: Path, shared_data: Path, *, with_specs: bool) -> Path:
    """A real two-dataset revision (published), with the `specs` block today's tables give, or none."""
    build_revision(tmp_path / "rev", shared_data, DATASETS, label="s1", rows=6, transformations=tuple(TRANSFORMATIONS))
    if with_specs:
        detector = {"library": "lingua-language-detector", "version": "2.1.1"}
        reseal(
            tmp_path / "rev",
            specs=specs_block(DATASETS, TRANSFORMATIONS, noise_scripts=True, language_detector=detector),
        )
    install(tmp_path / "store", tmp_path / "rev")
    return tmp_path / "store"


def _row(rows: list, name: str) -> dict:
    return next(r for r in rows if r["name"] == name)


def _other_axes(table: Any) -> None:
    """The Noise axis relabelled and counted in the HTEB total; paraphrasing moved from Lexical to Length."""
    _row(table["axes"], "noise").update(label="Perturbation", paper=True)
    rows = table["transformations"]
    moved = rows.pop(rows.index(_row(rows, "paraphrasing")))
    moved["axis"] = "length"
    rows.insert(next(i for i, r in enumerate(rows) if r["axis"] == "length"), moved)


def _other_settings(rows: Any) -> None:
    """Banking77 few-shot with 4 examples per label; STSBenchmark's mteb main score Pearson's."""
    _row(rows, "Banking77")["evaluation"] = {"samples_per_label": 4}
    _row(rows, "STSBenchmark")["main_score"] = "cosine_pearson"


#: (the table file edited, the edit, the protocol scored under, what a card read by the edited table shows)
LATER: dict[str, tuple[str, Callable[[Any], None], str, Callable[[dict, str], bool]]] = {
    "axes": (
        "transformations.yaml",
        _other_axes,
        "hteb",
        lambda card, md: set(card["aggregates"]["per_axis"]) == {"length", "noise"} and "| Perturbation |" in md,
    ),
    "dataset-settings": (
        "datasets.yaml",
        _other_settings,
        "mteb",
        lambda card, md: (
            card["evaluation"]["datasets"]["Banking77"]["samples_per_label"] == 4
            and any(r["metric"] == "cosine_pearson" for r in card["scores"])
        ),
    ),
}


def _later_release(tmp_path: Path, table: str, edit: Callable[[Any], None]) -> Path:
    """A copy of the contract package as a later release might ship it: `table` edited by `edit`."""
    packages = tmp_path / "later-release"
    shutil.copytree(
        Path(hteb_contract.__file__).parent, packages / "hteb_contract", ignore=shutil.ignore_patterns("__pycache__")
    )
    path = packages / "hteb_contract" / "specs" / table
    rows = yaml.safe_load(path.read_text(encoding="utf-8"))
    edit(rows)
    path.write_text(yaml.safe_dump(rows, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return packages


def _score(store: Path, out: Path, protocol: str, packages: Path | None = None) -> dict:
    """hteb-score's card of revision s1 of `store`: in this process, or in one whose contract package is `packages`'."""
    args = [
        "hteb:random",
        "--store",
        str(store),
        "--revision",
        "s1",
        "--protocol",
        protocol,
        "--out",
        str(out),
        "--quiet",
    ]
    if packages is None:
        assert main(args) == 0
    else:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(packages), os.environ.get("PYTHONPATH", "")])}
        done = subprocess.run(
            [sys.executable, "-m", "hteb_score.cli", *args], env=env, capture_output=True, text=True, timeout=600
        )
        assert done.returncode == 0, done.stderr
    return json.loads((out / "result_card.json").read_text())


def _same_run(card: dict) -> dict:
    return {k: v for k, v in card.items() if k not in PER_RUN}


def _markdown(folder: Path) -> str:
    """result_card.md less its line of timings."""
    return "".join(
        line
        for line in (folder / "result_card.md").read_text().splitlines(keepends=True)
        if not line.startswith("Embedded ")
    )


@pytest.mark.parametrize("edit", LATER)
def test_a_later_release_with_other_rows_scores_a_revision_to_the_same_card(tmp_path, shared_data, edit):
    table, change, protocol, shows = LATER[edit]
    store = _revision(tmp_path, shared_data, with_specs=True)
    now = _score(store, tmp_path / "now", protocol)
    assert now["taxonomy"]["from"] == "revision"
    assert "the revision's own (its manifest's `specs`)" in _markdown(tmp_path / "now")
    later = _score(store, tmp_path / "later", protocol, _later_release(tmp_path, table, change))
    assert not shows(later, _markdown(tmp_path / "later"))
    assert _same_run(later) == _same_run(now)
    assert _markdown(tmp_path / "later") == _markdown(tmp_path / "now")


@pytest.mark.parametrize("edit", LATER)
def test_the_later_release_rescores_a_revision_that_records_no_rows(tmp_path, shared_data, edit):
    """The control: the edited copy is in effect, and a revision made before the block is read by it (stated)."""
    table, change, protocol, shows = LATER[edit]
    store = _revision(tmp_path, shared_data, with_specs=False)
    now = _score(store, tmp_path / "now", protocol)
    later = _score(store, tmp_path / "later", protocol, _later_release(tmp_path, table, change))
    assert "taxonomy" not in now and "taxonomy" not in later
    assert not shows(now, _markdown(tmp_path / "now")) and shows(later, _markdown(tmp_path / "later"))
    assert "this hteb-score's table (the revision records none" in _markdown(tmp_path / "later")


def _benchmark_columns(store: Path, packages: Path | None = None) -> list[str]:
    """The columns of revision s1's mteb Benchmark (mteb_interop/benchmark.py), in a process whose contract package
    is `packages`' (or this one's)."""
    code = (
        "import json, sys; from hteb_score.mteb_interop.benchmark import columns, get_benchmark; "
        "print(json.dumps(columns(get_benchmark('s1', store=sys.argv[1]).taxonomy)))"
    )
    extra = [] if packages is None else [str(packages)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*extra, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", code, f"file://{store}"], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    columns: list[str] = json.loads(done.stdout.splitlines()[-1])
    return columns


def _model_index(card: Path, out: Path, packages: Path | None = None, *args: str) -> str:
    """The model-index.yaml `hteb-score compare ... args` writes for `card` (report/card/model_index.py), in a
    process whose contract package is `packages`' (or this one's)."""
    extra = [] if packages is None else [str(packages)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*extra, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "hteb_score.cli", "compare", str(card), "--out", str(out), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (found,) = out.glob("model_index/*/model-index.yaml")
    return found.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("with_specs", [True, False], ids=["rows-recorded", "rows-installed"])
def test_a_cards_hub_files_name_and_describe_the_axes_it_was_aggregated_by(tmp_path, shared_data, with_specs):
    """model-index.yaml (hub_eval: task ids and metric names per axis) follows the card's recorded axes: a later
    release that relabels Noise and counts it in the total writes the same file for a card of a revision that
    records its rows, and its own axes for one that does not (whose card compare refuses unless forced)."""
    store = _revision(tmp_path, shared_data, with_specs=with_specs)
    _score(store, tmp_path / "card", "hteb")
    now = _model_index(tmp_path / "card" / "result_card.json", tmp_path / "now")
    assert "HTEB Noise axis (not in the HTEB total)" in now
    later = _model_index(
        tmp_path / "card" / "result_card.json",
        tmp_path / "later",
        _later_release(tmp_path, *LATER["axes"][:2]),
        *([] if with_specs else ["--force"]),  # the card's aggregates are not the later table's: compare says so
    )
    assert (later == now) == with_specs
    if not with_specs:
        assert "HTEB Perturbation axis" in later and "(not in the HTEB total)" not in later


@pytest.mark.slow
@pytest.mark.parametrize("with_specs", [True, False], ids=["rows-recorded", "rows-installed"])
def test_the_mteb_benchmark_of_a_revision_is_aggregated_by_its_own_axes(tmp_path, shared_data, with_specs):
    """The mteb Benchmark's columns and figures follow the revision's axes: a later release that relabels Noise
    and counts it in the total leaves a revision that records its rows as it was, and regroups one that does not."""
    store = _revision(tmp_path, shared_data, with_specs=with_specs)
    now = _benchmark_columns(store)
    assert now == ["Original", "Lexical/Stylistic", "Length", "Language", "HTEB", "Noise"]
    later = _benchmark_columns(store, _later_release(tmp_path, *LATER["axes"][:2]))
    assert later == (
        now if with_specs else ["Original", "Lexical/Stylistic", "Length", "Language", "Perturbation", "HTEB"]
    )
