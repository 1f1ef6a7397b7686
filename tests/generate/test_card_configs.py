"""A revision is published only if every config of its dataset card loads with `datasets` (issue 44):
noise-1339 went out with all 32 configs failing on a split listed twice. The card of a real noise run
of shared/data is broken in generated ways, each a kind `datasets` refuses or the Hub cannot show (a
split listed twice, a file that is not there, a split name datasets cannot read, files that cannot
be cast into one split, a config declared twice), and the check refuses each in one line; a run whose
writer breaks its card publishes nothing and names the staged folder; the next run with a sound
writer makes the card again rather than reusing the broken one."""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_contract.errors import ContractError
from hteb_contract.revision import write as revision_write
from hteb_contract.stores import open_store
from hteb_generate.revision.card_configs import check_configs_load, declared_configs
from hteb_generate.run.pipeline import run
from hteb_generate.setup.config import build_config

DATASETS = ("STSBenchmark", "Banking77", "SciFact")


def _config(tmp: Path, shared_data: Path):
    return build_config(
        seed="1339",
        profile="noise",
        overrides={
            "datasets": ",".join(DATASETS),
            "sample": 2,
            "max_texts": 4,
            "cache_dir": str(tmp / "cache"),
            "store": str(tmp / "store"),
            "data_dir": str(shared_data),
            "manifest_md": str(tmp / "MANIFEST.md"),
        },
    )


@pytest.fixture(scope="module")
def made(tmp_path_factory, shared_data) -> Path:
    """A noise revision of three datasets (pairs, classification, retrieval), as `make generate` makes it."""
    tmp = tmp_path_factory.mktemp("sound")
    cfg = _config(tmp, shared_data)
    run(cfg, log=lambda message: None)
    return open_store(cfg.store).fetch(cfg.label).root


Breakage = Callable[[list[dict[str, Any]], int, Path], None]


def _twice(configs: list[dict[str, Any]], at: int, folder: Path) -> None:
    configs[at]["data_files"].append(copy.deepcopy(configs[at]["data_files"][0]))


def _missing(configs: list[dict[str, Any]], at: int, folder: Path) -> None:
    configs[at]["data_files"][0]["path"] = "data/not-in-the-revision.parquet"


def _bad_split_name(configs: list[dict[str, Any]], at: int, folder: Path) -> None:
    configs[at]["data_files"][0]["split"] = "test split"


def _uncastable(configs: list[dict[str, Any]], at: int, folder: Path) -> None:
    first = configs[at]["data_files"][0]
    columns = pq.read_schema(folder / first["path"]).names
    other = next(  # another config's file holding another table's columns
        entry["path"]
        for config in configs
        for entry in config["data_files"][:1]
        if pq.read_schema(folder / entry["path"]).names != columns
    )
    first["path"] = [first["path"], other]


def _declared_twice(configs: list[dict[str, Any]], at: int, folder: Path) -> None:
    configs.append(copy.deepcopy(configs[at]))


BREAKAGES: dict[str, Breakage] = {
    "a split listed twice": _twice,
    "a file not in the revision": _missing,
    "a split name datasets cannot read": _bad_split_name,
    "two tables in one split": _uncastable,
    "a config declared twice": _declared_twice,
}


def _broken_copy(made: Path, into: Path, breakage: Breakage, at: int) -> Path:
    folder = into / "revision"
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(made, folder)
    card = folder / "README.md"
    card.chmod(0o644)
    _, head, body = card.read_text(encoding="utf-8").split("---\n", 2)
    meta = yaml.safe_load(head)
    breakage(meta["configs"], at, folder)
    card.write_text("---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n" + body, "utf-8")
    return folder


@pytest.mark.slow  # a noise run, then each config loaded with datasets
def test_the_sound_card_loads_config_by_config(made):
    names = declared_configs(made)
    assert check_configs_load(made) == len(names) > len(DATASETS)
    assert {"STSBenchmark", "Banking77-original", "SciFact-original-corpus"} <= set(names)


@pytest.mark.slow  # each example loads the card's configs
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(sorted(BREAKAGES)), where=st.integers(min_value=1))
def test_each_kind_of_broken_config_is_refused_in_one_line(made, tmp_path, kind, where):
    at = 1 + where % (len(declared_configs(made)) - 1)
    folder = _broken_copy(made, tmp_path, BREAKAGES[kind], at)
    with pytest.raises(ContractError) as refused:
        check_configs_load(folder)
    message = str(refused.value)
    assert "\n" not in message and str(folder / "README.md") in message


@pytest.mark.slow  # two noise runs
def test_a_run_whose_card_does_not_load_publishes_nothing_and_the_next_makes_it_again(
    tmp_path, shared_data, monkeypatch
):
    cfg = _config(tmp_path, shared_data)
    sound = revision_write.front_matter

    def listed_twice(*args: Any, **kwargs: Any) -> str:  # the writer's bug that published noise-1339
        _, head, _ = sound(*args, **kwargs).split("---\n", 2)
        meta = yaml.safe_load(head)
        _twice(meta["configs"], 0, Path())
        return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"

    monkeypatch.setattr(revision_write, "front_matter", listed_twice)
    with pytest.raises(ContractError, match="Some splits are duplicated.*not published, the revision is kept at"):
        run(cfg, log=lambda message: None)
    assert cfg.label not in open_store(cfg.store).labels()
    assert not (tmp_path / "MANIFEST.md").exists()

    monkeypatch.setattr(revision_write, "front_matter", sound)
    said: list[str] = []
    published = run(cfg, log=said.append).published
    assert published is not None and published.label == cfg.label
    assert not any("reusing" in line for line in said)  # the broken staged card was made again
    assert any("configs load with datasets.load_dataset" in line for line in said)
    check_configs_load(open_store(cfg.store).fetch(cfg.label).root)
