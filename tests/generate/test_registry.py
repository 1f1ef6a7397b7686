"""The source registry against SPEC.md's pin table, and the local copies it points to."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hteb_generate import registry
from hteb_generate.registry import SAMPLE_DATASETS, SOURCES, SourceEntry, lookup_source
from hteb_contract.errors import HtebError
from hteb_contract.sources import read_source_dir

SPEC = Path(__file__).resolve().parents[2].parent / "shared" / "SPEC.md"


def _entries() -> list[SourceEntry]:
    return [entry for _, entry in SOURCES.items()]


def _spec_rows() -> dict[str, dict[str, str]]:
    rows = {}
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and re.fullmatch(r"[0-9a-f]{40}", cells[3]):
            rows[cells[0]] = {"type": cells[1], "hf_path": cells[2], "revision": cells[3], "splits": cells[5]}
    return rows


def test_registry_matches_every_pin_of_spec():
    rows = _spec_rows()
    assert len(rows) == 31  # SemRel2024 serves both the English and the multilingual column of the 32
    assert {e.mteb_task for e in _entries()} == set(rows)
    for entry in _entries():
        row = rows[entry.mteb_task]
        assert (entry.hf_path, entry.hf_revision) == (row["hf_path"], row["revision"]), entry.name
        assert entry.task_type == ("STR" if entry.mteb_task == "SemRel24STS" else row["type"])
        assert entry.eval_split in [s.strip() for s in row["splits"].split(",")], entry.name


def test_the_docstring_counts_the_entries():
    counted = re.match(r"The (\d+) source datasets", registry.__doc__ or "")
    assert counted and int(counted.group(1)) == len(SOURCES) == len({e.name for e in _entries()})


def test_retrieval_and_reranking_transform_queries_only():
    for entry in _entries():
        fields = entry.info().transformed_fields()
        if entry.task_type in ("Retrieval", "Reranking"):
            assert fields == ["queries.text"]
        elif entry.task_type == "Classification":
            assert fields == [f"{entry.eval_split}.text"]


def test_local_copies_agree_with_the_registry(shared_data: Path):
    for name in SAMPLE_DATASETS:
        entry = lookup_source(name)
        dataset = read_source_dir(shared_data / str(entry.local))
        assert dataset.info.task_type == entry.task_type
        assert dataset.info.eval_split == entry.eval_split
        assert dataset.info.mteb_task == entry.mteb_task
        assert set(dataset.info.languages) == set(entry.languages)


def test_lookup_by_any_name_and_unknown_names():
    assert lookup_source("SemRel24STS").name == lookup_source("SemRel2024").name == "SemRel2024"
    assert lookup_source("TwentyNewsgroupsClustering.v2").local == "TwentyNewsgroups"
    with pytest.raises(HtebError, match="unknown dataset 'STSBenchmrk' \\(did you mean 'STSBenchmark'\\?\\); known: "):
        lookup_source("STSBenchmrk")
    with pytest.raises(HtebError, match="did you mean 'SemRel24STS'"):
        lookup_source("SemRel24STSS")
