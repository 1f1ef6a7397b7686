"""Reading a revision starts none of Arrow's pool threads.

A pool thread that drops the last hold on a Python buffer (the verified bytes of a file) while the
interpreter exits aborts the process: "terminate called without an active exception", exit -6, after a
run that succeeded (CI, docs/formats.md's example, 1 run in about 200 under load). It cannot happen to a
thread that never starts, so the test reads every file of the bundled revision from its bytes, as the
contract reads verified files, in a fresh interpreter, and counts the process's threads (Linux's
/proc/self/task) before and after. It then reads once with Arrow's threads to show the count sees them.
(A file read from its path may start Arrow's I/O thread; that thread holds no Python object.)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import json, os, sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from hteb_contract.parquet_io import read_parquet_rows, read_parquet_table
from hteb_contract.revision import Revision
from hteb_contract.views import revision_folder, side_by_side

def threads():
    return len(os.listdir("/proc/self/task"))

store, label = sys.argv[1], sys.argv[2]
before = threads()
folder = revision_folder(store, label)
revision = Revision.open(folder)
read = 0
for name in revision.dataset_names():
    read += sum(1 for _ in revision.source(name).iter_texts())
    for transformation, seed in revision.variants(name):
        read += len(revision.items(name, transformation, seed))
        side_by_side(revision, name, f"{transformation}_{seed}")
files = sorted(folder.rglob("*.parquet"))
for path in files:
    read_parquet_rows(path.read_bytes(), str(path))
after = threads()
with pq.ParquetFile(pa.BufferReader(files[0].read_bytes())) as handle:
    handle.read(use_threads=True)
print(json.dumps({"before": before, "after": after, "threaded": threads(), "files": len(files), "read": read}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads in Linux's /proc")
def test_reading_a_revision_starts_no_arrow_pool_thread() -> None:
    from hteb_score import SAMPLE_REVISION, SAMPLE_STORE

    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(SAMPLE_STORE), SAMPLE_REVISION],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads(done.stdout.splitlines()[-1])
    assert counts["files"] > 10 and counts["read"] > 400, counts
    assert counts["after"] == counts["before"], counts
    assert counts["threaded"] > counts["after"], f"the count does not see Arrow's pool threads: {counts}"
