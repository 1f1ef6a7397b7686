"""The generator end to end on real data and the real SmolLM2 (tiny: one STS row, 8 new tokens).

A run writes a schema-valid revision into a store; a rerun makes 0 LLM calls and yields the
same revision; the batch size does not change any output; kill -9 mid-run and rerun gives the
identical revision.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hteb_generate import pipeline
from hteb_generate.config import build_config
from hteb_generate.doctor import Facts, engine_slots
from hteb_generate.engine import CallCache, ChatResult
from hteb_generate.pipeline import run
from hteb_contract.revision import Revision
from hteb_contract.stores import open_store

TRANSFORMATIONS = "paraphrasing,backtranslation,summarisation"


def _cache(tmp: Path, smollm2_dir: Path) -> Path:
    """A fresh call cache that reuses the converted model (no second conversion)."""
    cache = tmp / "cache"
    (cache / "models").mkdir(parents=True)
    (cache / "models" / smollm2_dir.name).symlink_to(smollm2_dir)
    return cache


def _args(cache: Path, store: Path, data: Path, *extra: str) -> list[str]:
    return ["--seed", "1339", "--profile", "cpu", "--datasets", "STSBenchmark", "--transformations", TRANSFORMATIONS,
            "--max-texts", "2", "--max-tokens", "8", "--cache-dir", str(cache), "--store", str(store),
            "--data-dir", str(data), "--label", "t", "--batch-size", "4", "--manifest-md", str(store.parent / "MANIFEST.md"),
            *extra]


def _config(cache: Path, store: Path, data: Path, **changes):
    overrides = {"datasets": "STSBenchmark", "transformations": TRANSFORMATIONS, "max_texts": 2, "max_tokens": 8,
                 "cache_dir": str(cache), "store": str(store), "data_dir": str(data), "label": "t", "batch_size": 4,
                 "manifest_md": str(store.parent / "MANIFEST.md")}
    return replace(build_config(seed="1339", profile="cpu", overrides=overrides), **changes)


class _Echo:
    """A stand-in model that needs no weights: echoes each text with a suffix, prefers "yes"."""

    def __init__(self) -> None:
        self.requests = 0

    def chat_results(self, requests):
        self.requests += len(requests)
        return [ChatResult(r.messages[-1][1] + " indeed", "stop") for r in requests]

    def next_token_logprobs(self, conversations, candidates):
        self.requests += len(conversations)
        return [{c: -1.0 if c.strip().lower() == "yes" else -2.0 for c in candidates} for _ in conversations]


@pytest.mark.parametrize("judge, loaded", [("same", 1), ("other", 2), ("none", 1)])
def test_judge_role_and_counters_over_the_distinct_engines(tmp_path, shared_data, monkeypatch, judge, loaded):
    models = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text("{}")
        models[name] = str((tmp_path / name).resolve())
    engines: list[_Echo] = []

    def load(name, **options):
        assert name == "transformers" and options["batch_size"] == 4
        engines.append(_Echo())
        return engines[-1]

    monkeypatch.setattr(pipeline, "create_engine", load)
    judge_model = {"same": models["a"], "other": models["b"], "none": "none"}[judge]
    cfg = build_config(seed="1339", profile="cpu", overrides={
        "datasets": "STSBenchmark", "transformations": "paraphrasing", "max_texts": 2, "batch_size": 4,
        "cache_dir": str(tmp_path / "cache"), "store": str(tmp_path / "store"), "data_dir": str(shared_data),
        "label": "t", "manifest_md": str(tmp_path / "MANIFEST.md"), "model": models["a"], "judge_model": judge_model,
    })
    manifest = run(cfg, log=lambda m: None).manifest
    counters = manifest["counters"]
    assert len(engines) == loaded
    assert counters["llm_calls"] == sum(e.requests for e in engines) and counters["cache_hits"] == 0
    judge_id = None if judge == "none" else judge_model
    assert (manifest["judge"] or {}).get("model_id") == judge_id
    assert manifest["generator"]["model_id"] == models["a"]
    items = open_store(str(cfg.store)).fetch("t").items("STSBenchmark", "paraphrasing", 1339)
    assert {i.judge.model for i in items} == {judge_id}
    assert all((i.judge.parapluie is None) == (judge == "none") for i in items)


@pytest.mark.parametrize("engine, batching", [("transformers", {"batch_size": 4}), ("vllm", {})])
def test_batch_size_reaches_only_a_backend_that_batches_itself(tmp_path, shared_data, monkeypatch, engine, batching):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    cfg = build_config(seed="1", profile="cpu", overrides={
        "engine": engine, "model": str(tmp_path / "model"), "judge_model": "none", "batch_size": 4,
        "cache_dir": str(tmp_path / "cache"), "store": str(tmp_path / "store"), "data_dir": str(shared_data),
    })
    calls = []
    monkeypatch.setattr(pipeline, "create_engine", lambda name, **options: calls.append((name, options)) or _Echo())
    (slot,) = engine_slots(cfg, Facts())
    pipeline._engine(cfg, slot, CallCache(tmp_path / "calls.sqlite")).inner
    folder = str((tmp_path / "model").resolve())
    assert calls == [(engine, {"model_path": folder, "model_id": folder, "revision": "local", **batching})]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, smollm2_dir, shared_data):
    tmp = tmp_path_factory.mktemp("reference")
    cache, store = _cache(tmp, smollm2_dir), tmp / "store"
    cfg = _config(cache, store, shared_data)
    first = run(cfg, log=lambda m: None)
    return cfg, first


def test_run_publishes_a_valid_revision_with_attempts_errors_and_judge(reference):
    cfg, result = reference
    revision = open_store(str(cfg.store)).fetch("t")
    assert revision.manifest["content_hash"] == result.manifest["content_hash"]
    assert revision.dataset_names() == ["STSBenchmark"]
    assert revision.variants("STSBenchmark") == [(t, 1339) for t in TRANSFORMATIONS.split(",")]
    items = revision.items("STSBenchmark", "backtranslation", 1339)
    assert len(items) == 2 and {i.field for i in items} == {"sentence1", "sentence2"}
    for item in items:
        assert item.intermediate_language in {"spa", "fra", "deu", "tur", "ara"}
        assert all(len(a.steps) == 2 for a in item.attempts)
        assert item.transformed_text == next((a for a in item.attempts if not a.errors), item.attempts[-1]).output
        assert item.fallback == all(a.errors for a in item.attempts)
        assert item.judge.model and (item.judge.parapluie is not None)
    source = revision.source("STSBenchmark")
    assert [i.original_text for i in sorted(items, key=lambda i: i.field)] == [
        source.eval_rows()[0]["sentence1"], source.eval_rows()[0]["sentence2"]]
    card = (revision.root / "README.md").read_text(encoding="utf-8")
    assert "configs:" in card and "| dataset | transformation | n | ident." in card and "## Judge scores" in card
    counters = result.manifest["counters"]
    assert counters["items"] == 6 and counters["llm_calls"] > 0
    assert counters["retries"] == sum(len(i.attempts) - 1 for t in TRANSFORMATIONS.split(",")
                                      for i in revision.items("STSBenchmark", t, 1339))


def test_rerun_makes_no_llm_call_and_gives_the_same_revision(reference):
    cfg, first = reference
    again = run(cfg, log=lambda m: None)
    assert again.manifest["counters"]["llm_calls"] == 0
    assert again.manifest["counters"]["cache_hits"] == first.manifest["counters"]["llm_calls"] + first.manifest["counters"]["cache_hits"]
    assert again.manifest["content_hash"] == first.manifest["content_hash"]
    assert again.manifest["created"] == first.manifest["created"]
    assert again.published.created is False


def test_batch_size_does_not_change_any_output(reference, tmp_path, smollm2_dir, shared_data):
    cfg, first = reference
    other = run(replace(cfg, cache_dir=str(_cache(tmp_path, smollm2_dir)), batch_size=1, publish=False),
                log=lambda m: None)
    assert other.manifest["content_hash"] == first.manifest["content_hash"]


def test_kill_9_mid_run_then_rerun_gives_the_identical_revision(reference, tmp_path, smollm2_dir, shared_data):
    cfg, first = reference
    cache, store = _cache(tmp_path, smollm2_dir), tmp_path / "store"
    command = [sys.executable, "-c", "from hteb_generate.cli import main; main()",
               *_args(cache, store, shared_data)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    database, rows = cache / "calls.sqlite", 0
    deadline = time.monotonic() + 600
    while rows < 3 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
        if database.is_file():
            try:
                with sqlite3.connect(database) as db:
                    rows = db.execute("SELECT count(*) FROM calls").fetchone()[0]
            except sqlite3.OperationalError:
                rows = 0
    assert process.poll() is None, "the run finished before it could be killed"
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    assert not (store / "labels" / "t.json").exists()
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    label, digest = done.stdout.split()
    assert digest == first.manifest["content_hash"]
    manifest = json.loads(next((store / "objects").iterdir()).joinpath("manifest.json").read_text())
    assert 0 < manifest["counters"]["cache_hits"] and manifest["counters"]["llm_calls"] > 0
    rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0 and "0 LLM calls" in rerun.stderr
    assert Revision.open(next((store / "objects").iterdir())).manifest["content_hash"] == digest
