"""Revision stores: where revisions live. One interface, one backend per URI scheme.

- a path or `file://PATH`: the local store (the embedded default);
- `hf://OWNER/NAME`: a Hugging Face Hub dataset repository.
"""

from __future__ import annotations

from hteb_contract.stores.base import STORES, PublishResult, RevisionStore, open_store

__all__ = ["STORES", "PublishResult", "RevisionStore", "open_store"]
