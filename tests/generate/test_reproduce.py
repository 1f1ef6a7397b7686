"""A regeneration on another machine: `hteb-generate` keeps the published revision when its run
reproduces it (texts identical, ParaPLUIE within the tolerance) and exits 2 naming the differences
when it does not; `hteb-generate reproduce` regenerates a published revision and reports.

"Another machine" is a weight-free engine whose log p("yes") is moved by `shift`: the texts it writes
are the same on every run, its ParaPLUIE values move as last-bit differences move them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_contract.errors import HtebError, StoreError
from hteb_contract.revision import Revision
from hteb_contract.stores import open_store
from hteb_contract.validation import validate
from hteb_generate.run import pipeline
from hteb_generate.cli import main
from hteb_generate.setup.config import build_config
from hteb_generate.engine import ChatResult, Engine
from hteb_generate.revision.reproduce import rebuild_config

SMALL = 0.0012  # moves every rounded ParaPLUIE by one or two 3-decimal steps
LARGE = 0.01


class _Machine(Engine):
    """Echoes each text; its log p("yes") is -1 + shift, every other candidate -2."""

    def __init__(self, shift: float) -> None:
        self.shift = shift

    def chat_results(self, requests):
        return [ChatResult(f"{r.messages[-1][1]} again", "stop") for r in requests]

    def next_token_logprobs(self, conversations, candidates):
        return [
            {c: -1.0 + self.shift if c.strip().lower() == "yes" else -2.0 for c in candidates} for _ in conversations
        ]


def _on(monkeypatch: pytest.MonkeyPatch, shift: float | None) -> list[dict]:
    """Runs from now on use a machine with this shift (None: loading any engine fails the test); the
    options of each engine loaded are appended to the list returned."""
    loaded: list[dict] = []

    def load(name, **options):
        assert shift is not None, "an engine was loaded"
        loaded.append(options)
        return _Machine(shift)

    monkeypatch.setattr(pipeline, "create_engine", load)
    return loaded


def _run_args(root: Path, data: Path, cache: str) -> list[str]:
    return [
        "--seed",
        "1339",
        "--profile",
        "cpu",
        "--datasets",
        "STSBenchmark,MasakhaNEWS",
        "--transformations",
        "paraphrasing",
        "--max-texts",
        "2",
        "--model",
        str(root / "model"),
        "--judge-model",
        str(root / "model"),
        "--cache-dir",
        str(root / cache),
        "--store",
        str(root / "store"),
        "--data-dir",
        str(data),
        "--label",
        "t",
        "--manifest-md",
        str(root / "MANIFEST.md"),
    ]


def _config(root: Path, data: Path, cache: str):
    args = dict(zip(*[iter(_run_args(root, data, cache))] * 2))
    overrides = {k.lstrip("-").replace("-", "_"): v for k, v in args.items() if k not in ("--seed", "--profile")}
    return build_config(seed="1339", profile="cpu", overrides={**overrides, "max_texts": 2})


def _main(*args: str) -> int:
    """The CLI in this process (so the stand-in engine is used): its exit status."""
    try:
        main(list(args))
    except SystemExit as done:
        return int(done.code)
    return 0


@pytest.fixture(scope="module")
def published(tmp_path_factory, shared_data):
    """A revision published by the first machine (shift 0): (root, manifest)."""
    root = tmp_path_factory.mktemp("repro")
    (root / "model").mkdir()
    (root / "model" / "config.json").write_text("{}")
    with pytest.MonkeyPatch.context() as monkeypatch:
        _on(monkeypatch, 0.0)
        pipeline.run(_config(root, shared_data, "cache-first"), log=lambda m: None)
    return root, open_store(str(root / "store")).fetch("t").manifest


def test_a_run_that_reproduces_keeps_the_published_revision(published, shared_data, monkeypatch):
    root, theirs = published
    _on(monkeypatch, SMALL)
    lines: list[str] = []
    result = pipeline.run(_config(root, shared_data, "cache-small"), log=lines.append)
    staged = Revision.open(result.folder)
    assert staged.manifest["content_hash"] != theirs["content_hash"]  # the label conflicts ...
    assert result.manifest == theirs  # ... and the published one stays
    assert result.published.created is False
    assert result.published.revision_id == theirs["content_hash"]
    (line,) = [m for m in lines if "reproduces" in m]
    assert (
        line.startswith(
            f"label t: this run reproduces the published revision {theirs['content_hash'][:12]} (texts identical; "
        )
        and "judge values within the tolerance: ParaPLUIE ±0.002" in line
    )
    assert open_store(str(root / "store")).labels() == ["t"] and len(list((root / "store" / "objects").iterdir())) == 1
    assert theirs["content_hash"] in (root / "MANIFEST.md").read_text()


def test_a_run_beyond_the_tolerance_exits_2_in_one_line_and_keeps_its_revision(
    published, shared_data, monkeypatch, capsys
):
    root, theirs = published
    _on(monkeypatch, LARGE)
    assert _main(*_run_args(root, shared_data, "cache-large")) == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(
        f"error: label 't' already holds other content ({theirs['content_hash'][:12]}) that this "
        "run does not reproduce ("
    )
    assert "judge.parapluie: ours " in error and "publish it under a new label" in error
    assert (
        "settings that differ from the published run: none of the recorded settings differ (not recorded, so "
        "check them yourself: --batch-size, and whether either run was resumed)"
    ) in error
    kept = Path(error.split("this run's revision is kept at ")[1].split(":")[0])
    assert Revision.open(kept).manifest["content_hash"] != theirs["content_hash"]
    assert open_store(str(root / "store")).fetch("t").manifest["content_hash"] == theirs["content_hash"]


def test_a_published_revision_of_an_older_format_is_a_one_line_conflict(published, shared_data, monkeypatch, tmp_path):
    root, theirs = published
    store = tmp_path / "store"
    shutil.copytree(root / "store", store)
    manifest = store / "objects" / theirs["content_hash"] / "manifest.json"
    manifest.chmod(0o644)
    manifest.write_text(json.dumps({**theirs, "schema_version": "hteb.manifest/1"}))
    _on(monkeypatch, SMALL)
    with pytest.raises(StoreError) as err:
        pipeline.run(replace(_config(root, shared_data, "cache-old"), store=str(store)), log=lambda m: None)
    message = str(err.value)
    assert message.startswith("label 't' already holds a revision this run cannot compare with (")
    assert "schema version 'hteb.manifest/1' is not supported" in message and "\n" not in message
    kept = Path(message.split("this run's revision is kept at ")[1].split(":")[0])
    assert Revision.open(kept).label == "t"


@pytest.mark.parametrize("shift, status", [(SMALL, 0), (LARGE, 1)])
def test_reproduce_regenerates_and_reports(published, shared_data, monkeypatch, capsys, tmp_path, shift, status):
    root, theirs = published
    loaded = _on(monkeypatch, shift)
    report_path = tmp_path / "report.json"
    assert (
        _main(
            "reproduce",
            "--store",
            str(root / "store"),
            "--revision",
            "t",
            "--cache-dir",
            str(tmp_path / "c"),
            "--data-dir",
            str(shared_data),
            "--threads",
            "1",
            "--json",
            str(report_path),
        )
        == status
    )
    out = capsys.readouterr().out
    report = json.loads(report_path.read_text())
    validate("reproduction", report, what="report")
    assert report["reproduced"] is (status == 0) and report["reference"]["content_hash"] == theirs["content_hash"]
    assert report["records_compared"] == theirs["counters"]["items"] and report["missing"] == report["extra"] == 0
    if status == 0:
        assert report["within_tolerance"] > 0 and report["differing"] == 0
        assert out.startswith(f"t ({theirs['content_hash'][:12]}) reproduced by t (")
    else:
        assert report["differing"] > 0 and {d["what"] for d in report["differences"]} == {"judge.parapluie"}
        assert "NOT reproduced" in out and "judge.parapluie: ours" in out
    assert open_store(str(root / "store")).labels() == ["t"]  # nothing published
    assert [o["threads"] for o in loaded] == [1]  # this machine's option reached the engine


def test_reproduce_a_candidate_folder_loads_no_model(published, monkeypatch, capsys, tmp_path):
    root, theirs = published
    _on(monkeypatch, None)
    folder = root / "store" / "objects" / theirs["content_hash"]
    assert (
        _main(
            "reproduce",
            "--store",
            str(root / "store"),
            "--revision",
            theirs["content_hash"][:12],
            "--candidate",
            str(folder),
            "--json",
            str(tmp_path / "r.json"),
        )
        == 0
    )
    assert "reproduced" in capsys.readouterr().out
    assert json.loads((tmp_path / "r.json").read_text())["identical"] == theirs["counters"]["items"]
    assert _main("reproduce", "--store", str(root / "store"), "--revision", "t", "--candidate", str(tmp_path)) == 2
    assert capsys.readouterr().err.strip() == f"error: {tmp_path}: no manifest.json (not an HTEB revision)"


ENTRY = "from hteb_generate.cli import main; main()"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--revision", "nope"], "error: no revision 'nope' in store"),
        (
            ["--revision", "t", "--parapluie-tolerance", "-1"],
            "error: --parapluie-tolerance must be a finite number of at least 0",
        ),
    ],
)
def test_reproduce_bad_input_is_one_line_exit_2(published, tmp_path, args, message):
    root, _ = published
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "reproduce", "--store", str(root / "store"), *args],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env=dict(os.environ),
    )
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and done.stderr.startswith(message), done.stderr


def test_reproduce_unknown_store_is_one_line_exit_2(tmp_path, capsys):
    assert _main("reproduce", "--store", "ftp://host/x", "--revision", "t") == 2
    assert capsys.readouterr().err == (
        "error: unknown store scheme 'ftp' in 'ftp://host/x': use a path, file://PATH or hf://OWNER/NAME\n"
    )


def test_the_run_is_rebuilt_from_the_manifest_alone(published, shared_data, tmp_path):
    root, theirs = published
    config = rebuild_config(
        theirs,
        store="hf://o/n",
        machine={
            "cache_dir": str(tmp_path),
            "data_dir": str(shared_data),
            "batch_size": 1,
            "engine_options": {"threads": 1},
        },
    )
    assert (
        config.config_hash() == theirs["config_hash"]
        and config.content_config() == _config(root, shared_data, "x").content_config()
    )
    assert (config.profile, config.publish, config.label, config.store, config.batch_size) == (
        "cpu",
        False,
        "t",
        "hf://o/n",
        1,
    )
    with pytest.raises(HtebError, match=r"prompt_set_sha256 is '[0-9a-f]{64}' here, 'ab' in the revision"):
        rebuild_config(
            {**theirs, "config": {**theirs["config"], "prompt_set_sha256": "ab"}},
            store="s",
            machine={"cache_dir": str(tmp_path), "data_dir": str(shared_data)},
        )
    with pytest.raises(HtebError, match=r"settings this version does not know \(beam_width\)"):
        rebuild_config({**theirs, "config": {**theirs["config"], "beam_width": 4}}, store="s")
    lacking = {k: v for k, v in theirs["config"].items() if k != "max_tokens"}
    with pytest.raises(HtebError, match="whose config lacks max_tokens"):
        rebuild_config({**theirs, "config": lacking}, store="s")


def test_reproduce_against_a_hub_revision(published, shared_data, monkeypatch, capsys, tmp_path):
    """The Hub store through the same command, offline: the tag `t` in a Hugging Face cache laid out as
    snapshot_download leaves it; the candidate is another machine's staged regeneration."""
    root, theirs = published
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hf" / "datasets--hteb--test-revisions"
    shutil.copytree(root / "store" / "objects" / theirs["content_hash"], repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "t").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HTEB_HF_CACHE", str(tmp_path / "hf"))
    _on(monkeypatch, SMALL)
    staged = pipeline.run(replace(_config(root, shared_data, "cache-hub"), publish=False), log=lambda m: None).folder
    _on(monkeypatch, None)
    assert (
        _main(
            "reproduce",
            "--store",
            "hf://hteb/test-revisions",
            "--revision",
            "t",
            "--candidate",
            str(staged),
            "--json",
            str(tmp_path / "r.json"),
        )
        == 0
    )
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["reference"] == {"label": "t", "content_hash": theirs["content_hash"], "revision_id": commit}
    assert report["reproduced"] and report["judge_values_within_tolerance"] > 0
    assert capsys.readouterr().out.startswith(f"t ({theirs['content_hash'][:12]}) reproduced by t (")


def test_a_gpu_regeneration_names_the_recorded_settings_that_differ():
    from hteb_generate.revision.reproduce import differences_line, setting_differences

    h100 = {
        "runtime": {
            "gpus": ["NVIDIA H100 80GB HBM3"],
            "torch": "2.13.0",
            "vllm": "0.32.0",
            "vllm_build": "vllm",
            "batch_invariant": False,
            "engines": [{"model_id": "m", "gpu_memory_utilization": 0.9}],
        }
    }
    a100 = {"runtime": {**h100["runtime"], "gpus": ["NVIDIA A100-SXM4-80GB"], "vllm": "0.31.0"}}
    assert setting_differences(a100, h100) == [
        'GPU model ["NVIDIA A100-SXM4-80GB"] here, ["NVIDIA H100 80GB HBM3"] published',
        'vLLM "0.31.0" here, "0.32.0" published',
    ]
    assert setting_differences(h100, h100) == []
    assert differences_line(a100, h100).startswith('settings that differ from the published run: GPU model ["NVIDIA A1')


@pytest.mark.parametrize("corpus_noise", [False, True], ids=["queries", "with-corpus-noise"])
def test_reproduce_a_noise_revision_this_version_made(shared_data, monkeypatch, capsys, tmp_path, corpus_noise):
    """A Noise revision (rules, no model), with and without its retrieval corpora perturbed
    (--corpus-noise): rebuilt from its manifest (its noise rules' hash is this version's) and
    regenerated to the same texts, the corpus records among them; no engine is loaded."""
    _on(monkeypatch, None)
    args = dict(zip(*[iter(_run_args(tmp_path, shared_data, "cache"))] * 2))
    overrides = {
        k.lstrip("-").replace("-", "_"): v
        for k, v in args.items()
        if k not in ("--seed", "--profile", "--model", "--judge-model")
    }
    if corpus_noise:
        overrides = {**overrides, "datasets": "SciFact", "corpus_noise": True}
    config = build_config(
        seed="1339",
        profile="cpu",
        overrides={**overrides, "max_texts": 2, "transformations": "character_deletion,numerisation"},
    )
    pipeline.run(config, log=lambda m: None)
    theirs = open_store(str(tmp_path / "store")).fetch("t").manifest
    assert "noise_rules_sha256" in theirs["config"]
    report_path = tmp_path / "report.json"
    assert (
        _main(
            "reproduce",
            "--store",
            str(tmp_path / "store"),
            "--revision",
            "t",
            "--cache-dir",
            str(tmp_path / "c"),
            "--data-dir",
            str(shared_data),
            "--json",
            str(report_path),
        )
        == 0
    )
    report = json.loads(report_path.read_text())
    assert report["reproduced"] is True and report["records_compared"] == theirs["counters"]["items"] > 0
    assert report["differing"] == report["missing"] == report["extra"] == 0
    assert theirs.get("corpus_perturbed", False) is corpus_noise  # its corpus files, compared byte for byte
    assert any(f["path"].startswith("corpus/") for f in theirs["files"]) is corpus_noise
    with pytest.raises(HtebError, match="noise_rules_sha256 is"):  # rules changed since: named, not rebuilt
        rebuild_config(
            {**theirs, "config": {**theirs["config"], "noise_rules_sha256": "ab"}},
            store="s",
            machine={"data_dir": str(shared_data)},
        )


#: Datasets a data folder of one's own may hold some of (each small at --max-texts 2).
FOLDER_DATASETS = ["STS16", "MasakhaNEWS", "SemRel2024", "IsiZuluNews", "TwitterSemEval2015", "SciFact"]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sets(st.sampled_from(FOLDER_DATASETS), min_size=1, max_size=2), st.sampled_from(["2", "3"]))
def test_a_noise_revision_reproduces_from_the_data_folder_that_made_it(shared_data, tmp_path_factory, held, rules):
    """A data folder holding only some of the registry's datasets makes a Noise revision of those (every rules
    version), and `reproduce` rebuilds it from that very folder (issue 46: it asked for every registry dataset,
    since the rule-only rebuild took its stand-in model settings from the cpu profile's sample datasets)."""
    root = tmp_path_factory.mktemp("folder")
    for name in held:
        (root / "data").mkdir(exist_ok=True)
        (root / "data" / name).symlink_to(shared_data / name)
    overrides = {"data_dir": str(root / "data"), "store": f"file://{root / 'store'}", "max_texts": 2}
    run = {"cache_dir": str(root / "c"), "noise_rules": rules, "manifest_md": str(root / "MANIFEST.md")}
    config = build_config(seed="1339", profile="noise", overrides={**overrides, **run})
    assert config.datasets == tuple(sorted(held)) and config.label == f"noise{rules}-1339"
    pipeline.run(config, log=lambda m: None)
    report = root / "report.json"
    arguments = ["--store", overrides["store"], "--revision", config.label, "--data-dir", overrides["data_dir"]]
    assert _main("reproduce", *arguments, "--cache-dir", str(root / "c2"), "--json", str(report)) == 0
    assert json.loads(report.read_text())["reproduced"] is True
