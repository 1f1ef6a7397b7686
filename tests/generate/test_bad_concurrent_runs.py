"""Two hteb-generate runs at once (issue 24 item 2): on one store and one cache (two shells on the
default cache), or publishing one label. One wins; the other finds the work done or is refused in
one line; never a traceback, a mixed revision, an unlabelled object or a second table row. Real
processes, released together, several times over to hit the races."""

from __future__ import annotations

from pathlib import Path

import pytest

from together import run_together
from hteb_contract.stores.local import LocalStore
from hteb_generate.revision import manifest_md
from hteb_generate.cli import main

#: Rounds of each race: the first in the fast loop, the other four (more chances to interleave) in `make test`.
ROUNDS = [0, *(pytest.param(i, marks=pytest.mark.slow) for i in range(1, 5))]
ONE_LINE_REFUSALS = ("another hteb-generate run is making this configuration's revision", "already holds other content")


def _command(root: Path, data: Path, transformations: str, label: str = "n1") -> list[str]:
    return [
        "--seed",
        "1339",
        "--profile",
        "noise",
        "--datasets",
        "STSBenchmark,SciFact,Banking77",
        "--transformations",
        transformations,
        "--sample",
        "6",
        "--store",
        str(root / "store"),
        "--cache-dir",
        str(root / "cache"),
        "--data-dir",
        str(data),
        "--label",
        label,
        "--manifest-md",
        str(root / "MANIFEST.md"),
    ]


def _check_round(root: Path, finished, *, same_content: bool) -> None:
    for one in finished:
        assert "Traceback" not in one.output and one.status in (0, 2), one.output
        if one.status == 2:
            last = one.output.strip().splitlines()[-1]
            assert last.startswith("error: ") and any(r in last for r in ONE_LINE_REFUSALS), one.output
    assert sum(one.status == 0 for one in finished) >= 1
    if not same_content:
        assert sorted(one.status for one in finished) == [0, 2]
    store = LocalStore(root / "store")
    assert store.labels() == ["n1"] and store.corrupt_labels() == {}
    objects = sorted(p.name for p in (root / "store" / "objects").iterdir())
    assert objects == [store.resolve("n1")]  # no unlabelled object
    assert [p.name for p in (root / "store" / ".tmp").iterdir() if p.suffix != ".lock"] == []  # nothing half-made
    store.fetch("n1").check_content()  # the published revision is whole and sound
    rows = manifest_md.parse((root / "MANIFEST.md").read_text())
    assert [(r["label"], r["content hash"]) for r in rows] == [("n1", objects[0])]


@pytest.mark.parametrize("round_", ROUNDS)
def test_two_runs_of_one_configuration_on_one_cache_and_store(tmp_path, shared_data, round_):
    command = _command(tmp_path, shared_data, "numerisation,keyboard_typos")
    finished = run_together(main, [command, command], tmp_path / "logs")
    _check_round(tmp_path, finished, same_content=True)
    assert main_again(command) == 0  # and a later run finds the work done


def main_again(command: list[str]) -> int:
    try:
        main(command)
    except SystemExit as done:
        return done.code
    return 0


@pytest.mark.parametrize("round_", ROUNDS)
def test_two_publishes_of_one_label(tmp_path, shared_data, round_):
    """Two configurations, one label: one is published, the other refused before it copies anything."""
    finished = run_together(
        main,
        [_command(tmp_path, shared_data, "numerisation"), _command(tmp_path, shared_data, "keyboard_typos")],
        tmp_path / "logs",
    )
    _check_round(tmp_path, finished, same_content=False)
