"""A run's output folder, written whole or not at all.

The run writes into a temporary sibling folder (`.hteb-partial-<name>-<pid>-...`) that replaces
the output folder by a rename once everything is written; any failure removes it and leaves the
earlier output as it was. A folder holding an earlier result is replaced only with --overwrite,
and then whole: nothing of the earlier run stays beside the new one. A partial folder of a killed
run is removed when the next run writing the same output starts. One run writes an output at a
time: a second run given the same folder while the first writes it is refused in one line, and an
output folder inside a revision store is refused before any work.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from hteb_contract.common.atomic import fsync_dir, process_alive
from hteb_contract.errors import HtebError
from hteb_contract.common.locks import exclusive
from hteb_contract.stores.local import enclosing_store
from hteb_score.cli.options import writable_location

PARTIAL = ".hteb-partial-"
LOCK = ".hteb-lock-"  # held by the one run writing an output (hteb_contract.common.locks), removed when it ends
_OLD = "-old"  # an earlier output moved aside while the new one is renamed into place


@dataclass(frozen=True)
class OutputFolder:
    """Where a run writes; `marker` is the file that marks a folder as one of our earlier results."""

    path: Path
    marker: str
    overwrite: bool = False
    option: str = "--out"

    @classmethod
    def check(
        cls, path: Path, *, marker: str, overwrite: bool, option: str = "--out", stores: tuple[Path, ...] = ()
    ) -> OutputFolder:
        """Refuse, before any work, an output folder that cannot be written, one inside a store
        (`stores`: the local stores of the run, made or not), one holding an earlier result without
        `overwrite`, and a non-empty folder that holds no result of ours at all."""
        path = writable_location(path, option)
        store = enclosing_store(path, *stores)
        if store is not None:
            raise HtebError(f"{option} {path} is inside the store {store}: a store holds published revisions only")
        folder = cls(path, marker, overwrite, option)
        folder._check_contents()
        return folder

    def _check_contents(self) -> None:
        path, option = self.path, self.option
        if path.is_dir() and any(path.iterdir()):
            if not (path / self.marker).is_file():
                raise HtebError(
                    f"{option} {path} is a non-empty folder without {self.marker}; choose a new or empty folder"
                )
            if not self.overwrite:
                raise HtebError(f"{option} {path} holds an earlier result; pass --overwrite to replace it")
            if not os.access(path.parent, os.W_OK | os.X_OK):
                raise HtebError(f"{option} {path}: {path.parent} is not writable, so it cannot be replaced")

    def leftovers(self) -> list[Path]:
        """Partial folders of runs writing this output that are no longer running."""
        prefix = f"{PARTIAL}{self.path.name}-"
        if not self.path.parent.is_dir():
            return []
        found = []
        for entry in self.path.parent.iterdir():
            pid = entry.name[len(prefix) :].split("-", 1)[0]
            if entry.name.startswith(prefix) and pid.isdigit() and not process_alive(int(pid)):
                found.append(entry)
        return sorted(found)

    def _clean(self) -> None:
        """Remove a killed run's partial folders; an earlier output a killed run had moved aside
        (it died between the two renames) is put back first."""
        leftovers = self.leftovers()
        for entry in leftovers:
            if entry.name.endswith(_OLD) and not self.path.exists():
                os.rename(entry, self.path)
        for entry in leftovers:
            shutil.rmtree(entry, ignore_errors=True)

    @contextmanager
    def staged(self) -> Iterator[Path]:
        """A new temporary folder beside the output to write into; it becomes the output when the
        block ends without error and is removed when it does not."""
        parent = self.path.parent
        parent.mkdir(parents=True, exist_ok=True)
        busy = f"another run is writing {self.option} {self.path}; wait for it, or choose another folder"
        with exclusive(parent / f"{LOCK}{self.path.name}", wait=False, busy=busy, remove=True):
            self._check_contents()  # again, under the lock: a run that held it may have written a result
            self._clean()
            stage = parent / f"{PARTIAL}{self.path.name}-{os.getpid()}-{secrets.token_hex(4)}"
            stage.mkdir()
            try:
                yield stage
                self._commit(stage)
            except BaseException:
                shutil.rmtree(stage, ignore_errors=True)
                raise

    def _commit(self, stage: Path) -> None:
        """Put the stage in place of the output: with Ctrl-C held back between the two renames, and the
        earlier output put back when the second fails, a reader finds the earlier output or the new one."""
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            if self.path.exists():
                old = stage.with_name(stage.name + _OLD)
                os.rename(self.path, old)
                try:
                    os.rename(stage, self.path)
                except BaseException:
                    os.rename(old, self.path)
                    raise
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.rename(stage, self.path)
            fsync_dir(self.path.parent)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
