"""The generator's registry of source datasets: the registry rows of the contract's dataset table
(`hteb_contract/specs/datasets.yaml`, the HTEB paper's 32 datasets), looked up by any of their names.

Why a lookup of its own: the generator reads either the Hub (GPU profile) or the local copies (CPU
profile), and both must give a dataset the same name in the revision, so the scorer finds it; a
user may name a dataset by its revision name, its mteb task or its folder of ../shared/data.
"""

from __future__ import annotations

from pathlib import Path

from hteb_contract.errors import unknown_name
from hteb_contract.common.registry import Registry
from hteb_contract.sources import read_source_dir
from hteb_contract.specs.datasets import DatasetSpec, registry_specs

#: Revision name -> dataset; `lookup_source` also takes mteb task and local folder names.
SOURCES: Registry[DatasetSpec] = Registry("dataset", entries={spec.name: spec for spec in registry_specs()})

#: The CPU profile's datasets, the bundled sample's: the rows that state a place in it (`sample`), in that order.
SAMPLE_DATASETS: tuple[str, ...] = tuple(
    spec.name for spec in sorted((s for _, s in SOURCES.items() if s.sample is not None), key=lambda s: s.sample or 0)
)


def lookup_source(name: str, *, data_dir: Path | None = None) -> DatasetSpec:
    """By revision name, mteb task name or local folder name (a local folder name picks the entry that
    evaluates all of its subsets: SemRel2024, not SemRel2024-eng).

    With `data_dir`, a folder there that no entry names is a dataset too (its dataset.json says what it
    is): how a source folder in mteb's layout of one's own is generated with the CPU profile.
    """
    if name in SOURCES.names():
        return SOURCES.get(name)
    aliased = [entry for _, entry in SOURCES.items() if name in (entry.mteb_task, entry.local)]
    if aliased:
        return max(aliased, key=lambda entry: len(entry.subsets))
    if data_dir is not None and (Path(data_dir) / name / "dataset.json").is_file():
        return local_entry(Path(data_dir) / name)
    raise unknown_name(
        "dataset", name, SOURCES.names(), also_matches=[e.mteb_task for _, e in SOURCES.items() if e.mteb_task]
    )


def local_entry(folder: Path) -> DatasetSpec:
    """The entry of a source folder no entry of the table names, from its dataset.json and rows."""
    return DatasetSpec.from_info(read_source_dir(folder).info, local=folder.name)


def source_citation(name: str) -> str | None:
    """The BibTeX of a source dataset by its registry name, for the dataset card; None for a dataset mteb
    gives none and for a folder no row names."""
    return SOURCES.get(name).citation if name in SOURCES.names() else None


def source_task_ids(name: str) -> tuple[str, ...]:
    """The Hub task ids of a source dataset by its registry name (mteb's mapping), for the dataset card."""
    return SOURCES.get(name).hub_task_ids if name in SOURCES.names() else ()
