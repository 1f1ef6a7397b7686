"""The folder of a run of work units (`hteb-score MODEL... --out DIR`): what the command was, and
each finished unit's part, kept so that the same command run again after a kill scores only what
is missing.

    DIR/hteb_run.json                        the command's settings (a run of other settings is refused)
    DIR/parts/<model>/<dataset>/hteb_part.json   one unit's part, written atomically as it finishes

The cards, the comparison and the report page are written beside them (cli/unit_run.py). Only the
process driving the run writes here (Ray workers return their parts to it), and one driver at a time.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.errors import HtebError
from hteb_contract.common.locks import exclusive
from hteb_score import __version__
from hteb_score.scoring.parts import PART_FILE, ScorePart, difference, read_part
from hteb_score.scoring.unit_scorer import WorkUnit

RUN_FILE = "hteb_run.json"
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
            folder._claim(json.loads(json.dumps(dict(settings))), overwrite)
            yield folder

    def _claim(self, settings: dict[str, Any], overwrite: bool) -> None:
        record = self.path / RUN_FILE
        wanted = {"format": FORMAT, "settings": settings}
        if record.is_file():
            try:
                found = json.loads(record.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError):
                found = None
            if found == wanted and not overwrite:
                return
            if not overwrite:
                why = difference(found, wanted) if isinstance(found, dict) else f"{RUN_FILE} is damaged"
                raise HtebError(f"--out {self.path} holds a run of other settings ({why}); "
                                "run the same command to resume it, pass --overwrite to start it again, or choose "
                                "another folder")
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
        """The part an earlier run of this command kept for `unit`, when it is whole and of this
        hteb-score (a damaged or foreign one is scored again)."""
        if not (self.part_folder(unit) / PART_FILE).is_file():
            return None
        try:
            part = read_part(self.part_folder(unit))
        except HtebError:
            return None
        if part.identity.hteb_score_version != __version__ or [u.dataset for u in part.units] != [unit.dataset]:
            return None
        return part

    def keep(self, unit: WorkUnit, part: ScorePart) -> Path:
        """Write `unit`'s part (atomically: a killed run leaves the old file or the new one)."""
        folder = self.part_folder(unit)
        folder.mkdir(parents=True, exist_ok=True)
        return part.write(folder)

