"""The tiny real generator run the pipeline and Ray tests share (one STS row, 3 transformations,
8 new tokens with SmolLM2), as a configuration and as the equivalent command line."""

from __future__ import annotations

import sqlite3
import subprocess
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from hteb_generate.setup.config import GenerateConfig, build_config

TRANSFORMATIONS = "paraphrasing,backtranslation,summarisation"


def fresh_cache(tmp: Path, smollm2_dir: Path) -> Path:
    """A fresh call cache that reuses the converted model (no second conversion)."""
    cache = tmp / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models" / smollm2_dir.name).symlink_to(smollm2_dir)
    return cache


def run_args(cache: Path, store: Path, data: Path, *extra: str) -> list[str]:
    return [
        "--seed",
        "1339",
        "--profile",
        "cpu",
        "--datasets",
        "STSBenchmark",
        "--transformations",
        TRANSFORMATIONS,
        "--max-texts",
        "2",
        "--max-tokens",
        "8",
        "--cache-dir",
        str(cache),
        "--store",
        str(store),
        "--data-dir",
        str(data),
        "--label",
        "t",
        "--batch-size",
        "4",
        "--manifest-md",
        str(store.parent / "MANIFEST.md"),
        *extra,
    ]


def run_config(cache: Path, store: Path, data: Path, **changes: Any) -> GenerateConfig:
    overrides = {
        "datasets": "STSBenchmark",
        "transformations": TRANSFORMATIONS,
        "max_texts": 2,
        "max_tokens": 8,
        "cache_dir": str(cache),
        "store": str(store),
        "data_dir": str(data),
        "label": "t",
        "batch_size": 4,
        "manifest_md": str(store.parent / "MANIFEST.md"),
    }
    return replace(build_config(seed="1339", profile="cpu", overrides=overrides), **changes)


def cached_calls(database: Path) -> int:
    """Answers committed to a call cache so far (0 while it is being created)."""
    if not database.is_file():
        return 0
    try:
        with sqlite3.connect(database) as db:
            return db.execute("SELECT count(*) FROM calls").fetchone()[0]
    except sqlite3.OperationalError:
        return 0


def wait_for_calls(database: Path, process: subprocess.Popen, count: int, timeout: float = 600) -> int:
    """Poll until `count` answers are committed (or the process ends); the number committed."""
    deadline = time.monotonic() + timeout
    rows = 0
    while rows < count and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        rows = cached_calls(database)
    return rows
