"""The lock-file door (hteb_contract/common/locks.py) on generated schedules: real processes, released together,
each take one lock file in turn as a generated list of steps says (waiting for it or not, removing the file on
release or not, holding it a few milliseconds), and never are two inside at once; a process that does not
wait is refused in one line naming the holder's pid, and every step that waits gets the lock."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from fuzz import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.common.locks import Busy, exclusive
from together import run_together

#: One step: whether it waits for the lock, whether it removes the lock file on release, how long it holds (ms).
STEPS = st.tuples(st.booleans(), st.booleans(), st.integers(0, 3))
SCHEDULES = st.lists(st.lists(STEPS, min_size=1, max_size=5), min_size=2, max_size=4)
BUSY = re.compile(r"busy \(process (\d+|unknown) holds the lock\)")


def _worker(args: list[str]) -> None:
    """Take the lock at args[0] as the steps in args[2] say; args[1] is the marker only a holder may make."""
    lock, inside = Path(args[0]), Path(args[1])
    held = refused = 0
    for wait, remove, hold_ms in json.loads(args[2]):
        try:
            with exclusive(lock, wait=wait, busy="busy", remove=remove):
                os.close(os.open(inside, os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # FileExistsError: two inside
                time.sleep(hold_ms / 1000)
                os.unlink(inside)
                held += 1
        except Busy as err:
            assert not wait and BUSY.fullmatch(str(err)), str(err)
            refused += 1
    print(json.dumps([held, refused]))


@settings(max_examples=examples(30), deadline=None)
@given(SCHEDULES)
def test_two_processes_never_hold_one_lock_at_once(tmp_path_factory, schedules):
    folder = tmp_path_factory.mktemp("lock")
    commands = [[str(folder / "sub" / "the.lock"), str(folder / "inside"), json.dumps(steps)] for steps in schedules]
    finished = run_together(_worker, commands, folder / "logs", timeout=60)
    assert [one.status for one in finished] == [0] * len(schedules), [one.output for one in finished]
    for one, steps in zip(finished, schedules):
        held, refused = json.loads(one.output.strip().splitlines()[-1])
        assert held + refused == len(steps) and held >= sum(wait for wait, _, _ in steps)
    assert not (folder / "inside").exists()
