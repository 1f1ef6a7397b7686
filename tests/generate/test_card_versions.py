"""Dataset card versions (issue 44): card 1 is every revision's made before the setting, and stays
byte for byte what it was (the published labels rebuild: test_published_revisions); card 2 follows
the Hub's conventions. A real noise run of shared/data (an STS dataset without a Hub copy, a
classification and a retrieval dataset) with `--card 2`: its front matter names what it extends as
the Hub does, says how its text was made, and describes every config as `datasets` itself reads it
(the oracle: `datasets.load_dataset` on the revision, and `datasets`' own reader of the card's
`dataset_info`); it cites each source by its row (STS12, which mteb's registry rows never cited;
SciFact by its own paper); `reproduce` remakes it byte for byte; and the version is part of the
configuration (another hash and another default label), an unknown one refused in one line."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from hteb_contract.card import FIRST_CARD, LANGUAGE_CREATORS
from hteb_contract.errors import HtebError
from hteb_contract.specs.datasets import dataset_specs
from hteb_contract.stores import open_store
from hteb_generate.run.pipeline import run
from revision_factory import reproduce
from hteb_generate.setup.config import build_config

DATASETS = ("STS12", "Banking77", "SciFact")
ROWS = {spec.name: spec for spec in dataset_specs()}


def _config(tmp: Path, shared_data: Path, **given):
    overrides = {
        "datasets": ",".join(DATASETS),
        "sample": 3,
        "max_texts": 6,
        "cache_dir": str(tmp / "cache"),
        "store": str(tmp / "store"),
        "data_dir": str(shared_data),
        "manifest_md": str(tmp / "MANIFEST.md"),
    }
    return build_config(seed="1339", profile="noise", overrides={**overrides, **given})


@pytest.fixture(scope="module")
def made(tmp_path_factory, shared_data):
    tmp = tmp_path_factory.mktemp("card2")
    cfg = _config(tmp, shared_data, card="2")
    run(cfg, log=lambda message: None)
    revision = open_store(cfg.store).fetch(cfg.label)
    text = (revision.root / "README.md").read_text(encoding="utf-8")
    return {"cfg": cfg, "revision": revision, "front": yaml.safe_load(text.split("---\n")[1]), "card": text}


def test_its_label_and_config_say_the_card_version(made):
    assert made["cfg"].label == "noise3-card2-1339"
    assert made["revision"].manifest["config"]["card"] == "2"


def test_the_front_matter_names_what_it_extends_as_the_hub_does(made):
    front, sources = made["front"], made["revision"].manifest["sources"]
    expected = {f"extended|{s['hf_path']}" if s["hf_path"] else "extended" for s in sources}
    assert front["source_datasets"] == sorted(expected) and "extended" in expected  # STS12 has no Hub copy
    assert front["language_creators"] == list(LANGUAGE_CREATORS)
    assert not [v for v in front["source_datasets"] if "@" in v or v.startswith("local/")]


def test_dataset_info_is_what_datasets_reads(made):
    """Each config's features and split sizes as `datasets` loads the revision, and as its own reader
    of a card's `dataset_info` takes them (a malformed entry would be dropped with a warning)."""
    import datasets
    from huggingface_hub import DatasetCard

    root, front = made["revision"].root, made["front"]
    described = {entry["config_name"]: entry for entry in front["dataset_info"]}
    assert sorted(described) == sorted(c["config_name"] for c in front["configs"])  # datasets writes them by name
    read = datasets.info.DatasetInfosDict.from_dataset_card_data(DatasetCard.load(root / "README.md").data)
    for config in front["configs"]:
        name = config["config_name"]
        loaded = datasets.load_dataset(str(root), name, cache_dir=str(root.parent.parent / "hf-cache"))
        info = read[name]
        assert info.features == next(iter(loaded.values())).features, name
        for entry in config["data_files"]:
            split, path = entry["split"], root / entry["path"]
            assert info.splits[split].num_examples == loaded[split].num_rows == pq.ParquetFile(path).metadata.num_rows
            assert info.splits[split].num_bytes == path.stat().st_size  # what a download reads
        assert info.download_size == sum((root / e["path"]).stat().st_size for e in config["data_files"])


def test_every_source_is_cited_by_its_own_row(made):
    card = made["card"]
    for name in DATASETS:
        bibtex = ROWS[name].source_citation
        assert bibtex and bibtex in card, name
    assert "Fact or Fiction" in card and "No BibTeX is recorded" not in card


def test_reproduce_remakes_it_byte_for_byte(made, tmp_path, shared_data):
    cfg, revision = made["cfg"], made["revision"]
    said = reproduce(cfg.store, cfg.label, shared_data, tmp_path / "cache")
    short = revision.manifest["content_hash"][:12]
    assert f"{cfg.label} ({short}) reproduced by {cfg.label} ({short})" in said


def test_the_version_is_part_of_the_configuration(tmp_path, shared_data):
    """Card 1 is left out of the configuration (every revision made before the setting keeps its hash);
    card 2 is another configuration under another default label."""
    first, named, second = (_config(tmp_path, shared_data, **given) for given in ({}, {"card": "1"}, {"card": "2"}))
    assert first.card == FIRST_CARD and "card" not in first.content_config()
    assert first.config_hash() == named.config_hash() != second.config_hash()
    assert (first.label, second.label) == ("noise3-1339", "noise3-card2-1339")


@pytest.mark.parametrize("version", ["3", "0", "", "2 ", "v2"])
def test_an_unknown_version_is_refused_in_one_line(tmp_path, shared_data, version):
    with pytest.raises(HtebError) as err:
        _config(tmp_path, shared_data, card=version)
    assert str(err.value) == f"unknown card version {version!r}; known: 1, 2"


@pytest.mark.parametrize(
    ("profile", "card", "label", "card_1_label"),
    [
        ("gpu", "2", "hteb-1339", "hteb-card1-1339"),  # published nothing before card 2: its bare label is card 2's
        ("cpu", "2", "sample-card2-1339", "sample-1339"),  # sample-1339 is card 1's, and a label never moves
        ("noise", "1", "noise3-1339", "noise3-1339"),  # its command remakes the published noise3-1339
        ("sensitivity", "1", "sensitivity-1339", "sensitivity-1339"),
    ],
)
def test_each_profile_defaults_to_its_card_under_a_label_that_never_moves(
    tmp_path, shared_data, profile, card, label, card_1_label
):
    """What goes to the Hub (gpu) and the bundled sample (cpu) carry the Hub's card by default; the rule
    profiles keep card 1, so `make generate PROFILE=noise` still remakes what they published. A bare label
    names the card its profile first published under, so no default label ever names two cards."""
    given = {"cache_dir": str(tmp_path / "cache"), "store": str(tmp_path / "store"), "data_dir": str(shared_data)}
    given["manifest_md"] = str(tmp_path / "MANIFEST.md")
    default, first = (
        build_config(seed="1339", profile=profile, overrides={**given, **more}) for more in ({}, {"card": "1"})
    )
    assert (default.card, default.label, first.label) == (card, label, card_1_label)
    assert ("card" in default.content_config()) == (card != FIRST_CARD)
