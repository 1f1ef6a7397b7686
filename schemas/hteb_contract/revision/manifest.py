"""The manifest: sealing a folder (sha256 of every file, the content hash) and checking a manifest
against the schema, its own hash and the layout it declares."""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.common.atomic import (
    atomic_write_json,
    canonical_json,
    file_kind,
    open_regular,
    sha256_bytes,
    sha256_file,
)
from hteb_contract.errors import IntegrityError, first_line
from hteb_contract.parquet_io import read_footer
from hteb_contract.revision.layout import CORPUS_TASK_TYPES, MANIFEST, PARTS, Progress, quiet, safe_relpath, variant_of
from hteb_contract.taxonomy import of_manifest
from hteb_contract.validation import SCHEMA_VERSIONS, validate


def source_languages(manifest: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each source dataset's languages as the revision records them (every language of its subsets): what a
    card scored on it says, so a page groups datasets by the revision's rows, not by a later table's."""
    return {source["name"]: list(source["languages"]) for source in manifest["sources"]}


def file_entries(root: Path, progress: Progress = quiet) -> list[dict[str, Any]]:
    """sha256, size and row count of every file of a revision folder except the manifest; a file
    that is not a regular one (a link, a FIFO) is an IntegrityError: it is not sealed."""
    root = Path(root)
    entries = []
    paths = sorted(disk_files(root, links=False, where=f"{root}"), key=PurePosixPath)
    for rel in progress(paths, "sealing (sha256)", len(paths)):
        path = root / rel
        if rel == MANIFEST:
            continue
        rows = _row_count(path, rel) if path.suffix == ".parquet" else None
        entries.append({"path": rel, "sha256": sha256_file(path), "bytes": path.stat().st_size, "rows": rows})
    return entries


def _row_count(path: Path, rel: str) -> int:
    return read_footer(path, rel, lambda message: IntegrityError(f"{message}; not sealed")).num_rows


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


def config_hash(config: Mapping[str, Any]) -> str:
    """The hash of what decided a revision's content (the manifest's `config`, as the generator's
    `content_config` gives it): sha256 of its JSON, keys sorted, characters as they are. Recomputed when a
    manifest is read, since `content_hash` covers the files, not the manifest's own fields."""
    return sha256_bytes(json.dumps(config, sort_keys=True, ensure_ascii=False).encode("utf-8"))  # not canonical_json:
    # the spelling every published revision's config_hash was made with


def seal(root: Path, manifest_fields: Mapping[str, Any], progress: Progress = quiet) -> dict[str, Any]:
    """Hash every file, write manifest.json (validated) and return it. The last step of making a revision."""
    files = file_entries(root, progress)
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


def load_manifest(root: Path, *, links: bool = False) -> dict[str, Any]:
    """The manifest of a revision folder, checked against the schema, its own content hash, the
    taxonomy and the layout it declares (`links`: the folder's files may be symbolic links, as a Hub
    snapshot's are)."""
    path = Path(root) / MANIFEST
    if not path.is_file():
        raise IntegrityError(f"{root}: no {MANIFEST} (not an HTEB revision)")
    try:
        with open_regular(path, follow_links=links) as handle:
            raw = handle.read()
    except OSError as err:
        raise IntegrityError(f"{path}: cannot be read ({err.strerror})") from None
    manifest = json_input.load_object(raw, str(path), IntegrityError)
    label = manifest.get("label")
    validate("manifest", manifest, what=f"revision {label!r} ({path})" if isinstance(label, str) else str(path))
    seen: set[str] = set()
    for entry in manifest["files"]:
        safe_relpath(entry["path"])
        if entry["path"] in seen:
            raise IntegrityError(f"{path}: file {entry['path']} is listed twice")
        seen.add(entry["path"])
    specs = manifest.get("specs")
    if specs is not None and sorted(r["name"] for r in specs["transformations"]) != sorted(manifest["transformations"]):
        raise IntegrityError(
            f"{path}: its specs rows name other transformations than it holds "
            f"({', '.join(sorted(r['name'] for r in specs['transformations']))})"
        )
    taxonomy = of_manifest(manifest)  # the revision's own rows where it records them
    unknown = [t for t in manifest["transformations"] if t not in taxonomy.axis_by_transformation]
    if unknown:
        raise IntegrityError(
            f"{path}: transformation {unknown[0]!r} is not in the taxonomy ({', '.join(taxonomy.transformations)})"
        )
    if content_hash(manifest["files"]) != manifest["content_hash"]:
        raise IntegrityError(f"{path}: content_hash does not match the listed files (manifest edited?)")
    config = manifest["config"]
    if config_hash(config) != manifest["config_hash"]:
        raise IntegrityError(f"{path}: config_hash does not match its config (manifest edited?)")
    for key in ("transformations", "seeds"):  # stated twice: once as made, once as the config asked
        if key in config and config[key] != manifest[key]:
            raise IntegrityError(f"{path}: its {key} are not the ones its config names (manifest edited?)")
    _check_layout(manifest, where=str(path))
    return manifest


def _check_layout(manifest: Mapping[str, Any], *, where: str) -> None:
    """What the reader relies on: each dataset declared once with its dataset.json, and every data
    file `data/<dataset>/<transformation>_<seed>.parquet` of a declared dataset, transformation and seed."""
    names = [s["name"] for s in manifest["sources"]]
    if len(set(names)) != len(names):
        raise IntegrityError(f"{where}: dataset {next(n for n in names if names.count(n) > 1)!r} is declared twice")
    transformations, seeds = set(manifest["transformations"]), set(manifest["seeds"])
    task_types = {s["name"]: s["task_type"] for s in manifest["sources"]}
    listed = set()
    for entry in manifest["files"]:
        parts = PurePosixPath(entry["path"]).parts
        if parts[0] not in PARTS:
            continue
        if len(parts) != 3 or parts[1] not in names:
            raise IntegrityError(
                f"{where}: file {entry['path']} is not in the folder of a declared dataset ({', '.join(names)})"
            )
        variant = variant_of(parts[2])
        if parts[0] != "source" and (variant is None or variant[0] not in transformations or variant[1] not in seeds):
            raise IntegrityError(
                f"{where}: file {entry['path']} is not named <transformation>_<seed>.parquet after "
                f"a declared transformation and seed"
            )
        if parts[0] == "corpus" and not manifest.get("corpus_perturbed"):
            raise IntegrityError(
                f"{where}: file {entry['path']} holds perturbed corpus records, but the manifest "
                "does not say corpus_perturbed"
            )
        if parts[0] == "corpus" and task_types[parts[1]] not in CORPUS_TASK_TYPES:
            raise IntegrityError(
                f"{where}: file {entry['path']}: a {task_types[parts[1]]} dataset has no perturbed "
                f"corpus (only {', '.join(CORPUS_TASK_TYPES)})"
            )
        listed.add(entry["path"])
    missing = [n for n in names if f"source/{n}/dataset.json" not in listed]
    if missing:
        raise IntegrityError(f"{where}: dataset {missing[0]} has no source/{missing[0]}/dataset.json")


def parquet_rows(path: Path, *, links: bool, what: str) -> int:
    """The row count a parquet file's footer gives; an unreadable footer is an IntegrityError naming `what`."""
    try:
        with open_regular(path, follow_links=links) as handle:
            return read_footer(handle, what, IntegrityError).num_rows
    except OSError as err:
        raise IntegrityError(f"{what}: not a readable parquet file ({first_line(err)})") from None


def disk_files(root: Path, *, links: bool, where: str) -> set[str]:
    """The files under a revision folder (names starting with '.' aside, as `seal` leaves them out),
    found without opening any: a FIFO, device, socket or (unless `links`) symbolic link is an
    IntegrityError, so that nothing outside the folder is read and no read can block."""
    found, folders = set(), [Path(root)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                rel = Path(entry.path).relative_to(root).as_posix()
                if entry.is_dir(follow_symlinks=False):
                    folders.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False) or (links and entry.is_symlink() and entry.is_file()):
                    found.add(rel)
                else:
                    kind = file_kind(entry.stat(follow_symlinks=False).st_mode)
                    raise IntegrityError(f"{where}: {rel} is {kind}, not a regular file")
    return found
