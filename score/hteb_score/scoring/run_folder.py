"""The folder of a run of work units (`hteb-score MODEL... --out DIR`): what the command was, and
each finished unit's part, kept so that the same command run again after a kill scores only what
is missing.

    DIR/hteb_run.json                        the command's settings (a run of other settings is refused)
    DIR/parts/<model>/<dataset>/hteb_part.json   one unit's part, written atomically as it finishes
    DIR/parts/<model>/<dataset>/hteb_unit.json   the unit it was kept for, and its sha256

The cards, the comparison and the report page are written beside them (cli/unit_run.py). Only the
process driving the run writes here (Ray workers return their parts to it), and one driver at a time.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.errors import HtebError
from hteb_contract.common.locks import exclusive
from hteb_score import __version__
from hteb_score.scoring.parts import PART_FILE, ScorePart, difference, read_part
from hteb_score.scoring.unit_scorer import WorkUnit

RUN_FILE = "hteb_run.json"
UNIT_FILE = "hteb_unit.json"  # beside each part: the unit it was kept for
FORMAT = "hteb-score run/1"
PARTS = "parts"
LOCK = ".hteb-lock-run"


@dataclass(frozen=True)
class RunFolder:
    path: Path

    @classmethod
    @contextmanager
    def held(cls, path: Path, settings: Mapping[str, Any], *, overwrite: bool) -> Iterator[RunFolder]:
        """The run folder at `path` for a run of `settings`, held by this process for the block: new,
        empty, or one of the same settings (resumed); one of other settings is refused. With
        `overwrite`, a run folder's earlier run goes whole (its parts, cards and comparison) and the
        run starts again. Any other non-empty folder is refused."""
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        busy = f"another run is scoring into --out {path}; wait for it, or choose another folder"
        with exclusive(path / LOCK, wait=False, busy=busy, remove=True):
            folder = cls(path)
            folder._claim(json_input.plain(dict(settings)), overwrite)
            yield folder

    def _claim(self, settings: dict[str, Any], overwrite: bool) -> None:
        record = self.path / RUN_FILE
        wanted = {"format": FORMAT, "settings": settings}
        if record.is_file():
            try:
                found = json_input.read(record, HtebError)
            except HtebError:
                found = None
            if found == wanted and not overwrite:
                return
            if not overwrite:
                why = difference(found, wanted) if isinstance(found, dict) else f"{RUN_FILE} is damaged"
                raise HtebError(
                    f"--out {self.path} holds a run of other settings ({why}); "
                    "run the same command to resume it, pass --overwrite to start it again, or choose "
                    "another folder"
                )
            for entry in self.path.iterdir():  # started again: nothing of the earlier run stays
                if entry.is_dir():
                    shutil.rmtree(entry)
                elif entry.name != LOCK:
                    entry.unlink()
        elif any(p.name != LOCK for p in self.path.iterdir()):
            raise HtebError(f"--out {self.path} is a non-empty folder without {RUN_FILE}; choose a new or empty folder")
        atomic_write_text(record, json.dumps(wanted, indent=2, ensure_ascii=False) + "\n")

    def part_folder(self, unit: WorkUnit) -> Path:
        return self.path / PARTS / unit.model / unit.dataset

    def kept(self, unit: WorkUnit) -> ScorePart | None:
        """The part an earlier run of this command kept for `unit`, when it is whole, of this
        hteb-score and the one kept for this unit (a damaged or foreign one is scored again). A part
        that is whole but not the one this folder kept for the unit (parts swapped between models or
        datasets, or edited) is a one-line error: which model's results it holds is unknown."""
        folder = self.part_folder(unit)
        if not (folder / PART_FILE).is_file():
            return None
        try:
            part = read_part(folder)
        except HtebError:
            return None
        if part.identity.hteb_score_version != __version__ or [u.dataset for u in part.units] != [unit.dataset]:
            return None
        try:
            record = json_input.read(folder / UNIT_FILE, HtebError)
        except HtebError:
            return None  # killed between the part and its record: scored again
        wanted = self._record(unit, folder)
        differs = difference(record, wanted) if isinstance(record, dict) else f"{UNIT_FILE} is not an object"
        if differs is not None:
            raise HtebError(
                f"--out {self.path}: {folder.relative_to(self.path)} holds a part this run did not keep "
                f"for {unit.model} on {unit.dataset} ({differs}): swapped or edited; remove that "
                "folder to score the unit again"
            )
        return part

    def keep(self, unit: WorkUnit, part: ScorePart) -> Path:
        """Write `unit`'s part, then the record of which unit it is (each atomically: a killed run
        leaves the old file or the new one; a part without its record is scored again)."""
        folder = self.part_folder(unit)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / UNIT_FILE).unlink(missing_ok=True)
        path = part.write(folder)
        atomic_write_text(folder / UNIT_FILE, json.dumps(self._record(unit, folder)) + "\n")
        return path

    @staticmethod
    def _record(unit: WorkUnit, folder: Path) -> dict[str, str]:
        """Which unit the part in `folder` is: its model, its dataset and the sha256 of the part file."""
        digest = hashlib.sha256((folder / PART_FILE).read_bytes()).hexdigest()
        return {"model": unit.model, "dataset": unit.dataset, "part_sha256": digest}
