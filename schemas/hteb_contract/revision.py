"""A dataset revision on disk: what it holds, how it is sealed, how it is opened and verified.

Layout (also what `datasets.load_dataset(repo, config, revision=...)` reads on the Hub)::

    README.md                          dataset card, `configs:` front matter: one config per dataset
    manifest.json                      hteb_contract/json/manifest.v2.schema.json; sha256 of every other file
    data/<Dataset>/<transformation>_<seed>.parquet   item records (hteb_contract/json/item.v2.schema.json)
    source/<Dataset>/dataset.json      the untouched source: metadata ...
    source/<Dataset>/<table>.parquet   ... and its tables (test, train, corpus, queries, qrels, ...)

A revision is untrusted input when read: paths are checked to stay inside the folder, every
file is checked against the manifest's sha256, and data is read only as parquet and JSON.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pyarrow.parquet as pq

from hteb_contract.arrow import arrow_schema
from hteb_contract.atomic import (
    atomic_write_json,
    atomic_write_text,
    canonical_json,
    read_json_object,
    sha256_bytes,
    sha256_file,
)
from hteb_contract.errors import ContractError, IntegrityError, SourceError
from hteb_contract.records import ItemRecord
from hteb_contract.sources import (
    DatasetInfo,
    SourceDataset,
    read_parquet,
    read_source_parquet,
    write_parquet,
    write_source_parquet,
)
from hteb_contract.validation import SCHEMA_VERSIONS, validate

MANIFEST = "manifest.json"
CARD = "README.md"
_SPLIT = re.compile(r"^(?P<transformation>[a-z][a-z_]*?)_(?P<seed>-?\d+)$")


def split_name(transformation: str, seed: int) -> str:
    """The Hub split name of one (transformation, seed): `paraphrasing_1337` (matches ^\\w+$)."""
    return f"{transformation}_{seed}"


def items_path(dataset: str, transformation: str, seed: int) -> str:
    return f"data/{dataset}/{split_name(transformation, seed)}.parquet"


def write_items(root: Path, dataset: str, transformation: str, seed: int, records: Sequence[ItemRecord]) -> Path:
    """Validate item records against the contract, then write them (sorted, stable bytes)."""
    what = f"{dataset}/{split_name(transformation, seed)}"
    rows = []
    for index, record in enumerate(sorted(records, key=lambda r: r.ref)):
        if (record.dataset, record.transformation, record.seed) != (dataset, transformation, seed):
            raise ContractError(f"{what} item {index}: belongs to another dataset/transformation/seed")
        row = record.to_row()
        validate("item", row, what=f"{what} item {index}")
        rows.append(row)
    path = Path(root) / items_path(dataset, transformation, seed)
    write_parquet(path, rows, schema=arrow_schema("item"))
    return path


def manifest_source(info: DatasetInfo, *, origin: str, sample: int | None) -> dict[str, Any]:
    """The manifest's entry for one source dataset: names, pin, languages, subsets and what was transformed."""
    return {"name": info.name, "task_type": info.task_type, "mteb_task": info.mteb_task, "hf_path": info.hf_path,
            "hf_revision": info.hf_revision, "origin": origin, "languages": list(info.languages),
            "subsets": {name: list(codes) for name, codes in info.subsets.items()},
            "transformed_fields": info.transformed_fields(), "sample": sample}


def write_revision(root: Path, sources: Iterable[SourceDataset], records: Iterable[ItemRecord],
                   manifest_fields: Mapping[str, Any], card_body: str) -> dict[str, Any]:
    """Write a whole revision into the empty folder `root` and seal it; returns the manifest.

    The source copy of each dataset, one items file per (dataset, transformation, seed) in the
    order first met, the dataset card (`configs:` front matter, then `card_body`), the manifest.
    """
    root = Path(root)
    if root.exists() and any(root.iterdir()):
        raise ContractError(f"{root}: a revision is written into an empty folder")
    for dataset in sources:
        write_source_parquet(dataset, root / "source" / dataset.name)
    groups: dict[tuple[str, str, int], list[ItemRecord]] = {}
    for record in records:
        groups.setdefault((record.dataset, record.transformation, record.seed), []).append(record)
    variants: dict[str, list[tuple[str, int]]] = {}
    for (name, transformation, seed), group in groups.items():
        write_items(root, name, transformation, seed, group)
        variants.setdefault(name, []).append((transformation, seed))
    atomic_write_text(root / CARD, card_front_matter(manifest_fields, variants) + card_body)
    return seal(root, manifest_fields)


def file_entries(root: Path) -> list[dict[str, Any]]:
    """sha256, size and row count of every file of a revision folder except the manifest."""
    root = Path(root)
    entries = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        if rel == MANIFEST or any(part.startswith(".") for part in PurePosixPath(rel).parts):
            continue
        rows = pq.read_metadata(path).num_rows if path.suffix == ".parquet" else None
        entries.append({"path": rel, "sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": rows})
    return entries


def content_hash(files: Iterable[Mapping[str, Any]]) -> str:
    """The revision's identity: sha256 over the sorted (path, sha256) pairs of its files.

    It covers every byte of every file but manifest.json (the item records, the source copy, the
    dataset card), so identical data published twice is the same revision, and one ParaPLUIE value
    rounded the other way is another one. A label never moves to another identity; whether a
    regeneration *reproduces* a revision (same texts, judge numbers within a tolerance) is a
    separate question, answered by `hteb_contract.reproduction.compare_revisions`.
    """
    pairs = sorted((f["path"], f["sha256"]) for f in files)
    return sha256_bytes(canonical_json(pairs))


def seal(root: Path, manifest_fields: Mapping[str, Any]) -> dict[str, Any]:
    """Hash every file, write manifest.json (validated) and return it. The last step of making a revision."""
    files = file_entries(root)
    manifest = {
        "schema_version": SCHEMA_VERSIONS["manifest"],
        **manifest_fields,
        "files": files,
        "content_hash": content_hash(files),
    }
    manifest.setdefault("created", dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"))
    validate("manifest", manifest, what=f"{root}/{MANIFEST}")
    atomic_write_json(Path(root) / MANIFEST, manifest)
    return manifest


def safe_relpath(path: str) -> PurePosixPath:
    """Refuse a manifest path that could escape the revision folder."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or "\\" in path or any(part in ("..", "") for part in pure.parts):
        raise IntegrityError(f"manifest lists an unsafe path {path!r} (absolute or escaping the revision)")
    return pure


def load_manifest(root: Path) -> dict[str, Any]:
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise IntegrityError(f"{root}: no {MANIFEST} (not an HTEB revision)")
    manifest = read_json_object(path, IntegrityError)
    label = manifest.get("label")
    validate("manifest", manifest, what=f"revision {label!r} ({path})" if isinstance(label, str) else str(path))
    for entry in manifest["files"]:
        safe_relpath(entry["path"])
    if content_hash(manifest["files"]) != manifest["content_hash"]:
        raise IntegrityError(f"{path}: content_hash does not match the listed files (manifest edited?)")
    return manifest


@dataclass
class Revision:
    """An opened, verified revision folder."""

    root: Path
    manifest: dict[str, Any]
    revision_id: str  # Hub commit sha, or the content hash in a local store

    @classmethod
    def open(cls, root: Path, *, datasets: Iterable[str] | None = None, revision_id: str | None = None) -> Revision:
        """Open and verify a revision: every file of the selected datasets (all when None) must
        exist and match its sha256. A corrupted or missing file is an IntegrityError."""
        root = Path(root)
        manifest = load_manifest(root)
        wanted = None if datasets is None else set(datasets)
        if wanted is not None:
            unknown = wanted - {s["name"] for s in manifest["sources"]}
            if unknown:
                known = ", ".join(s["name"] for s in manifest["sources"])
                raise SourceError(f"revision {manifest['label']} has no dataset {sorted(unknown)[0]!r}; it has: {known}")
        for entry in manifest["files"]:
            if wanted is not None and _dataset_of(entry["path"]) not in wanted | {None}:
                continue
            path = root.joinpath(*safe_relpath(entry["path"]).parts)
            if not path.is_file():
                raise IntegrityError(f"revision {manifest['label']}: file {entry['path']} is missing")
            if path.stat().st_size != entry["bytes"] or sha256_file(path) != entry["sha256"]:
                raise IntegrityError(f"revision {manifest['label']}: file {entry['path']} is corrupted (sha256 mismatch)")
        return cls(root, manifest, revision_id or manifest["content_hash"])

    @property
    def label(self) -> str:
        return self.manifest["label"]

    def dataset_names(self) -> list[str]:
        return [s["name"] for s in self.manifest["sources"]]

    def source(self, name: str) -> SourceDataset:
        if name not in self.dataset_names():
            raise SourceError(f"revision {self.label} has no dataset {name!r}; it has: {', '.join(self.dataset_names())}")
        return read_source_parquet(self.root / "source" / name)

    def variants(self, name: str) -> list[tuple[str, int]]:
        """(transformation, seed) pairs present for a dataset, in manifest order."""
        found = set()
        for entry in self.manifest["files"]:
            parts = PurePosixPath(entry["path"]).parts
            if len(parts) == 3 and parts[0] == "data" and parts[1] == name and parts[2].endswith(".parquet"):
                match = _SPLIT.match(parts[2][: -len(".parquet")])
                if match:
                    found.add((match["transformation"], int(match["seed"])))
        order = {t: i for i, t in enumerate(self.manifest["transformations"])}
        return sorted(found, key=lambda v: (order.get(v[0], len(order)), v[0], v[1]))

    def items(self, name: str, transformation: str, seed: int) -> list[ItemRecord]:
        """Item records of one (dataset, transformation, seed), validated against the contract."""
        rel = items_path(name, transformation, seed)
        path = self.root / rel
        if not path.is_file():
            raise SourceError(f"revision {self.label} has no {transformation} seed {seed} for {name}")
        return [ItemRecord.from_row(row, what=f"{rel} item {index}") for index, row in enumerate(read_parquet(path))]


def _dataset_of(path: str) -> str | None:
    parts = PurePosixPath(path).parts
    return parts[1] if len(parts) >= 3 and parts[0] in ("data", "source") else None


def card_front_matter(manifest_like: Mapping[str, Any], variants: Mapping[str, list[tuple[str, int]]]) -> str:
    """YAML front matter for the dataset card: one config per dataset, one split per (transformation, seed).

    Names follow the Hub rules (split names ^\\w+(\\.\\w+)*$), so load_dataset(repo, config) works.
    """
    import yaml

    configs = []
    for index, name in enumerate(sorted(variants)):
        data_files = [
            {"split": split_name(t, s), "path": items_path(name, t, s)} for t, s in variants[name]
        ]
        config = {"config_name": name, "data_files": data_files}
        if index == 0:
            config["default"] = True
        configs.append(config)
    meta = {
        "license": "other",
        "pretty_name": f"HTEB {manifest_like.get('label', '')}".strip(),
        "tags": ["hteb", "mteb", "robustness", "embeddings"],
        "configs": configs,
    }
    return "---\n" + yaml.safe_dump(meta, sort_keys=False, allow_unicode=True) + "---\n"
