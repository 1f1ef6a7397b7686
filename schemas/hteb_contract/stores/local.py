"""The local revision store: immutable folders addressed by content hash, labels pointing at them.

    ROOT/objects/<content_hash>/...   a complete revision, never modified after the rename
    ROOT/labels/<label>.json          {"label", "content_hash", "published"}; created once, never moved
    ROOT/.tmp/                        staging for publishes in flight (a killed publish leaves only this)

Publishing copies into .tmp, fsyncs, renames into objects/ (atomic), then creates the label
file with a hard link (fails if it exists), so a reader never sees a partial revision.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import uuid
from collections.abc import Iterable
from pathlib import Path

from hteb_contract.atomic import canonical_json, fsync_dir
from hteb_contract.errors import StoreError
from hteb_contract.revision import Revision
from hteb_contract.stores.base import PublishResult, RevisionStore, STORES, staged_manifest


class LocalStore(RevisionStore):
    def __init__(self, root: Path) -> None:
        self.root = Path(root).expanduser().resolve()
        self.uri = f"file://{self.root}"

    def _label_path(self, label: str) -> Path:
        return self.root / "labels" / f"{label}.json"

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
            if pid.isdigit() and not _alive(int(pid)):
                shutil.rmtree(leftover, ignore_errors=True) if leftover.is_dir() else leftover.unlink(missing_ok=True)

    def publish(self, staged: Path) -> PublishResult:
        manifest = staged_manifest(Path(staged))
        label, digest = manifest["label"], manifest["content_hash"]
        self._prepare()
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
            for path in sorted(tmp.rglob("*"), reverse=True):
                if path.is_file():
                    path.chmod(0o444)  # objects are immutable
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
        except FileExistsError:
            tmp_label.unlink()
            return self.publish(staged)  # another publisher won the race: re-check its content
        tmp_label.unlink()
        fsync_dir(self.root / "labels")
        return PublishResult(self.uri, label, digest, digest, created=True)

    def _read_label(self, label: str) -> dict | None:
        path = self._label_path(label)
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            raise StoreError(f"store {self.root}: label file {path.name} is corrupted") from None

    def resolve(self, ref: str) -> str:
        """Content hash of a label, or the hash itself (a unique prefix of 8+ hex digits works)."""
        record = self._read_label(ref) if "/" not in ref else None
        if record is not None:
            return record["content_hash"]
        objects = self.root / "objects"
        if len(ref) >= 8 and all(c in "0123456789abcdef" for c in ref) and objects.is_dir():
            hits = [p.name for p in objects.iterdir() if p.name.startswith(ref)]
            if len(hits) == 1:
                return hits[0]
        known = ", ".join(self.labels()) or "none"
        raise StoreError(f"no revision {ref!r} in store {self.root} (labels: {known})")

    def fetch(self, ref: str, *, datasets: Iterable[str] | None = None) -> Revision:
        digest = self.resolve(ref)
        revision = Revision.open(self.root / "objects" / digest, datasets=datasets, revision_id=digest)
        if revision.manifest["content_hash"] != digest:
            raise StoreError(f"store {self.root}: object {digest[:12]} holds another revision")
        return revision

    def labels(self) -> list[str]:
        folder = self.root / "labels"
        if not folder.is_dir():
            return []
        records = [json.loads(p.read_text(encoding="utf-8")) for p in folder.glob("*.json")]
        return [r["label"] for r in sorted(records, key=lambda r: (r["published"], r["label"]))]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@STORES.register("file")
def _open_local(rest: str) -> RevisionStore:
    return LocalStore(Path(rest))
