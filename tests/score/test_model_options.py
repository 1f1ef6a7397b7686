"""How a researcher names the model and the data (issue 26 item 2): --model-revision pins a Hub model
(resolved to its commit before any data is read, recorded in the card, refused in one line when it
cannot be resolved), --model-name names a local folder, every command reads one default store, and
the terminal says which backend runs and why. The Hub is offline in the tests: a real Hugging Face
cache (the layout huggingface_hub writes) holds all-MiniLM-L6-v2 at a commit, a branch and a tag."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import huggingface_hub
import pytest

from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from hteb_score.encoding.model_files import ModelChoice, resolve_hub_revision
from models import minilm_path
from refusal import assert_one_line, run

REPO_ID = "sentence-transformers/all-MiniLM-L6-v2"
COMMIT = "c9745ed1d9f207416be6d2e6f8de32d1f16199bf"
MTEB_PIN = "8b3219a92973c328a8e22fadcfa821b5dc75636a"  # the revision mteb 2.26's registry pins for REPO_ID
TAG = "v1.0"


def _hub_cache(root: Path, commit: str = COMMIT) -> Path:
    """A Hugging Face hub cache holding REPO_ID at `commit`, named by the branch main and the tag TAG."""
    repo = root / f"models--{REPO_ID.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    source = Path(minilm_path())
    for path in source.rglob("*"):
        if path.is_file():
            target = snapshot / path.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(path)
    (repo / "refs").mkdir(parents=True)
    for ref in ("main", TAG):
        (repo / "refs" / ref).write_text(commit)
    return root


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    cache = _hub_cache(tmp_path / "hub")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(cache))
    return cache


@pytest.mark.parametrize("revision", ["main", TAG, COMMIT])
def test_a_branch_tag_or_commit_resolves_to_the_commit_offline(hub_cache, revision):
    assert resolve_hub_revision(REPO_ID, revision) == COMMIT


@pytest.mark.parametrize(
    ("model", "extra", "needles"),
    [
        (REPO_ID, ("--model-revision", "v9.9"), ("--model-revision v9.9", "no revision 'v9.9'", "offline")),
        ("nobody/no-such-model", ("--model-revision", "main"), ("no revision 'main'", "'nobody/no-such-model'")),
        ("{minilm}", ("--model-revision", COMMIT), ("a local folder", "names the Hub commit it holds", "--model-name")),
        ("{minilm}", ("--model-revision", "main", "--model-name", REPO_ID), ("full 40-character Hub commit",)),
        ("{minilm}", ("--model-revision", COMMIT[:12], "--model-name", REPO_ID), ("not a branch or tag",)),
        (None, ("--model-revision", COMMIT), ("the default model", "is scored as it ships")),
        (REPO_ID, ("--model-name", "mine"), ("--model-name names a model given as a local folder",)),
        ("{minilm}", ("--model-name", " "), ("--model-name is empty",)),
    ],
)
def test_a_model_option_that_cannot_apply_is_one_line_before_any_data_is_read(
    hub_cache, tmp_path, model, extra, needles
):
    out = tmp_path / "out"
    named = () if model is None else (model.format(minilm=minilm_path()),)
    code, stdout, err = run(*named, *extra, "--out", out, "--quiet")
    assert_one_line(code, err, *needles)
    assert stdout == "" and not out.exists()


def test_every_command_reads_the_bundled_store_by_default():
    code, out, err = run("verify", "--revision", SAMPLE_REVISION)
    assert code == 0, err
    assert out.startswith(f"ok: {SAMPLE_REVISION} (") and "8 of 8 datasets verified" in out
    assert run("verify")[1] == out  # the revision defaults to the bundled one too
    code, out, err = run("revisions")
    records = [json.loads(p.read_text()) for p in sorted((SAMPLE_STORE / "labels").glob("*.json"))]
    assert code == 0, err  # each label, the content hash it names and when it was published
    assert out.splitlines() == [f"{r['label']}  {r['content_hash']}  {r['published']}" for r in records]
    assert [r["label"] for r in records] == ["sample-1339", SAMPLE_REVISION]  # the card-1 sample and the default


def _score(tmp_path: Path, *args: str, commit: str = COMMIT) -> tuple[subprocess.CompletedProcess, dict]:
    """hteb-score on one dataset of the bundled sample, in a process whose Hugging Face cache is ours."""
    out = tmp_path / "out"
    env = {**os.environ, "HF_HUB_CACHE": str(_hub_cache(tmp_path / "hub", commit)), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hteb_score.cli",
            *args,
            "--datasets",
            "STSBenchmark",
            "--transformations",
            "paraphrasing",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return done, json.loads((out / "result_card.json").read_text())


@pytest.mark.slow
def test_a_pinned_hub_model_is_scored_at_its_commit_and_the_card_records_both(tmp_path):
    done, card = _score(tmp_path, REPO_ID, "--model-revision", TAG, "--backend", "torch")
    assert card["model"]["model_id"] == REPO_ID
    assert card["model"]["revision"] == COMMIT and card["model"]["pinned"] == TAG
    lines = done.stderr.splitlines()
    assert "backend: torch fp32 on cpu (--backend torch)" in lines
    # REPO_ID is a model of mteb's registry: --model-revision v1.0 (not mteb's pin) changes the encoder, and says so
    notes = [line for line in lines if line.startswith("note: encoder")]
    assert notes == [f"note: encoder sentence-transformers for {REPO_ID}: {card['model']['encoder_reason']}"]
    assert card["model"]["encoder"] == "sentence-transformers"
    assert card["model"]["encoder_reason"].startswith(f"auto: --model-revision {TAG} is not the revision mteb's ")
    assert f"({MTEB_PIN})" in card["model"]["encoder_reason"] and "without mteb's task prompts" in notes[0]
    bar = [line for line in re.split(r"[\r\n]", done.stderr) if line.startswith("evaluating: 100%")]
    assert bar and re.search(r" 2/2 \[\d\d:\d\d<\d\d:\d\d", bar[-1]), bar  # a total and the time left
    markdown = (tmp_path / "out" / "result_card.md").read_text()
    assert markdown.count(f"pinned by --model-revision `{TAG}`") == 1
    assert f"- encoder: sentence-transformers ({card['model']['encoder_reason']})" in markdown.splitlines()


@pytest.mark.slow
def test_a_local_folder_is_named_by_model_name_not_its_path(tmp_path):
    from hteb_score.cli import main

    _, card = _score(tmp_path, minilm_path(), "--model-name", "minilm-local")
    assert card["model"]["model_id"] == "minilm-local" and "pinned" not in card["model"]
    assert minilm_path() not in json.dumps(card)
    assert [p.name for p in (tmp_path / "out" / "mteb" / "results").iterdir()] == ["minilm-local"]
    # named with the Hub commit it holds: the card's revision and the mteb result folder are the commit's,
    # its identity (what the embedding cache and parts are keyed by) still its weights'
    _, pinned = _score(tmp_path / "pinned", minilm_path(), "--model-name", REPO_ID, "--model-revision", COMMIT)
    assert card["model"]["revision"].startswith("sha256:") and pinned["model"]["revision"] == COMMIT
    assert pinned["model"]["pinned"] == COMMIT and pinned["model"]["identity"] == card["model"]["identity"]
    folder = tmp_path / "pinned" / "out" / "mteb" / "results" / REPO_ID.replace("/", "__")
    assert [p.name for p in folder.iterdir()] == [COMMIT]
    assert json.loads((folder / COMMIT / "model_meta.json").read_text())["revision"] == COMMIT
    assert pinned["scores"] == card["scores"]
    report = tmp_path / "report"
    assert main(["compare", str(tmp_path / "out" / "result_card.json"), "--out", str(report)]) == 0
    for name in ("comparison.md", "report.html"):
        text = (report / name).read_text()
        assert "minilm-local" in text and minilm_path() not in text, name


def test_mteb_pins_its_own_revision_of_the_model():
    """The oracle of MTEB_PIN: mteb's own registry entry."""
    import mteb

    assert mteb.get_model_meta(REPO_ID).revision == MTEB_PIN


def test_a_revision_mteb_does_not_pin_is_loaded_by_sentence_transformers_and_said(hub_cache):
    """--model-revision on a model of mteb's registry: mteb loads only its pin, so another revision goes to
    sentence-transformers (no task prompts), and the choice says why in a line for the terminal."""
    from hteb_score.encoding.choice import choose

    unpinned = choose("auto", REPO_ID)
    assert (unpinned.kind, unpinned.forced, unpinned.note(REPO_ID)) == ("mteb", False, "")
    choice = choose("auto", REPO_ID, revision=TAG)
    assert (choice.kind, choice.forced) == ("sentence-transformers", True)
    assert MTEB_PIN in choice.reason and f"--model-revision {TAG}" in choice.reason
    assert choice.note(REPO_ID) == f"note: encoder sentence-transformers for {REPO_ID}: {choice.reason}"
    assert "\n" not in choice.note(REPO_ID)
    explicit = choose("sentence-transformers", REPO_ID, revision=TAG)
    assert (explicit.kind, explicit.forced, explicit.reason) == (
        "sentence-transformers",
        False,
        "--encoder sentence-transformers",
    )


def test_the_revision_mteb_pins_keeps_mteb_loader(tmp_path, monkeypatch):
    """A tag naming mteb's pinned commit: mteb's loader stays, the card will record the tag as pinned."""
    from hteb_score.encoding.choice import choose
    from hteb_score.encoding.model_files import choose_model

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(_hub_cache(tmp_path / "hub", MTEB_PIN)))
    for revision in (TAG, MTEB_PIN):
        choice = choose("auto", REPO_ID, revision=revision)
        assert (choice.kind, choice.forced) == (
            "mteb",
            False,
        ) and f"--model-revision {revision} is the" in choice.reason
        assert choose("mteb", REPO_ID, revision=revision).kind == "mteb"
        assert choose_model(REPO_ID, revision, None, "mteb") == ModelChoice(revision, MTEB_PIN, None)


def test_encoder_mteb_with_a_revision_mteb_does_not_pin_is_one_line(hub_cache, tmp_path):
    out = tmp_path / "out"
    code, stdout, err = run(REPO_ID, "--encoder", "mteb", "--model-revision", TAG, "--out", out, "--quiet")
    assert_one_line(
        code, err, f"--model-revision {TAG}", f"pins {REPO_ID} at {MTEB_PIN}", "--encoder sentence-transformers"
    )
    assert stdout == "" and not out.exists()


@pytest.mark.slow
def test_a_model_pinned_at_mteb_revision_is_scored_by_mteb_and_the_card_says_so(tmp_path):
    done, card = _score(tmp_path, REPO_ID, "--model-revision", TAG, commit=MTEB_PIN)
    model = card["model"]
    assert (model["encoder"], model["pinned"], model["revision"]) == ("mteb", TAG, MTEB_PIN)
    assert model["mteb"]["revision"] == MTEB_PIN and "note: encoder" not in done.stderr
    assert model["encoder_reason"].startswith("auto: a model of mteb's registry: mteb's loader")


def test_the_default_model_is_named_by_its_commit_only_while_its_folder_holds_that_commits_weights(tmp_path):
    from hteb_score.encoding.model_files import DEFAULT_MODEL_COMMIT, default_model_commit, resolve_revision

    assert default_model_commit(Path(minilm_path())) == DEFAULT_MODEL_COMMIT
    other = tmp_path / "other-version"  # another version of the package: its weights differ by one byte
    shutil.copytree(minilm_path(), other)
    weights = bytearray((other / "model.safetensors").read_bytes())
    weights[-1] ^= 1
    (other / "model.safetensors").write_bytes(bytes(weights))
    assert default_model_commit(other) is None and resolve_revision(other).startswith("sha256:")
