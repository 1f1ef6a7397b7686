"""Revision stores: where revisions live. One interface, one backend per URI scheme.

- a path or `file://PATH`: the local store (the embedded default);
- `hf://OWNER/NAME`: a Hugging Face Hub dataset repository.

`check_store_uri` and `check_label` refuse what no store accepts, before any work.
"""

from __future__ import annotations

from hteb_contract.stores.base import STORES, PublishResult, RevisionStore, open_store
from hteb_contract.stores.names import check_label, check_store_uri

__all__ = ["STORES", "PublishResult", "RevisionStore", "check_label", "check_store_uri", "open_store"]
