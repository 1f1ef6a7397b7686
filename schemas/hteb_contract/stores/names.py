"""What a store URI and a revision label may be, checked without network or filesystem access.

Why here: a URI or label that no store accepts must be refused before a run starts, not after an
hour of generation when the revision is sealed (the manifest's label pattern) or published (a Hub
tag, a local label file). Both CLIs call these checks first.

A label is one rule for both stores: the manifest schema's pattern (letters, digits, '.', '_',
'-', starting with a letter or digit, at most 128 characters: a safe file name in
`labels/<label>.json`), and none of what git refuses in a tag name (`..`, a trailing `.` or
`.lock`), since a Hub label is a git tag.

>>> check_store_uri("hf://HTEB/revisions"); check_label("sample-1339")
>>> check_store_uri("ftp://h")
Traceback (most recent call last):
...
hteb_contract.errors.StoreError: unknown store scheme 'ftp' in 'ftp://h': use a path, file://PATH or hf://OWNER/NAME
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hteb_contract.errors import StoreError
from hteb_contract.validation import schema

#: A revision label, as the manifest schema spells it (also a safe file and tag name).
LABEL = re.compile(schema("manifest")["$defs"]["label"]["pattern"])

USAGE = "use a path, file://PATH or hf://OWNER/NAME"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _local_path(uri: str, path: str) -> None:
    if not path.strip():
        raise StoreError(f"store {uri!r} names no folder: {USAGE}")
    if "\0" in path:
        raise StoreError(f"store {uri!r}: a path cannot hold a NUL character")


def _hub_repo(uri: str, repo: str) -> None:
    from huggingface_hub.errors import HFValidationError
    from huggingface_hub.utils import validate_repo_id

    repo = repo.strip("/")  # as the Hub store reads it
    if repo.count("/") != 1:
        raise StoreError(f"store {uri!r}: expected hf://OWNER/NAME")
    try:
        validate_repo_id(repo)
    except HFValidationError:
        raise StoreError(
            f"store {uri!r}: {repo!r} is not a Hugging Face repository id (OWNER/NAME of letters, "
            "digits, '-', '_', '.'; no '--' or '..'; a name of at most 96 characters)"
        ) from None


#: URI scheme -> the check of what follows `scheme://` (the schemes `open_store` opens).
SCHEMES: dict[str, Callable[[str, str], None]] = {"file": _local_path, "hf": _hub_repo}


def check_store_uri(uri: str) -> None:
    """A one-line StoreError unless `uri` is a store URI `open_store` can open: `hf://OWNER/NAME`,
    `file://PATH` or a plain path (not empty; `hf:x` without `//` is a typo, not a folder name)."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        if _SCHEME.match(uri):
            raise StoreError(f"store {uri!r} looks like a URI without '//': {USAGE}")
        scheme, rest = "file", uri
    if scheme not in SCHEMES:
        raise StoreError(f"unknown store scheme {scheme!r} in {uri!r}: {USAGE}")
    SCHEMES[scheme](uri, rest)


_GIT_REFUSES = re.compile(r"\.\.|\.$|\.lock$")


def is_label(label: object) -> bool:
    """Whether `label` is a revision label every store accepts (module docstring)."""
    return isinstance(label, str) and LABEL.fullmatch(label) is not None and not _GIT_REFUSES.search(label)


def check_label(label: str) -> None:
    """A one-line StoreError unless `label` is a revision label every store accepts (module docstring)."""
    if not is_label(label):
        raise StoreError(
            f"label {label!r} is not a revision label: 1 to 128 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit, without '..' and not ending in '.' or '.lock'"
        )
