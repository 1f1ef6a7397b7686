"""The source registry against the installed mteb's task metadata, SPEC.md's pin table and the paper's
dataset tables; and the local copies it points to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hteb_generate import sources_table
from hteb_generate.licenses import MTEB_LICENSES, OWN, source_license
from hteb_generate.sources_table import SAMPLE_DATASETS, SOURCES, SourceEntry, lookup_source
from hteb_contract.errors import HtebError
from hteb_contract.sources import read_source_dir

mteb = pytest.importorskip("mteb")

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "SPEC.md"
MTEB_NAMED = Path(__file__).resolve().parents[1] / "data" / "mteb-subsets"


def _entries() -> list[SourceEntry]:
    return [entry for _, entry in SOURCES.items()]


def _spec_rows() -> dict[str, dict[str, str]]:
    rows = {}
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9a-f]{40}", cells[3]):
            rows[cells[0]] = {"type": cells[1], "hf_path": cells[2], "revision": cells[3], "splits": cells[5]}
    return rows


def test_32_datasets_from_the_31_pins_of_spec():
    rows = _spec_rows()
    assert len(rows) == 31 and len(SOURCES) == 32
    assert {e.mteb_task for e in _entries()} == set(rows)
    assert [e.name for e in _entries() if e.mteb_task == "SemRel24STS"] == ["SemRel2024-eng", "SemRel2024"]
    assert sum(e.english for e in _entries()) == 19 and sum(not e.english for e in _entries()) == 13  # Tables 9, 10
    for entry in _entries():
        row = rows[entry.mteb_task]
        assert (entry.hf_path, entry.hf_revision) == (row["hf_path"], row["revision"]), entry.name
        assert entry.task_type == ("STR" if entry.mteb_task == "SemRel24STS" else row["type"])
        assert entry.eval_split in [s.strip() for s in row["splits"].split(",")], entry.name


@pytest.mark.parametrize("name", [name for name in SOURCES.names()])
def test_each_entry_follows_the_installed_mtebs_task_metadata(name):
    entry = SOURCES.get(name)
    task = mteb.get_task(entry.mteb_task)
    meta = task.metadata
    assert meta.dataset == {"path": entry.hf_path, "revision": entry.hf_revision}  # nothing else to pass to load_dataset
    assert entry.eval_split in meta.eval_splits
    assert meta.main_score == entry.mteb_main_score
    # The English datasets evaluate mteb's English subsets, the multilingual ones all of mteb's.
    expected = mteb.get_task(entry.mteb_task, languages=["eng"]).hf_subsets if entry.english else meta.hf_subsets
    assert list(entry.subsets) == list(expected)
    for subset, codes in entry.subsets.items():
        assert [code.split("-")[0] for code in meta.hf_subsets_to_langscripts[subset]] == list(codes), subset
    assert entry.fast_loading == bool(getattr(type(task), "fast_loading", False))
    legacy = "AbsTaskClusteringLegacy" in [c.__name__ for c in type(task).__mro__]
    assert entry.cluster_sets == legacy
    if entry.task_type == "Classification":
        assert entry.train_split == task.train_split
    if entry.renames:  # sent1/sent2 -> sentence1/sentence2 is the task's own dataset_transform
        assert "dataset_transform" in vars(type(task))
        assert (task.input1_column_name, task.input2_column_name) == tuple(entry.renames.values())


@pytest.mark.parametrize("name", [name for name in SOURCES.names()])
def test_each_license_is_mtebs_or_the_one_the_release_states(name):
    """The card's license of each source: mteb's record mapped to a Hub id as mteb maps it for its own
    cards, except where the original release states another (OWN)."""
    meta = mteb.get_task(SOURCES.get(name).mteb_task).metadata
    assert MTEB_LICENSES[name] == meta.license
    stated = source_license(SOURCES.get(name))
    assert stated.license == (OWN[name][0] if name in OWN else meta._hf_license())
    assert stated.link.startswith("https://")


def test_each_task_types_hub_category_is_mtebs():
    from hteb_contract.tasks import task_type

    for _, entry in SOURCES.items():
        meta = mteb.get_task(entry.mteb_task).metadata
        assert [task_type(entry.task_type).hub_category] == meta._hf_task_type(), entry.name


def test_languages_the_paper_lists_that_mteb_lacks():
    """The paper's Tables 9-10 against mteb's subsets: only SemRel2024 lists languages mteb has no data for."""
    missing = {e.name: e.languages_not_in_mteb for e in _entries() if e.languages_not_in_mteb}
    assert missing == {"SemRel2024": ("pan", "spa")}
    for entry in _entries():
        assert set(entry.languages) <= set(entry.paper_languages), entry.name
    every = {code for e in _entries() for code in e.paper_languages}
    assert len(every) == 45  # the paper's Table 11: 45 codes


def test_the_docstring_counts_the_entries():
    counted = re.match(r"The (\d+) source datasets", sources_table.__doc__ or "")
    assert counted and int(counted.group(1)) == len(SOURCES) == len({e.name for e in _entries()}) == 32


def test_retrieval_and_reranking_transform_queries_only():
    for entry in _entries():
        fields = entry.info().transformed_fields()
        if entry.task_type in ("Retrieval", "Reranking"):
            assert fields == ["queries.text"]
        elif entry.task_type == "Classification":
            assert fields == [f"{entry.eval_split}.text"]


def test_local_copies_agree_with_the_registry(shared_data: Path):
    for name in (*SAMPLE_DATASETS, "SemRel2024-eng"):
        entry = lookup_source(name)
        dataset = read_source_dir(shared_data / str(entry.local))
        assert dataset.info.task_type == entry.task_type
        assert dataset.info.eval_split == entry.eval_split
        assert dataset.info.mteb_task == entry.mteb_task
        assert {s: dataset.info.subsets[s] for s in entry.subsets} == dict(entry.subsets)


def test_lookup_by_any_name_and_unknown_names():
    assert lookup_source("SemRel24STS").name == lookup_source("SemRel2024").name == "SemRel2024"
    assert lookup_source("SemRel2024-eng").subsets == {"eng": ("eng",)}
    assert lookup_source("TwentyNewsgroupsClustering.v2").local == "TwentyNewsgroups"
    with pytest.raises(HtebError, match="unknown dataset 'STSBenchmrk' \\(did you mean 'STSBenchmark'\\?\\); known: "):
        lookup_source("STSBenchmrk")
    with pytest.raises(HtebError, match="did you mean 'SemRel24STS'"):
        lookup_source("SemRel24STSS")


def test_a_folder_no_entry_names_is_a_dataset_of_its_data_dir():
    entry = lookup_source("STSBCrossLingual", data_dir=MTEB_NAMED)
    assert (entry.name, entry.task_type, entry.local, entry.mteb_task) == ("STSBCrossLingual", "STS", "STSBCrossLingual", None)
    assert entry.subsets == {"en-de": ("eng", "deu"), "en-en": ("eng",)}
    with pytest.raises(HtebError, match="unknown dataset 'STSBCrossLingual'"):
        lookup_source("STSBCrossLingual")
