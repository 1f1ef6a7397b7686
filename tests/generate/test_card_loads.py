"""Every dataset card loads, for every dataset (issue 33 item 1), and carries what the Hub and a paper
need (item 2): one revision of all 32 registry datasets, written as the LLM profile writes one (item
records through the real writer, the real card body; real rows where ../shared/data has a copy,
synthetic rows in the Hub layout read by the real Hub converter elsewhere), and a noise-profile run of
every dataset of ../shared/data. Every config of each card goes through `datasets.load_dataset`, and
the metadata through huggingface_hub's own card parser."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import load_dataset
from datasets.utils.metadata import MetadataConfigs
from hteb_contract import revision as rev
from hteb_contract.card import HTEB_CITATION, SourceLicense, license_fields, size_category, source_pin
from hteb_contract.tasks import task_type
from hteb_generate.revision.card import card_body
from hteb_generate.sources.source_loading import local_dataset, sample_dataset
from hteb_generate.sources.sources_table import SOURCES, source_citation, source_task_ids
from hub_layouts import synthetic_source
from huggingface_hub import DatasetCard, DatasetCardData
from revision_factory import item_record, reverse_words

SEEDS = (1337, 1338)
#: The split shapes of the registry, as the card's configs must give them.
SHAPES = {
    "IsiZuluNews-original": ["train"],
    "SentimentAnalysisHindi-original": ["train"],  # evaluation split = training
    "Banking77-original": ["test", "train"],
    "indonli-original": ["test_expert"],
    "Ko-StrategyQA-original-queries": ["dev"],
    "TwitterHjerneRetrieval-original-corpus": ["train"],
    "NamaaMrTydiReranking-original-top_ranked": ["test"],
    "SummEval-original": ["test"],
}


def _source(entry, shared_data: Path):
    """(dataset, origin): the local copy where shared/data has one (sampled as the CPU profile samples
    it), else synthetic rows read by the Hub route."""
    if entry.local and (shared_data / entry.local).is_dir():
        dataset = sample_dataset(local_dataset(entry, shared_data), 3)
        return dataset, f"shared/data/{entry.local}"
    return synthetic_source(entry), f"hf://{entry.hf_path}@{entry.hf_revision}"


def write_all(root: Path, shared_data: Path) -> Path:
    """A revision of all 32 registry datasets, composed as the pipeline composes one."""
    datasets, sources = [], []
    for name in SOURCES.names():
        entry = SOURCES.get(name)
        dataset, origin = _source(entry, shared_data)
        datasets.append(dataset)
        info = replace(dataset.info, mteb_task=entry.mteb_task, hf_path=entry.hf_path, hf_revision=entry.hf_revision)
        sources.append(rev.manifest_source(info, origin=origin, sample=3))
    records = [
        item_record(dataset, ref, "paraphrasing", seed, reverse_words(ref.text))
        for dataset in datasets
        for seed in SEEDS
        for ref in dataset.iter_texts()
    ]
    config = {
        "prompt_set": "paper",
        "prompt_set_sha256": "0" * 64,
        "temperature": 0.7,
        "top_p": 0.9,
        "max_tokens": 256,
        "retry_temperature": 1.0,
        "max_attempts": 3,
        "sample": 3,
    }
    fields = {
        "repo_id": "file://test",
        "label": "all-1337",
        "created": "2026-11-22T00:00:00+00:00",
        "hteb_generate_version": "test",
        "config": config,
        "config_hash": rev.config_hash(config),
        "sources": sources,
        "transformations": ["paraphrasing"],
        "seeds": list(SEEDS),
        "generator": {"model_id": "rule/reverse-words", "revision": "", "engine": "rule"},
        "judge": None,
        "counters": {"items": len(records), "llm_calls": 0, "cache_hits": 0, "errors": {}},
    }
    licenses = [entry.source_license for _, entry in SOURCES.items()]
    body = card_body(fields, records, licenses=licenses)
    rev.write_revision(
        root,
        datasets,
        records,
        fields,
        body,
        licenses=licenses,
        task_ids=[i for name in SOURCES.names() for i in source_task_ids(name)],
    )
    return root


def load_every_config(folder: Path, cache: Path) -> dict[str, list[str]]:
    """Each config of the card -> its splits, loaded with `datasets`; every split holds its file's rows."""
    card = DatasetCard.load(folder / "README.md")
    loaded = {}
    for name, config in MetadataConfigs.from_dataset_card_data(card.data).items():
        splits = load_dataset(str(folder), name, cache_dir=str(cache))
        for entry in config["data_files"]:
            assert splits[entry["split"]].num_rows == pq.read_metadata(folder / entry["path"]).num_rows, (name, entry)
        assert sorted(splits) == sorted(entry["split"] for entry in config["data_files"]), name
        loaded[name] = sorted(splits)
    return loaded


def expected_configs(names) -> set[str]:
    """The configs a card of these registry datasets has: one per dataset, and its originals."""
    configs = set()
    for name in names:
        tables = task_type(SOURCES.get(name).task_type).tables
        extra = [f"-original-{t}" for t in tables if not t.startswith("{")] or ["-original"]
        configs |= {name, *(name + suffix for suffix in extra)}
    return configs


@pytest.fixture(scope="module")
def everything(tmp_path_factory, shared_data) -> Path:
    return write_all(tmp_path_factory.mktemp("all32") / "revision", shared_data)


@pytest.mark.slow  # writes and loads 32 datasets (about 30 s on 2 cores)
def test_every_config_of_all_32_registry_datasets_loads(everything, tmp_path):
    loaded = load_every_config(everything, tmp_path / "cache")
    assert set(loaded) == expected_configs(SOURCES.names())
    assert {name: loaded[name] for name in SHAPES} == SHAPES
    assert all(loaded[name] == ["paraphrasing_1337", "paraphrasing_1338"] for name in SOURCES.names())


def test_the_card_of_all_32_carries_what_the_hub_and_a_paper_need(everything):
    card = DatasetCard.load(everything / "README.md")
    data = card.data
    assert isinstance(data, DatasetCardData) and data.pretty_name == "HTEB all-1337"
    assert DatasetCardData(**data.to_dict()).to_dict() == data.to_dict()  # what push_to_hub would write back
    assert (data.license, data.license_name, data.license_link) == (
        "other",
        "hteb-source-licenses",
        "README.md#licenses",
    )
    assert [entry["dataset"] for entry in data.source_licenses] == sorted(SOURCES.names())
    assert all(entry["license_name"] and entry["license_link"] for entry in data.source_licenses)
    entries = [entry for _, entry in SOURCES.items()]
    assert data.language == sorted({code for entry in entries for codes in entry.subsets.values() for code in codes})
    assert data.task_categories == [
        "sentence-similarity",
        "summarization",
        "text-classification",
        "text-ranking",
        "text-retrieval",
    ]
    assert data.task_ids == sorted({i for _, entry in SOURCES.items() for i in entry.hub_task_ids})
    assert data.source_datasets == sorted({f"{e.hf_path}@{e.hf_revision}" for e in entries})
    items = sum(f["rows"] for f in rev.load_manifest(everything)["files"] if f["path"].startswith("data/"))
    assert data.size_categories == [size_category(items)]
    text = card.text
    assert "None@None" not in text and HTEB_CITATION in text and "arxiv.org/abs/2605.28190" in text
    citation = text[text.index("\n## Citation\n") :]
    for name in SOURCES.names():
        bibtex = source_citation(name)
        assert (bibtex in citation) if bibtex else re.search(rf"No BibTeX is recorded for [^\n]*`{name}`", citation)


@pytest.mark.slow  # a whole noise run of 15 datasets (about 25 s on 2 cores)
def test_a_noise_run_of_every_shared_data_dataset_loads_config_by_config(tmp_path, shared_data):
    """`make generate SEED=1339 PROFILE=noise` on every dataset of shared/data, sampled (the full run
    writes the same configs, at about 20 s); the card's own Loading snippet runs as printed."""
    from hteb_contract.views import revision_folder
    from hteb_generate.run.pipeline import run
    from hteb_generate.setup.config import build_config

    cfg = build_config(
        seed="1339",
        profile="noise",
        overrides={
            "sample": 2,
            "max_texts": 4,
            "cache_dir": str(tmp_path / "cache"),
            "store": str(tmp_path / "store"),
            "data_dir": str(shared_data),
            "manifest_md": str(tmp_path / "MANIFEST.md"),
        },
    )
    manifest = run(cfg, log=lambda message: None).manifest
    folder = revision_folder(cfg.store, cfg.label)
    loaded = load_every_config(folder, tmp_path / "hf")
    names = [s["name"] for s in manifest["sources"]]
    assert {"IsiZuluNews", "SciFact", "STS12"} <= set(names) and len(loaded) == 32
    assert loaded["IsiZuluNews-original"] == ["train"]
    card = DatasetCard.load(folder / "README.md")
    assert "local/STS12" in card.data.source_datasets and "None@None" not in card.text
    snippet = re.search(r"```python\n(.*?)```", card.text, re.DOTALL).group(1)
    scope = {"REPO": str(folder), "FOLDER": folder}
    exec(snippet, scope)  # noqa: S102 -- the card's Loading section, as a reader runs it
    assert scope["items"].num_rows == scope["table"].num_rows > 0


def test_mteb_gives_the_citations_and_task_ids_the_card_carries():
    mteb = pytest.importorskip("mteb")
    for name, entry in SOURCES.items():
        metadata = mteb.get_task(entry.mteb_task).metadata
        assert source_citation(name) == ((metadata.bibtex_citation or "").strip() or None), name
        card_data, _ = metadata._create_dataset_card_data()  # what mteb writes on its own dataset cards
        assert list(source_task_ids(name)) == list(card_data.task_ids or []), name


@pytest.mark.parametrize(
    ("licenses", "head"),
    [
        ([("A", "mit", "mit", "https://a"), ("B", "mit", "mit", "https://b")], {"license": "mit"}),
        (
            [
                (
                    "A",
                    "other",
                    "https://www.biorxiv.org/content/about-biorxiv",
                    "https://www.biorxiv.org/content/about-biorxiv",
                )
            ],
            {
                "license": "other",
                "license_name": "biorxiv-org-content-about-biorxiv",
                "license_link": "https://www.biorxiv.org/content/about-biorxiv",
            },
        ),
        (
            [("A", "other", "x terms", "https://x"), ("B", "other", "y terms", "https://y")],
            {"license": "other", "license_name": "hteb-source-licenses", "license_link": "README.md#licenses"},
        ),
        (
            [("A", "mit", "mit", None), ("B", "unknown", "not stated", None)],
            {"license": "other", "license_name": "hteb-source-licenses", "license_link": "README.md#licenses"},
        ),
        ([], {"license": "unknown"}),
    ],
)
def test_one_license_is_named_as_it_is_and_differing_ones_as_the_collection_they_are(licenses, head):
    fields = license_fields([SourceLicense(*entry) for entry in licenses])
    assert {k: v for k, v in fields.items() if k != "source_licenses"} == head
    assert DatasetCardData(**fields).license == head["license"]


def test_a_local_source_says_where_it_came_from():
    assert source_pin({"name": "STS12", "hf_path": None, "hf_revision": None, "origin": "local/STS12"}) == "local/STS12"
