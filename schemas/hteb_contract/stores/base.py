"""The revision store interface and the scheme registry."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from hteb_contract.common.registry import Registry
from hteb_contract.revision import Revision
from hteb_contract.stores.names import check_label, check_store_uri


@dataclass(frozen=True)
class Published:
    """A label as a store lists it: the revision it names (`revision_id`: the local content hash, or
    the Hub commit) and when it was published (None where the store does not say)."""

    label: str
    revision_id: str | None
    published: str | None

    def line(self) -> str:
        """`sample-1339  5cfa68b19a9a…  2026-11-24T01:32:02+00:00`, as `hteb-score revisions` prints it."""
        return f"{self.label}  {self.revision_id or '-'}  {self.published or '-'}"


@dataclass(frozen=True)
class PublishResult:
    """What a publish did: `created` is False when the same content was already there."""

    uri: str
    label: str
    revision_id: str  # Hub commit sha, or the local content hash
    content_hash: str
    created: bool


class RevisionStore(ABC):
    """Publishes sealed revision folders and hands back verified local copies."""

    uri: str

    @abstractmethod
    def publish(self, staged: Path) -> PublishResult:
        """Publish a sealed folder (manifest.json written by `revision.seal`) under its label.

        Identical content under the same label is a no-op; different content under an
        existing label is refused. Never moves or overwrites a label.
        """

    @abstractmethod
    def fetch(self, ref: str, *, datasets: Iterable[str] | None = None) -> Revision:
        """A verified local copy of the revision `ref` (label, or content hash / commit)."""

    @abstractmethod
    def labels(self) -> list[str]:
        """Published labels, oldest first."""

    def published(self) -> list[Published]:
        """Published labels with the revision each names and when, oldest first (a store that keeps
        neither: the labels alone)."""
        return [Published(label, None, None) for label in self.labels()]

    @abstractmethod
    def exists(self) -> bool:
        """Whether there is a store at this URI (listing a missing one is an error, not an empty list)."""

    def corrupt_labels(self) -> dict[str, str]:
        """Labels whose record cannot be read, with why; `labels()` leaves them out. A store whose
        labels are read from a service that checks them (the Hub's tags) has none."""
        return {}


#: URI scheme -> backend class; the backends register themselves in their modules, loaded when first asked.
STORES: Registry[Callable[[str], RevisionStore]] = Registry(
    "store scheme", modules=("hteb_contract.stores.local", "hteb_contract.stores.hub")
)


def open_store(uri: str) -> RevisionStore:
    """The store for a URI: `hf://OWNER/NAME`, `file://PATH` or a plain path (names.check_store_uri)."""
    check_store_uri(uri)
    scheme, sep, rest = uri.partition("://")
    return STORES.get(scheme if sep else "file")(rest if sep else uri)


def staged_manifest(staged: Path) -> dict:
    """The manifest of a folder about to be published, verified against its files, its label one every
    store takes (the manifest schema's pattern lets a trailing line break, dot or `.lock` through)."""
    manifest = Revision.open(staged).manifest
    check_label(manifest["label"])
    return manifest
