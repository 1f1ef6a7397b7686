"""The dataset card a researcher reads on the Hub (issue 26 item 1), on a real revision made by the
generator (the noise rules: real sources, real pipeline, no model): its metadata as huggingface_hub
parses it, the `-original` configs `datasets.load_dataset` rebuilds each task from, the one-call
side-by-side view, and a rule-made revision that says nothing that does not apply to it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from datasets import load_dataset
from datasets.utils.metadata import MetadataConfigs
from huggingface_hub import DatasetCard, DatasetCardData

from hteb_contract.card import size_category
from hteb_contract.revision import Revision
from hteb_contract.source_values import ID_COLUMN
from hteb_contract.sources import read_source_parquet
from hteb_contract.views import revision_folder, side_by_side
from hteb_generate.transform.noise import perturb
from hteb_generate.sources.sources_table import lookup_source

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ("STSBenchmark", "Banking77", "SciFact", "SummEval", "MasakhaNEWS")
SIZES = json.loads((Path(__import__("datasets").__file__).parent / "utils/resources/size_categories.json").read_text())
HUB_TASKS = {"sentence-similarity", "text-classification", "text-retrieval", "text-ranking", "summarization"}


@pytest.fixture(scope="module")
def made(tmp_path_factory, shared_data):
    """A real noise revision of five task types, made and published by the pipeline."""
    from hteb_generate.setup.config import build_config
    from hteb_generate.run.pipeline import run

    tmp = tmp_path_factory.mktemp("card")
    cfg = build_config(
        seed="1339",
        profile="noise",
        overrides={
            "datasets": ",".join(DATASETS),
            "sample": 3,
            "max_texts": 6,
            "cache_dir": str(tmp / "cache"),
            "store": str(tmp / "store"),
            "data_dir": str(shared_data),
            "manifest_md": str(tmp / "MANIFEST.md"),
        },
    )
    run(cfg, log=lambda message: None)
    return revision_folder(cfg.store, cfg.label)


def test_the_card_metadata_is_what_huggingface_hub_reads(made):
    card = DatasetCard.load(made / "README.md")
    data = card.data
    assert isinstance(data, DatasetCardData) and data.pretty_name == "HTEB noise3-1339"
    licenses = [lookup_source(name).source_license for name in DATASETS]
    assert len({entry.license for entry in licenses}) > 1  # differing licenses: the collection's is `other`
    assert (data.license, data.license_name, data.license_link) == (
        "other",
        "hteb-source-licenses",
        "README.md#licenses",
    )
    assert "\n## Licenses\n" in card.text  # where license_link points
    assert data.source_licenses == sorted((e.to_dict() for e in licenses), key=lambda e: e["dataset"])
    by_name = {entry["dataset"]: entry for entry in data.source_licenses}
    assert by_name["Banking77"]["license"] == "cc-by-4.0" and by_name["SciFact"]["license"] == "cc-by-nc-2.0"
    assert all(entry["license_link"].startswith("https://") for entry in data.source_licenses)
    revision = Revision.open(made)
    stated = {code for s in revision.manifest["sources"] for code in s["languages"]}
    assert data.language == sorted(stated) and {"eng", "amh", "yor"} <= set(data.language)
    assert data.multilinguality == "multilingual"
    assert (
        set(data.task_categories) == {"sentence-similarity", "text-classification", "text-retrieval", "summarization"}
        and set(data.task_categories) <= HUB_TASKS
    )
    assert data.size_categories == [size_category(revision.manifest["counters"]["items"])]
    assert data.task_ids == ["fact-checking", "fact-checking-retrieval", "topic-classification"]  # mteb's
    assert data.source_datasets == sorted(f"{s['hf_path']}@{s['hf_revision']}" for s in revision.manifest["sources"])
    assert data.size_categories[0] in SIZES
    assert DatasetCardData(**data.to_dict()).to_dict() == data.to_dict()  # what push_to_hub would write back
    configs = MetadataConfigs.from_dataset_card_data(data)  # datasets' own check of every config
    for config in configs.values():
        for entry in config["data_files"]:
            assert (made / entry["path"]).is_file(), entry["path"]


def test_the_card_cites_its_sources_as_the_published_noise2_card_does(made):
    """The dataset card is in a revision's content hash: a rebuild of a published label (noise2-1339, cited by its
    hash in MANIFEST.md) must print what it printed, so each BibTeX block of a card made today is one the committed
    noise2-1339 card prints (a dataset's own paper, a row's release_citation, goes to `cite` and the result cards)."""
    committed = (ROOT / "docs" / "revisions" / "noise2-1339" / "README.md").read_text(encoding="utf-8")
    ours = (made / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bibtex\n(.*?)```", ours[ours.index("\n## Citation\n") :], re.S)
    assert len(blocks) == 1 + len(DATASETS)  # HTEB's and each source's
    assert all(block in committed for block in blocks)


def test_size_categories_follow_the_hub_bounds():
    assert [size_category(n) for n in (0, 999, 1000, 99_999, 10**6, 10**12)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "1M<n<10M",
        "n>1T",
    ]


@pytest.mark.parametrize(
    ("dataset", "configs"),
    [
        ("STSBenchmark", {"STSBenchmark-original": ["test"]}),
        ("Banking77", {"Banking77-original": ["test", "train"]}),
        (
            "SciFact",
            {
                "SciFact-original-corpus": ["test"],
                "SciFact-original-queries": ["test"],
                "SciFact-original-qrels": ["test"],
            },
        ),
        ("SummEval", {"SummEval-original": ["test"]}),
    ],
)
def test_load_dataset_alone_rebuilds_each_task_from_the_original_configs(made, dataset, configs):
    source = read_source_parquet(made / "source" / dataset)
    for config, splits in configs.items():
        loaded = load_dataset(str(made), config)
        assert sorted(loaded) == sorted(splits)
        table = config.rsplit("-", 1)[1] if "-original-" in config else None
        for split in splits:
            rows = source.tables[table or split]
            got = loaded[split].to_list()
            assert [row[ID_COLUMN] for row in got] == source.ids[table or split]
            assert [{k: v for k, v in row.items() if k != ID_COLUMN} for row in got] == rows


def test_an_items_texts_side_by_side_in_one_call(made):
    table = side_by_side(made, "STSBenchmark", "keyboard_typos_1339")
    assert table.column_names == [
        "split",
        "item_id",
        "subset",
        "sentence1",
        "sentence1_transformed",
        "sentence2",
        "sentence2_transformed",
    ]
    source = read_source_parquet(made / "source" / "STSBenchmark")
    assert table.column("item_id").to_pylist() == source.ids["test"]
    for row, original in zip(table.to_pylist(), source.tables["test"]):
        for field in ("sentence1", "sentence2"):
            assert row[field] == original[field]
            assert row[f"{field}_transformed"] == perturb(
                "keyboard_typos", original[field], key=(1339, "STSBenchmark", "keyboard_typos", original[field])
            )
    queries = side_by_side(made, "SciFact", "numerisation_1339")
    assert queries.column_names == ["split", "item_id", "subset", "text", "text_transformed"]
    assert set(queries.column("split").to_pylist()) == {"queries"}
    summaries = side_by_side(made, "SummEval", "numerisation_1339").column_names
    assert summaries.index("machine_summaries[0]") < summaries.index("machine_summaries[1]")


@pytest.mark.parametrize("split", ["numerisation", "numerisation_x", "../x_1"])
def test_side_by_side_refuses_a_name_that_is_no_split(made, split):
    from hteb_contract.errors import SourceError

    with pytest.raises(SourceError, match="is not a split name"):
        side_by_side(made, "STSBenchmark", split)


def test_a_rule_made_record_carries_no_invented_settings_and_item_v2_reads_as_the_contract_says(made):
    from hteb_contract.errors import ContractError
    from hteb_contract.records import ItemRecord
    from hteb_contract.validation import validate

    record = Revision.open(made).items("STSBenchmark", "numerisation", 1339)[0]
    row = record.to_row()
    assert row["schema_version"] == "hteb.item/3" and row["sampling"] is None and row["generator_revision"] is None
    # What hteb.item/2 wrote for the same record (noise-1339): invented settings, read back as item/3 holds them.
    old = {
        **row,
        "schema_version": "hteb.item/2",
        "sampling": {"temperature": 0.0, "top_p": 1.0, "max_tokens": 1},
        "generator_revision": "",
    }
    assert ItemRecord.from_row(old, what="v2") == record
    with pytest.raises(ContractError, match="sampling"):  # item/3 refuses settings a rule never had
        validate("item", {**row, "sampling": old["sampling"]}, what="r")
    with pytest.raises(ContractError, match="schema version 'hteb.item/1' is not supported"):
        validate("item", {**row, "schema_version": "hteb.item/1"}, what="r")


def test_an_llm_record_of_item_v2_reads_unchanged():
    from hteb_score import SAMPLE_REVISION, SAMPLE_STORE

    revision = Revision.open(revision_folder(SAMPLE_STORE, SAMPLE_REVISION), datasets=["STSBenchmark"])
    record = revision.items("STSBenchmark", "paraphrasing", 1339)[0]
    assert not record.rule_made and record.sampling.max_tokens == revision.manifest["config"]["max_tokens"]
    assert record.generator_revision == revision.manifest["generator"]["revision"]
