"""`hteb-score compare` at scale: two cards of N synthetic STS datasets each (a leaderboard's worth and
far past it), the time compare takes per size and its growth from the smallest size to the largest.

The cards are schema-valid and built the way the comparison tests build theirs
(tests/score/report/cards.py `big_card`); past 50 datasets the HL interval is the normal
approximation's (what tests/score/report/test_bad_compare_inputs.py checks on 120 datasets).

    python bench/bench_compare.py [--sizes 120,1000,3003]
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import click
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "score" / "report"))
from cards import big_card, write_card  # noqa: E402

from hteb_score.cli import main as hteb_score  # noqa: E402


@click.command()
@click.option("--sizes", default="120,1000,3003", show_default=True, help="Comma-separated dataset counts.")
def main(sizes: str) -> None:
    timings = {}
    for n in (int(s) for s in sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="hteb-bench-compare-") as tmp:
            rng = np.random.default_rng(0)
            paths = [str(write_card(Path(tmp), big_card(f"m{i}", n, 1.0 + i, rng))) for i in range(2)]
            started = time.perf_counter()
            code = hteb_score(["compare", *paths, "--out", f"{tmp}/out", "--splits", "10"])
            timings[n] = time.perf_counter() - started
            if code != 0:
                raise SystemExit(f"compare failed on {n} datasets (exit {code})")
    smallest, largest = min(timings), max(timings)
    print(
        json.dumps(
            {
                "seconds_by_datasets": {str(n): round(s, 2) for n, s in timings.items()},
                "datasets_ratio": round(largest / smallest, 1),
                "time_ratio": round(timings[largest] / timings[smallest], 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
