"""Revision stores: where revisions live. One interface, one backend per URI scheme.

- a path or `file://PATH`: the local store (the embedded default);
- `hf://OWNER/NAME`: a Hugging Face Hub dataset repository.
"""

from __future__ import annotations

from hteb_contract.stores.base import PublishResult, RevisionStore, open_store, register_store
from hteb_contract.stores import hub as _hub, local as _local  # noqa: F401  (register the backends)

__all__ = ["PublishResult", "RevisionStore", "open_store", "register_store"]
