"""The local revision store: immutable folders addressed by content hash, labels pointing at them.

    ROOT/objects/<content_hash>/...   a complete revision, never modified after the rename
    ROOT/labels/<label>.json          {"label", "content_hash", "published"}; created once, never moved
    ROOT/.tmp/                        staging for publishes in flight (a killed publish leaves only this)
    ROOT/.tmp/publish.lock            held by the one publish at work (hteb_contract.common.locks)

Publishing, under the store's lock, copies into .tmp, fsyncs, renames into objects/ (atomic), then
creates the label file with a hard link (fails if it exists), so a reader never sees a partial
revision and two publishes of one label never both copy. Files follow the umask (objects are
made read-only within it).

A label file is untrusted input too: one that is not exactly such a record (its own label, a hex
sha256) is corrupt. It is refused when asked for, before any object is read (a content hash of
`../../x` must not send the reader outside the store), and it never hides the other labels.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

from hteb_contract.common import json_input
from hteb_contract.common.paths import expand_home
from hteb_contract.common.atomic import (
    NotRegular,
    canonical_json,
    current_umask,
    fsync_dir,
    open_regular,
    process_alive,
)
from hteb_contract.errors import ContractError, StoreError
from hteb_contract.common.locks import exclusive
from hteb_contract.revision import Revision
from hteb_contract.stores.base import STORES, Published, PublishResult, RevisionStore, staged_manifest
from hteb_contract.stores.names import is_label

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
PUBLISH_LOCK = "publish.lock"  # in .tmp/: its name is no publisher's leftover (those start with a pid)
_HASH_PREFIX = re.compile(r"^[0-9a-f]{8,64}$")


class CorruptLabel(StoreError):
    """A label file that is not a label record; `why` says what is wrong with it."""

    def __init__(self, store: Path, label: str, why: str) -> None:
        super().__init__(f"store {store}: label {label!r} is corrupt: labels/{label}.json {why}")
        self.why = why


class LocalStore(RevisionStore):
    def __init__(self, root: Path) -> None:
        self.root = expand_home(root, "store").resolve()
        self.uri = f"file://{self.root}"

    def _label_path(self, label: str) -> Path:
        return self.root / "labels" / f"{label}.json"

    def _parse_label(self, path: Path) -> dict:
        """The record of a label file: {"label": its file name, "content_hash": hex sha256, "published": str}."""
        label = path.name[: -len(".json")]
        try:  # publish makes hard links; a symbolic one may point anywhere, a FIFO would block the reader
            with open_regular(path) as handle:
                record = json_input.loads(handle.read(), str(path), ContractError)
        except OSError as err:
            raise CorruptLabel(
                self.root,
                label,
                (err.strerror or str(err)) if isinstance(err, NotRegular) else f"cannot be read ({err.strerror})",
            ) from None
        except ContractError:
            raise CorruptLabel(self.root, label, "is not valid JSON") from None
        if not isinstance(record, dict):
            raise CorruptLabel(self.root, label, "is not a JSON object")
        if record.get("label") != label:
            raise CorruptLabel(self.root, label, f"names the label {record.get('label')!r}")
        if not isinstance(record.get("content_hash"), str) or not _SHA256.match(record["content_hash"]):
            raise CorruptLabel(
                self.root, label, f"gives the content hash {record.get('content_hash')!r:.80}, not a hex sha256"
            )
        if not isinstance(record.get("published"), str):
            raise CorruptLabel(self.root, label, "has no publication time")
        return record

    def _prepare(self) -> None:
        try:
            for sub in ("objects", "labels", ".tmp"):
                (self.root / sub).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(f"store {self.root} is not writable ({err.strerror})") from None
        if not os.access(self.root / "labels", os.W_OK):
            raise StoreError(f"store {self.root} is not writable")
        for leftover in (self.root / ".tmp").iterdir():  # from killed publishers only
            pid = leftover.name.split("-", 1)[0]
            if pid.isdigit() and not process_alive(int(pid)):
                shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)

    def publish(self, staged: Path) -> PublishResult:
        """One publisher at a time (the store's lock): the second of two publishes of one label
        finds the first's label, and is a no-op (same content) or refused before it copies anything,
        so a refused publish leaves no unlabelled object behind."""
        manifest = staged_manifest(Path(staged))
        self._prepare()
        with exclusive(self.root / ".tmp" / PUBLISH_LOCK, wait=True, busy=f"store {self.root} is busy"):
            return self._publish(Path(staged), manifest)

    def _publish(self, staged: Path, manifest: dict) -> PublishResult:
        label, digest = manifest["label"], manifest["content_hash"]
        existing = self._read_label(label)
        if existing is not None:
            if existing["content_hash"] != digest:
                raise StoreError(
                    f"label {label!r} already holds other content ({existing['content_hash'][:12]}); "
                    "publish under a new label"
                )
            return PublishResult(self.uri, label, digest, digest, created=False)
        target = self.root / "objects" / digest
        if not target.is_dir():
            tmp = self.root / ".tmp" / f"{os.getpid()}-{uuid.uuid4().hex}"
            shutil.copytree(staged, tmp, ignore=shutil.ignore_patterns(".*"))
            umask = current_umask()
            for path in sorted(tmp.rglob("*"), reverse=True):
                if path.is_file():
                    path.chmod(0o444 & ~umask)  # objects are immutable; who may read them is the umask's
                    with open(path, "rb") as handle:
                        os.fsync(handle.fileno())
                else:
                    fsync_dir(path)
            fsync_dir(tmp)
            os.replace(tmp, target)
            fsync_dir(target.parent)
        record = {
            "label": label,
            "content_hash": digest,
            "published": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }
        tmp_label = self.root / ".tmp" / f"{os.getpid()}-{uuid.uuid4().hex}.json"
        tmp_label.write_bytes(canonical_json(record) + b"\n")
        with open(tmp_label, "rb") as handle:
            os.fsync(handle.fileno())
        try:
            os.link(tmp_label, self._label_path(label))
        except FileExistsError:  # written by a publisher that took no lock (an older hteb): re-check its content
            tmp_label.unlink()
            return self._publish(staged, manifest)
        tmp_label.unlink()
        fsync_dir(self.root / "labels")
        return PublishResult(self.uri, label, digest, digest, created=True)

    def _read_label(self, label: str) -> dict | None:
        """The record of a label (None when there is none); a corrupt label file is a CorruptLabel."""
        if not is_label(label):
            return None
        path = self._label_path(label)
        return self._parse_label(path) if os.path.lexists(path) else None

    def resolve(self, ref: str) -> str:
        """Content hash of a label, or the hash itself (a unique prefix of 8+ hex digits works)."""
        record = self._read_label(ref)
        if record is not None:
            return record["content_hash"]
        objects = self.root / "objects"
        if _HASH_PREFIX.match(ref) and objects.is_dir():
            hits = [p.name for p in objects.iterdir() if p.name.startswith(ref) and _SHA256.match(p.name)]
            if len(hits) == 1:
                return hits[0]
        if not self.exists():
            raise StoreError(f"no revision {ref!r} in store {self.root}: there is no store there")
        known = ", ".join(self.labels()) or "none"
        raise StoreError(f"no revision {ref!r} in store {self.root} (labels: {known})")

    def fetch(self, ref: str, *, datasets: Iterable[str] | None = None) -> Revision:
        digest = self.resolve(ref)
        revision = Revision.open(self.root / "objects" / digest, datasets=datasets, revision_id=digest)
        if revision.manifest["content_hash"] != digest:
            raise StoreError(f"store {self.root}: object {digest[:12]} holds another revision")
        if self._read_label(ref) is not None and revision.label != ref:  # no hash covers the manifest's label
            raise StoreError(
                f"store {self.root}: label {ref!r} points at object {digest[:12]}, whose manifest says "
                f"it is revision {revision.label!r}"
            )
        return revision

    def exists(self) -> bool:
        return (self.root / "labels").is_dir()

    def _scan(self) -> tuple[list[dict], dict[str, str]]:
        """The readable label records, oldest first, and the corrupt label files with why."""
        folder = self.root / "labels"
        records, corrupt = [], {}
        for path in sorted(folder.glob("*.json")) if folder.is_dir() else ():
            try:
                records.append(self._parse_label(path))
            except CorruptLabel as err:
                corrupt[path.name[: -len(".json")]] = err.why
        return sorted(records, key=lambda r: (r["published"], r["label"])), corrupt

    def labels(self) -> list[str]:
        """Readable labels, oldest first (none for a store not made yet: a first publish creates it)."""
        return [r["label"] for r in self._scan()[0]]

    def published(self) -> list[Published]:
        """Readable labels with their content hash and publication time, oldest first."""
        return [Published(r["label"], r["content_hash"], r["published"]) for r in self._scan()[0]]

    def corrupt_labels(self) -> dict[str, str]:
        return self._scan()[1]


def enclosing_store(path: Path, *also: Path) -> Path | None:
    """The local store `path` lies in, or None: any folder above it (itself included) holding
    `labels/` and `objects/`, or one of the stores `also` (which need not exist yet). Nothing but
    publish writes into a store: an output there would sit inside sealed revisions or beside them."""
    where = expand_home(path, "path").resolve()
    named = [expand_home(store, "store").resolve() for store in also]
    for folder in (where, *where.parents):
        if folder in named or ((folder / "labels").is_dir() and (folder / "objects").is_dir()):
            return folder
    return None


@STORES.register("file")
def _open_local(rest: str) -> RevisionStore:
    return LocalStore(Path(rest))  # open_store has refused an empty path
