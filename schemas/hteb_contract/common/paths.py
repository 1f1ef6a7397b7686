"""Where HTEB keeps what it can make again (converted models, exports, call caches): one folder,
shared by the generator and the scorer."""

from __future__ import annotations

import os
from pathlib import Path


def default_cache_dir() -> Path:
    """$HTEB_CACHE_DIR, else ~/.cache/hteb."""
    return Path(os.environ.get("HTEB_CACHE_DIR") or Path.home() / ".cache" / "hteb")
