"""A revision carries the rows it was made by (issue 43): the manifest's `specs` block holds the resolved
rows of its datasets, transformations, axes and templates (the Noise script table and the language
detector where the run reads them), its sha256 is in the config hash, and an edited installed row is
another configuration: `reproduce` names the row instead of rebuilding a different run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from edited_tables import edit_installed_table

from hteb_contract.errors import HtebError
from hteb_contract.specs.resolved import differences, specs_hash
from hteb_contract.stores import open_store
from hteb_contract.validation import validate
from hteb_generate.revision.reproduce import rebuild_config
from hteb_generate.run import pipeline
from hteb_generate.setup.config import build_config

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "schemas" / "hteb_contract" / "specs"


def _yaml(name: str):
    return yaml.safe_load((SPECS / name).read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def noise_revision(tmp_path_factory, shared_data):
    """A Noise revision made today on two real datasets: (its config, its manifest)."""
    root = tmp_path_factory.mktemp("specs")
    config = build_config(
        seed="1339",
        profile="noise",
        overrides={
            "datasets": "STSBenchmark,MasakhaNEWS",
            "data_dir": str(shared_data),
            "cache_dir": str(root / "cache"),
            "store": str(root / "store"),
            "label": "t",
            "manifest_md": str(root / "MANIFEST.md"),
        },
    )
    pipeline.run(config, log=lambda m: None)
    return config, open_store(str(root / "store")).fetch("t").manifest


def test_a_new_revision_carries_its_rows_and_their_hash_is_in_its_config(noise_revision):
    config, manifest = noise_revision
    validate("manifest", manifest, what="the new revision")
    specs = manifest["specs"]
    assert specs_hash(specs) == manifest["config"]["specs_sha256"] and manifest["config_hash"] == config.config_hash()
    datasets = {row["name"]: row for row in _yaml("datasets.yaml")}
    recorded = [{k: v for k, v in datasets[n].items() if k != "sample"} for n in ("STSBenchmark", "MasakhaNEWS")]
    assert specs["datasets"] == json.loads(json.dumps(recorded))  # the rows as they are, the profile's place aside
    rows = {row["name"]: row for row in _yaml("transformations.yaml")["transformations"]}
    assert specs["transformations"] == [rows[t] for t in manifest["transformations"]]
    assert [a["name"] for a in specs["axes"]] == ["lexical", "length", "language", "noise"] and specs["templates"] == []
    assert specs["noise_scripts"] == _yaml("noise_scripts.yaml")  # rules version 2 reads the script table
    assert "language_detector" not in specs  # no transformation of this run checks languages


def test_a_run_that_checks_languages_records_the_detector_and_its_version(shared_data):
    from importlib.metadata import version

    config = build_config(seed="1", profile="cpu", overrides={"data_dir": str(shared_data)})
    detector = config.specs()["language_detector"]
    assert detector["library"] == "lingua-language-detector"
    assert detector["version"] == version("lingua-language-detector")
    assert "noise_scripts" not in config.specs()  # no rule in the cpu profile's run


@pytest.mark.parametrize(
    ("table", "edit", "where"),
    [
        (
            "transformations.yaml",
            lambda d: next(r for r in d["transformations"] if r["name"] == "punctuation_casing_loss").update(
                axis="lexical"
            ),
            "transformations row 'punctuation_casing_loss': axis",
        ),
        (
            "datasets.yaml",
            lambda d: next(r for r in d if r["name"] == "MasakhaNEWS").update(eval_split="train"),
            "datasets row 'MasakhaNEWS': eval_split",
        ),
        ("noise_scripts.yaml", lambda d: d["scripts"]["Latn"].update(cased=False), "noise_scripts"),
    ],
)
def test_an_edited_row_is_another_configuration_and_reproduce_names_it(
    noise_revision, shared_data, monkeypatch, table, edit, where
):
    """Editing an installed row changes the config hash of a run made today, and an existing revision's
    run is not rebuilt from the edited row: reproduce refuses in one line naming the row and column."""
    config, manifest = noise_revision
    edit_installed_table(monkeypatch, table, edit)
    assert differences(config.specs(), manifest["specs"]) == where
    assert config.config_hash() != manifest["config_hash"]
    with pytest.raises(HtebError, match=rf"cannot rebuild the run of revision 't': its tables' {where} differs"):
        rebuild_config(manifest, store="s", machine={"data_dir": str(shared_data)})


def test_a_place_in_the_sample_is_the_profiles_fact_and_moves_no_configuration(noise_revision, monkeypatch):
    """The CPU profile's datasets are the rows stating a place in its sample, in that order; the column is left
    out of the rows a revision records, so stating, moving or dropping it changes no configuration of a run."""
    from hteb_generate.sources.sources_table import SAMPLE_DATASETS

    rows = yaml.safe_load((ROOT / "schemas" / "hteb_contract" / "specs" / "datasets.yaml").read_text(encoding="utf-8"))
    placed = sorted((r["sample"], r["name"]) for r in rows if "sample" in r)
    assert tuple(name for _, name in placed) == SAMPLE_DATASETS and [p for p, _ in placed] == list(range(1, 9))
    config, manifest = noise_revision
    assert all("sample" not in row for row in manifest["specs"]["datasets"])
    edit_installed_table(
        monkeypatch, "datasets.yaml", lambda d: next(r for r in d if r["name"] == "STSBenchmark").pop("sample")
    )
    assert differences(config.specs(), manifest["specs"]) is None and config.config_hash() == manifest["config_hash"]


def test_two_rows_taking_one_place_in_the_sample_are_one_line():
    from hteb_contract.errors import ContractError
    from hteb_contract.specs.datasets import parse_dataset_rows

    rows = yaml.safe_load((ROOT / "schemas" / "hteb_contract" / "specs" / "datasets.yaml").read_text(encoding="utf-8"))
    next(r for r in rows if r["name"] == "SciFact")["sample"] = 1
    with pytest.raises(ContractError, match="rows 'SciFact' and 'STSBenchmark' both take place 1 of the sample"):
        parse_dataset_rows(rows, "datasets.yaml")


def test_a_revision_made_before_the_block_is_rebuilt_as_it_was_made(shared_data):
    """noise-1339's published manifest has no specs: rebuilt from the installed tables, its config hash
    stays the published one."""
    published = json.loads((ROOT / "docs" / "revisions" / "noise-1339" / "manifest.json").read_text(encoding="utf-8"))
    assert "specs" not in published and "specs_sha256" not in published["config"]
    config = rebuild_config(published, store="s", machine={"data_dir": str(shared_data)})
    assert not config.record_specs and config.config_hash() == published["config_hash"]
