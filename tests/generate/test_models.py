"""Models by alias, by id or as a local folder; anything else is a one-line error with a hint."""

from __future__ import annotations

import pytest
from hteb_generate.models import MODELS, lookup_model
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
