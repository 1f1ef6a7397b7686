"""Atomic, durable file writes and hashing: a killed run never leaves a half-written file."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import tempfile
from pathlib import Path
from typing import Any, BinaryIO

_CHUNK = 1 << 20


class NotRegular(OSError):
    """A path that is a FIFO, a device, a socket, a folder or (unless links are followed) a symbolic link."""


def open_regular(path: Path, *, follow_links: bool = False) -> BinaryIO:
    """A regular file opened for reading; anything else is NotRegular, found without blocking: a FIFO
    is opened non-blocking and refused by its fstat, a symbolic link is not followed unless asked."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow_links else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise NotRegular(errno.ELOOP, "is a symbolic link", str(path)) from None
        raise
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegular(errno.EINVAL, f"is not a regular file ({file_kind(mode)})", str(path))
    return os.fdopen(fd, "rb")


def file_kind(mode: int) -> str:
    """What a stat mode says a path is, in words (for a one-line refusal)."""
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISREG, "a regular file"),
    )
    return next((name for test, name in kinds if test(mode)), "not a file")


def sha256_file(path: Path, *, follow_links: bool = False) -> str:
    """Hex sha256 of a regular file, read in 1 MiB chunks (NotRegular for anything else)."""
    digest = hashlib.sha256()
    with open_regular(path, follow_links=follow_links) as handle:
        for block in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical_json(obj: Any) -> bytes:
    """The one JSON spelling used for hashing: sorted keys, no spaces, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def current_umask() -> int:
    """This process's umask (Linux reads it without changing it; elsewhere it is set and restored)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            return next(int(line.split()[1], 8) for line in status if line.startswith("Umask:"))
    except (OSError, StopIteration, ValueError):
        mask = os.umask(0o022)
        os.umask(mask)
        return mask


def new_file_mode(path: Path) -> int:
    """The mode a rewritten file keeps (its own), or a new file gets (0666 less the umask), as
    `open` would give it; a temporary file is made 0600 and must not pass that on."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return 0o666 & ~current_umask()


#: The longest name part a temporary file takes from its target (a name may be 255 bytes; the temporary's
#: own dot, pid, random part and suffix must still fit).
_TEMP_NAME_BYTES = 200


def _temp_prefix(name: str) -> str:
    """The start of the temporary files' names for a target `name`: `.<name, cut to fit>.`."""
    return f".{os.fsdecode(os.fsencode(name)[:_TEMP_NAME_BYTES])}."


def _remove_dead_temps(folder: Path, prefix: str) -> None:
    """Remove the temporary files a killed writer left for one target (`<prefix><pid>.<random>.tmp`)."""
    pattern = re.compile(rf"{re.escape(prefix)}(\d+)\.[a-z0-9_]+\.tmp")
    for entry in folder.iterdir():
        match = pattern.fullmatch(entry.name)
        if match and not process_alive(int(match[1])):
            entry.unlink(missing_ok=True)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file beside `path`, fsync, then rename over it; the file keeps its mode,
    or a new one gets the umask's. The temporary file is named for `path` and this process, so the next
    write of `path` removes what a killed writer left (a failure short of a kill removes it at once)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = new_file_mode(path)
    prefix = _temp_prefix(path.name)
    _remove_dead_temps(path.parent, prefix)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f"{prefix}{os.getpid()}.", suffix=".tmp")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj: Any) -> None:
    """Pretty, key-sorted JSON (stable bytes for identical content)."""
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def process_alive(pid: int) -> bool:
    """Whether process `pid` still runs here: the leftovers of a dead writer may be removed, a live one's not."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def nearest_existing(path: Path) -> Path:
    """`path` itself or its closest ancestor that exists: where a folder made at `path` would be made."""
    return next(p for p in (path, *path.parents) if p.exists())
