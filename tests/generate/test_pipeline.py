"""The generator end to end on real data and the real SmolLM2 (tiny: one STS row, 8 new tokens).

A run writes a schema-valid revision into a store; a rerun makes 0 LLM calls and yields the
same revision; the batch size does not change any output; kill -9 mid-run and rerun gives the
identical revision.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hteb_generate.run import pipeline
from hteb_generate.setup.config import build_config
from hteb_generate.setup.engine_plan import engine_slots
from hteb_generate.setup.machine import Facts
from hteb_generate.setup.placement import placement
from hteb_generate.engine import CallCache, ChatResult, Engine
from hteb_generate.run.pipeline import run
from hteb_generate.run.units import plan_units
from tiny_runs import TRANSFORMATIONS, fresh_cache, run_args, run_config, wait_for_calls
from hteb_contract.revision import Revision
from hteb_contract.specs.transformations import transformation_spec
from hteb_contract.stores import open_store

pytestmark = pytest.mark.xdist_group("pipeline-reference")

MTEB_NAMED = Path(__file__).resolve().parents[1] / "data" / "mteb-subsets"


class _Echo(Engine):
    """A stand-in model that needs no weights: echoes each text with a suffix, prefers "yes"; keeps
    every chat request it answered."""

    def __init__(self) -> None:
        self.requests = 0
        self.chats = []

    def chat_results(self, requests):
        self.requests += len(requests)
        self.chats += list(requests)
        return [ChatResult(r.messages[-1][1] + " indeed", "stop") for r in requests]

    def next_token_logprobs(self, conversations, candidates):
        self.requests += len(conversations)
        return [{c: -1.0 if c.strip().lower() == "yes" else -2.0 for c in candidates} for _ in conversations]


@pytest.mark.parametrize("judge, loaded", [("same", 1), ("other", 2), ("none", 1)])
def test_judge_role_and_counters_over_the_distinct_engines(tmp_path, shared_data, monkeypatch, judge, loaded):
    models = _fake_models(tmp_path)
    engines: list[_Echo] = []

    def load(name, **options):
        assert name == "transformers" and options["batch_size"] == 4
        engines.append(_Echo())
        return engines[-1]

    monkeypatch.setattr(pipeline, "create_engine", load)
    judge_model = {"same": models["a"], "other": models["b"], "none": "none"}[judge]
    cfg = _paraphrase_config(tmp_path, shared_data, model=models["a"], judge_model=judge_model, batch_size=4)
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


def _paraphrase_config(tmp_path: Path, shared_data: Path, **overrides):
    """The CPU profile paraphrasing two STSBenchmark texts into `tmp_path` (a stand-in engine answers)."""
    given = {
        "datasets": "STSBenchmark",
        "transformations": "paraphrasing",
        "max_texts": 2,
        "cache_dir": str(tmp_path / "cache"),
        "store": str(tmp_path / "store"),
        "data_dir": str(shared_data),
        "label": "t",
        "manifest_md": str(tmp_path / "MANIFEST.md"),
    }
    return build_config(seed="1339", profile="cpu", overrides={**given, **overrides})


def _fake_models(tmp_path: Path) -> dict[str, str]:
    """Two model folders the model registry accepts (a config.json each); _Echo stands in for both."""
    models = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "config.json").write_text("{}")
        models[name] = str((tmp_path / name).resolve())
    return models


def test_each_text_of_a_cross_lingual_pair_keeps_its_language_through_every_stage(tmp_path, monkeypatch):
    """A source folder in mteb's subset naming (en-de, en-en, en, en-ext) through the CPU profile's code path
    (local sources, sampling, units, transform, judge, records, revision) with a stand-in engine: the German
    side of an en-de pair is planned, prompted, recorded and judged as German, the English side as English."""
    models = _fake_models(tmp_path)
    engines: list[_Echo] = []
    monkeypatch.setattr(pipeline, "create_engine", lambda name, **options: engines.append(_Echo()) or engines[-1])
    cfg = build_config(
        seed="1339",
        profile="cpu",
        overrides={
            "transformations": "paraphrasing,backtranslation,translation,cross_translation",
            "max_texts": 16,
            "cache_dir": str(tmp_path / "cache"),
            "store": str(tmp_path / "store"),
            "label": "t",
            "model": models["a"],
            "judge_model": models["a"],
            "manifest_md": str(tmp_path / "MANIFEST.md"),
        },
    )
    # The folders are not registry entries: config validation (its own module) only knows registered names.
    cfg = replace(cfg, datasets=("STSBCrossLingual", "Banking77Ext"), data_dir=str(MTEB_NAMED))
    units, items = plan_units(
        cfg,
        {
            n: pipeline.load_source(
                cfg.dataset_spec(n), source="local", data_dir=MTEB_NAMED, sample=cfg.sample, max_texts=cfg.max_texts
            )
            for n in cfg.datasets
        },
    )
    pair = {(i.transformation, i.ref.field): i.unit.plan for i in items if i.ref.item_id == "stsb-test-0-en-de"}
    assert {(f, p.source) for (t, f), p in pair.items()} == {("sentence1", "eng"), ("sentence2", "deu")}
    assert pair[("translation", "sentence2")].target not in ("deu", None)
    assert pair[("backtranslation", "sentence2")].pivot not in ("deu", None)
    assert pair[("cross_translation", "sentence2")].target not in ("deu", None)

    manifest = run(cfg, log=lambda m: None).manifest
    (engine,) = engines  # the judge is the generator's engine
    sources = {s["name"]: s for s in manifest["sources"]}
    assert sources["STSBCrossLingual"]["subsets"] == {"en-de": ["eng", "deu"], "en-en": ["eng"]}
    assert sources["STSBCrossLingual"]["origin"] == "local/STSBCrossLingual"
    revision = open_store(str(cfg.store)).fetch("t")
    records = {
        t: {(r.item_id, r.field): r for r in revision.items("STSBCrossLingual", t, 1339)}
        for t in ("paraphrasing", "backtranslation", "translation", "cross_translation")
    }
    first, second = (
        records["paraphrasing"][("stsb-test-0-en-de", "sentence1")],
        records["paraphrasing"][("stsb-test-0-en-de", "sentence2")],
    )
    assert (first.subset, first.source_language, second.subset, second.source_language) == (
        "en-de",
        "eng",
        "en-de",
        "deu",
    )
    assert {r.source_language for (i, f), r in records["paraphrasing"].items() if not i.endswith("en-de")} == {"eng"}
    for transformation in ("translation", "cross_translation"):
        assert all(r.target_language != r.source_language for r in records[transformation].values())
    assert all(r.intermediate_language != r.source_language for r in records["backtranslation"].values())
    assert {(r.subset, r.source_language) for r in revision.items("Banking77Ext", "paraphrasing", 1339)} == {
        ("en", "eng"),
        ("en-ext", "eng"),
    }
    assert revision.source("STSBCrossLingual").info.subsets == {"en-de": ("eng", "deu"), "en-en": ("eng",)}

    def rephrase_prompts(text: str) -> list[str]:
        return [r.messages[0][1] for r in engine.chats if r.messages[-1][1] == text and "Rephrase" in r.messages[0][1]]

    german = second.original_text  # paraphrasing answers in the text's own language
    assert rephrase_prompts(german) and all("Rephrase the text in German" in p for p in rephrase_prompts(german))
    english = rephrase_prompts(first.original_text)
    assert english and all("Rephrase the text in English" in p for p in english)
    judged = [r.messages[0][1] for r in engine.chats if f"\n{german}\n" in r.messages[0][1]]
    assert judged and all("(language code deu)" in p for p in judged)  # the judge is told the German side is German
    paraphrase_judged = [p for p in judged if transformation_spec("paraphrasing").judge_task in p]
    assert len(paraphrase_judged) == 1 and "expected language code deu" in paraphrase_judged[0]


@pytest.mark.parametrize("engine, batching", [("transformers", {"batch_size": 4}), ("vllm", {})])
def test_batch_size_reaches_only_a_backend_that_batches_itself(tmp_path, shared_data, monkeypatch, engine, batching):
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    cfg = build_config(
        seed="1",
        profile="cpu",
        overrides={
            "engine": engine,
            "model": str(tmp_path / "model"),
            "judge_model": "none",
            "batch_size": 4,
            "cache_dir": str(tmp_path / "cache"),
            "store": str(tmp_path / "store"),
            "data_dir": str(shared_data),
        },
    )
    calls = []
    monkeypatch.setattr(pipeline, "create_engine", lambda name, **options: calls.append((name, options)) or _Echo())
    facts = Facts()
    (slot,) = engine_slots(cfg, facts)
    pipeline._engine(cfg, slot, CallCache(tmp_path / "calls.sqlite"), placement(cfg, facts), facts).inner
    folder = str((tmp_path / "model").resolve())
    assert calls == [(engine, {"model_path": folder, "model_id": folder, "revision": "local", **batching})]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, smollm2_dir, shared_data):
    tmp = tmp_path_factory.mktemp("reference")
    cache, store = fresh_cache(tmp, smollm2_dir), tmp / "store"
    cfg = run_config(cache, store, shared_data)
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
        source.eval_rows()[0]["sentence1"],
        source.eval_rows()[0]["sentence2"],
    ]
    card = (revision.root / "README.md").read_text(encoding="utf-8")
    assert "configs:" in card and "| dataset | transformation | n | ident." in card and "## Judge scores" in card
    counters = result.manifest["counters"]
    assert counters["items"] == 6 and counters["llm_calls"] > 0
    assert counters["retries"] == sum(
        len(i.attempts) - 1 for t in TRANSFORMATIONS.split(",") for i in revision.items("STSBenchmark", t, 1339)
    )


def test_rerun_makes_no_llm_call_and_gives_the_same_revision(reference):
    cfg, first = reference
    again = run(cfg, log=lambda m: None)
    assert again.manifest["counters"]["llm_calls"] == 0
    assert (
        again.manifest["counters"]["cache_hits"]
        == first.manifest["counters"]["llm_calls"] + first.manifest["counters"]["cache_hits"]
    )
    assert again.manifest["content_hash"] == first.manifest["content_hash"]
    assert again.manifest["created"] == first.manifest["created"]
    assert again.published.created is False


def test_batch_size_does_not_change_any_output(reference, tmp_path, smollm2_dir, shared_data):
    cfg, first = reference
    other = run(
        replace(cfg, cache_dir=str(fresh_cache(tmp_path, smollm2_dir)), batch_size=1, publish=False), log=lambda m: None
    )
    assert other.manifest["content_hash"] == first.manifest["content_hash"]


def test_kill_9_mid_run_then_rerun_gives_the_identical_revision(reference, tmp_path, smollm2_dir, shared_data):
    cfg, first = reference
    cache, store = fresh_cache(tmp_path, smollm2_dir), tmp_path / "store"
    command = [sys.executable, "-c", "from hteb_generate.cli import main; main()", *run_args(cache, store, shared_data)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for_calls(cache / "calls.sqlite", process, 3)
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


class _Profiled(_Echo):
    """An engine that, once loaded, found a KV cache of `tokens` (as vLLM's does by profiling)."""

    def __init__(self, tokens: int) -> None:
        super().__init__()
        self.tokens = tokens

    def facts(self):
        return [{"kv_cache_tokens": self.tokens}]


def test_the_manifest_records_the_kv_cache_each_engine_found_and_a_cached_rerun_keeps_it(
    tmp_path, shared_data, monkeypatch
):
    """vLLM sizes its KV cache by profiling the memory it may use, and that size decides when a batch is
    preempted, so it is part of what a GPU regeneration must match: the manifest's runtime records each engine's,
    one per copy; a rerun that loads no model (every answer cached) keeps what the last start found; a start
    that finds another says so and the manifest records the new one."""
    models = _fake_models(tmp_path)
    sizes = iter([4096, 8192, 2048])
    monkeypatch.setattr(pipeline, "create_engine", lambda name, **options: _Profiled(next(sizes)))
    cfg = _paraphrase_config(tmp_path, shared_data, model=models["a"], judge_model=models["b"], publish=False)

    def engines_of(manifest: dict) -> dict[str, list[int] | None]:
        return {e["model_id"]: e.get("kv_cache_tokens") for e in manifest["runtime"]["engines"]}

    first = run(cfg, log=lambda m: None).manifest
    assert engines_of(first) == {models["a"]: [4096], models["b"]: [8192]}
    said: list[str] = []
    again = run(cfg, log=said.append).manifest  # every answer cached: no engine loads
    assert again["counters"]["llm_calls"] == 0 and again["runtime"] == first["runtime"]
    assert not any("found" in line for line in said)
    (tmp_path / "cache" / "calls.sqlite").unlink()  # the answers gone: the generator loads again
    for path in (tmp_path / "cache").glob("calls.sqlite-*"):
        path.unlink()
    monkeypatch.setattr(pipeline, "create_engine", lambda name, **options: _Profiled(2048))
    said.clear()
    third = run(cfg, log=said.append).manifest
    assert engines_of(third) == {models["a"]: [2048], models["b"]: [2048]}
    assert any(f"{models['a']}'s engine found" in line and "4096" in line for line in said), said
