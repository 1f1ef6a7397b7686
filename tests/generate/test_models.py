"""Models by alias, by id or as a local folder; anything else is a one-line error with a hint."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hteb_generate.engine.models import MODELS, cached_commit, lookup_model, branch_commit
from hteb_contract.errors import HtebError


def test_alias_and_model_id_name_the_same_model():
    assert lookup_model("smollm2") is lookup_model("HuggingFaceTB/SmolLM2-135M-Instruct") is MODELS.get("smollm2")
    assert lookup_model("gemma-3-27b-it-int4-awq").engines == ("vllm",)


def test_a_local_model_folder_runs_on_both_engines(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    spec = lookup_model(str(tmp_path))
    assert (spec.model_id, spec.revision, spec.engines) == (str(tmp_path.resolve()), "local", ("transformers", "vllm"))
    assert spec.resolve(tmp_path) == str(tmp_path.resolve())


def test_unknown_model_is_one_line_with_a_hint():
    with pytest.raises(HtebError, match="unknown model 'smollm3' \\(did you mean 'smollm2'\\?\\); known: smollm2, "):
        lookup_model("smollm3")


COMMIT = "0123456789abcdef0123456789abcdef01234567"


def test_hub_models_are_sized_and_pinned_or_marked_unpinned():
    for name, spec in MODELS.items():
        assert spec.weights_gib and spec.kv_kib_per_token and spec.max_model_len, name
    assert lookup_model("qwen3-8b-awq").revision == "4da05a8edb55c6046cce958586c33b61da07bb79"
    assert lookup_model("qwen3-8b-awq").pinned and lookup_model("smollm2").pinned  # smollm2: pinned by its package
    gemma = lookup_model("gemma-3-27b-it-int4-awq")
    assert (gemma.hub, gemma.pinned, gemma.max_model_len) == (True, False, 8192)


def _hub_cache(root, model_id: str, refs: dict[str, str]):
    """The layout huggingface_hub downloads into: models--ORG--NAME/{refs/BRANCH, snapshots/COMMIT/}."""
    folder = root / f"models--{model_id.replace('/', '--')}"
    for branch, commit in refs.items():
        (folder / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / branch).write_text(commit)
    return root


def test_an_unpinned_model_resolves_to_the_commit_of_its_downloaded_snapshot(tmp_path):
    gemma = lookup_model("gemma-3-27b-it-int4-awq")
    cache = _hub_cache(tmp_path, gemma.model_id, {"main": COMMIT})
    assert cached_commit(gemma.model_id, "main", cache) == COMMIT
    assert cached_commit(gemma.model_id, COMMIT, cache) == COMMIT
    assert cached_commit(gemma.model_id, "dev", cache) is None
    assert branch_commit(gemma.model_id, "main", cache) == (COMMIT, "the Hugging Face cache")


def test_an_unpinned_model_that_cannot_be_resolved_is_one_line(tmp_path):
    code = (
        "import sys; from hteb_generate.engine.models import branch_commit\n"
        "from hteb_contract.errors import HtebError\n"
        f"try: branch_commit('gaunernst/gemma-3-27b-it-int4-awq', 'main', __import__('pathlib').Path({str(tmp_path)!r}))\n"
        "except HtebError as err: print(err)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert done.stdout == (
        f"cannot resolve gaunernst/gemma-3-27b-it-int4-awq@main to a commit: not in the Hugging Face cache {tmp_path} "
        "and the Hub did not answer (OfflineModeIsEnabled); run with the Hub reachable (HF_HUB_OFFLINE unset), or set "
        "HF_HOME to a cache that holds the model\n"
    ), done.stderr
