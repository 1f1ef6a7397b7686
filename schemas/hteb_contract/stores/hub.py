"""The Hugging Face Hub store: `hf://OWNER/NAME`, a dataset repository.

A revision is published as exactly one commit (`create_commit` with every file, and deletes
for files of an earlier revision that this one does not have), made on top of the branch head
seen before uploading (`parent_commit`, so a concurrent push fails instead of mixing), then
tagged with its label from that commit's oid. A tag is never moved: an existing tag with the
same content hash is a no-op, with other content it is refused.

Fetching downloads only the files needed (`snapshot_download(revision=label,
allow_patterns=...)`) and verifies each against the manifest's sha256. It works offline
(`HF_HUB_OFFLINE=1`) from a prepared Hugging Face cache. The token comes from the
environment (HF_TOKEN) or the huggingface_hub login and is never printed or stored.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from hteb_contract.common import json_input
from hteb_contract.errors import HtebError, StoreError
from hteb_contract.revision import CARD, MANIFEST, PARTS, Revision
from hteb_contract.stores.base import STORES, Published, PublishResult, RevisionStore, staged_manifest
from hteb_contract.stores.names import LABEL, check_store_uri


def _hub_errors() -> tuple[type[BaseException], ...]:
    from huggingface_hub import errors

    return (errors.HfHubHTTPError, errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled, OSError)


def _one_line(err: BaseException) -> str:
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".strip()


class HubStore(RevisionStore):
    def __init__(self, repo_id: str, *, cache_dir: Path | None = None) -> None:
        check_store_uri(f"hf://{repo_id}")
        self.repo_id = repo_id
        self.uri = f"hf://{repo_id}"
        env_cache = os.environ.get("HTEB_HF_CACHE")
        cache = cache_dir or env_cache
        self.cache_dir = Path(cache) if cache else None

    def _api(self):
        from huggingface_hub import HfApi

        return HfApi()

    def publish(self, staged: Path) -> PublishResult:
        from huggingface_hub import CommitOperationAdd, CommitOperationDelete

        staged = Path(staged)
        manifest = staged_manifest(staged)
        label, digest = manifest["label"], manifest["content_hash"]
        api = self._api()
        try:
            api.create_repo(self.repo_id, repo_type="dataset", exist_ok=True)
            refs = api.list_repo_refs(self.repo_id, repo_type="dataset")
            tagged = {tag.name: tag.target_commit for tag in refs.tags}
            if label in tagged:
                path = api.hf_hub_download(self.repo_id, MANIFEST, repo_type="dataset", revision=tagged[label])
                published = json_input.load_object(Path(path).read_bytes(), f"{self.uri}: tag {label!r}", StoreError)
                if published.get("content_hash") != digest:
                    raise StoreError(
                        f"{self.uri}: tag {label!r} already holds other content; publish under a new label"
                    )
                return PublishResult(self.uri, label, tagged[label], digest, created=False)
            head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
            wanted = {entry["path"] for entry in manifest["files"]} | {MANIFEST}
            current = set(api.list_repo_files(self.repo_id, repo_type="dataset", revision=head)) if head else set()
            operations: list[CommitOperationAdd | CommitOperationDelete] = [
                CommitOperationAdd(path_in_repo=p, path_or_fileobj=str(staged / p)) for p in sorted(wanted)
            ]
            operations += [CommitOperationDelete(path_in_repo=p) for p in sorted(current - wanted - {".gitattributes"})]
            commit = api.create_commit(
                self.repo_id,
                operations,
                commit_message=f"HTEB revision {label}",
                commit_description=f"content hash {digest}",
                repo_type="dataset",
                parent_commit=head,
            )
            api.create_tag(
                self.repo_id,
                tag=label,
                revision=commit.oid,
                repo_type="dataset",
                tag_message=f"HTEB revision {label} ({digest})",
            )
        except HtebError:
            raise
        except _hub_errors() as err:
            raise StoreError(f"{self.uri}: publish of {label!r} failed ({_one_line(err)})") from None
        return PublishResult(self.uri, label, commit.oid, digest, created=True)

    def fetch(self, ref: str, *, datasets: Iterable[str] | None = None) -> Revision:
        from huggingface_hub import snapshot_download

        if not LABEL.match(ref):
            raise StoreError(f"{self.uri}: {ref!r} is not a tag, branch or commit name")
        names = None if datasets is None else sorted(set(datasets))
        patterns = [MANIFEST, CARD]
        if names is None:
            patterns += [f"{part}/**" for part in PARTS]
        else:
            for name in names:
                patterns += [f"{part}/{name}/*" for part in PARTS]
        try:
            folder = snapshot_download(
                self.repo_id,
                repo_type="dataset",
                revision=ref,
                allow_patterns=patterns,
                cache_dir=str(self.cache_dir) if self.cache_dir else None,
            )
        except _hub_errors() as err:
            raise StoreError(f"{self.uri}: cannot download revision {ref!r} ({_one_line(err)})") from None
        commit = Path(folder).name
        return Revision.open(Path(folder), datasets=names, revision_id=commit, links=True)  # blob-cache links

    def exists(self) -> bool:
        try:
            return self._api().repo_exists(self.repo_id, repo_type="dataset")
        except _hub_errors() as err:
            raise StoreError(f"{self.uri}: cannot tell whether the repository exists ({_one_line(err)})") from None

    def labels(self) -> list[str]:
        return [entry.label for entry in self.published()]

    def published(self) -> list[Published]:
        """The tags with the commit each names (the Hub's tag list carries no date)."""
        try:
            refs = self._api().list_repo_refs(self.repo_id, repo_type="dataset")
        except _hub_errors() as err:
            raise StoreError(f"{self.uri}: cannot list tags ({_one_line(err)})") from None
        return [Published(tag.name, tag.target_commit, None) for tag in sorted(refs.tags, key=lambda t: t.name)]


@STORES.register("hf")
def _open_hub(rest: str) -> RevisionStore:
    return HubStore(rest.strip("/"))
