"""Run every benchmark in bench/ (files named bench_*.py), one after another, on demand.

Benchmarks print ratios measured within one run; they are not tests and assert nothing about
speed. `make bench` runs them all; `python bench/run.py NAME` runs bench_NAME.py only.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    scripts = sorted(HERE.glob("bench_*.py"))
    if argv:
        wanted = {f"bench_{name}.py" for name in argv}
        unknown = wanted - {s.name for s in scripts}
        if unknown:
            print(
                f"bench: unknown benchmark(s) {sorted(unknown)}; known: {[s.stem[6:] for s in scripts]}",
                file=sys.stderr,
            )
            return 2
        scripts = [s for s in scripts if s.name in wanted]
    failed = 0
    for script in scripts:
        print(f"== {script.name}", flush=True)
        failed += subprocess.call([sys.executable, str(script)]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
