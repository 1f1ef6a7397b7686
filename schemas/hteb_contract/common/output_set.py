"""An output set written together: files that say one thing (a page and its CSV) are replaced all at once, so
a reader finds the old set or the new, never the page of new cards beside the CSV of old ones.

Each file is written in full beside its target first (`.<name>.<pid>.set.tmp`, a long name cut to fit with a
digest of the whole: `staged_name`), then a journal
(`.hteb-set.<pid>.json`) names the renames, and the renames run with Ctrl-C held back. A run killed between
them (SIGKILL, power) leaves the journal: the next write in that folder finishes the renames first (the new
set, whole), and removes what a dead writer left before its journal. An output that is one of the command's
inputs, or two outputs that are one file, are refused before anything is written; a symbolic link is written
through (its target replaced, the link kept).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path

from hteb_contract.common import json_input
from hteb_contract.common.atomic import atomic_write_text, fsync_dir, new_file_mode, process_alive
from hteb_contract.errors import HtebError

_JOURNAL = re.compile(r"\.hteb-set\.(\d+)\.json")
_TEMP = re.compile(r"\..+\.(\d+)\.set\.tmp")
#: The most bytes a file name may hold (NAME_MAX on Linux and macOS), and how much of a long target's name its
#: staged file keeps (room for the digest, the pid and the suffix, and for `atomic_write_text`'s own temporary).
NAME_BYTES = 255
CUT_BYTES = 160


def write_together(files: Mapping[Path, str], *, inputs: Sequence[Path] = ()) -> None:
    """Write `files` (path -> text) as one set; `inputs` are files the command read. The journal sits in the
    first file's folder, each staged file beside its target."""
    targets: dict[Path, Path] = {}
    for path in files:
        target = Path(os.path.realpath(path))
        if target in targets.values():
            other = next(p for p, t in targets.items() if t == target)
            raise HtebError(f"{path} and {other} are one file: the set would lose one of them")
        targets[Path(path)] = target
    for given in inputs:
        if Path(given).exists() and Path(os.path.realpath(given)) in targets.values():
            raise HtebError(f"{given} is an input of this command: writing the output there would lose it")
    folders = list(dict.fromkeys(t.parent for t in targets.values()))  # a link's target may sit elsewhere
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        recover(folder)
    pid = os.getpid()
    staged: dict[str, str] = {}
    try:
        for path, target in targets.items():
            temp = target.with_name(staged_name(target.name, pid))
            mode = new_file_mode(target)
            atomic_write_text(temp, files[path])
            os.chmod(temp, mode)
            staged[str(temp)] = str(target)
        journal = folders[0] / f".hteb-set.{pid}.json"
        atomic_write_text(journal, json.dumps(staged))
    except BaseException:
        for written in staged:
            Path(written).unlink(missing_ok=True)
        raise
    _finish(journal, staged)


def staged_name(name: str, pid: int) -> str:
    """The name a target `name` is staged under: `.<name>.<pid>.set.tmp`; where that would pass the 255 bytes a
    name may hold, the name cut and a digest of the whole put after it, so two long targets of one set that
    begin alike are never staged as one file."""
    whole = f".{name}.{pid}.set.tmp"
    if len(os.fsencode(whole)) <= NAME_BYTES:
        return whole
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:16]
    return f".{os.fsdecode(os.fsencode(name)[:CUT_BYTES])}~{digest}.{pid}.set.tmp"


def recover(folder: Path) -> None:
    """Finish the renames a killed writer's journal names in `folder`, and remove a dead writer's staged files."""
    for entry in sorted(Path(folder).iterdir()):
        match = _JOURNAL.fullmatch(entry.name)
        if match and not process_alive(int(match[1])):
            _finish(entry, json_input.read(entry))
    for entry in Path(folder).iterdir():
        match = _TEMP.fullmatch(entry.name)
        if match and not process_alive(int(match[1])):
            entry.unlink(missing_ok=True)


def _finish(journal: Path, staged: Mapping[str, str]) -> None:
    """Rename every staged file onto its target, Ctrl-C held until the last; then the journal goes."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        for temp, target in staged.items():
            if Path(temp).exists():  # a rename a killed writer already made is not made twice
                os.replace(temp, target)
        for folder in dict.fromkeys(Path(target).parent for target in staged.values()):
            fsync_dir(folder)  # the renames durable before the journal that would redo them goes
        journal.unlink(missing_ok=True)
        fsync_dir(journal.parent)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
