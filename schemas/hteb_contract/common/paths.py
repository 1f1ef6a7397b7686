"""Where HTEB keeps what it can make again (converted models, exports, call caches): one folder,
shared by the generator and the scorer."""

from __future__ import annotations

import os
from pathlib import Path

from hteb_contract.errors import HtebError


def default_cache_dir() -> Path:
    """$HTEB_CACHE_DIR, else ~/.cache/hteb."""
    return Path(os.environ.get("HTEB_CACHE_DIR") or Path.home() / ".cache" / "hteb")


def expand_home(path: str | Path, what: str) -> Path:
    """`path` (the `what` a user gave) with a leading `~` or `~user` expanded, as a shell would; a user with no
    home folder here is one line (pathlib raises a bare RuntimeError for it)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        user = Path(path).parts[0][1:]
        raise HtebError(
            f"{what} {str(path)!r} names the home folder of user {user!r}, who has none on this machine"
        ) from None
