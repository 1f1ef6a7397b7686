"""A model that maps every text to one vector (issue 24): every STS similarity is the same, so the
Spearman correlation is undefined. The documented outcome is a written card with the score null and
flagged `undefined_score`, the dataset flagged `collapsed` (issue 42); the run used to end with "no
original main score ... cannot compute statistics" and nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from safetensors.torch import load_file, save_file

from hteb_score.cli import main
from models import minilm_path
from revision_factory import build_revision, install


@pytest.fixture(scope="module")
def constant_model(tmp_path_factory) -> Path:
    """all-MiniLM-L6-v2 whose last layer norm has weight 0 and bias 1: every token's state, so every
    mean-pooled embedding, is the same vector."""
    folder = tmp_path_factory.mktemp("constant") / "model"
    shutil.copytree(minilm_path(), folder)
    weights = load_file(folder / "model.safetensors")
    last = max(int(k.split(".")[2]) for k in weights if k.startswith("encoder.layer."))
    prefix = f"encoder.layer.{last}.output.LayerNorm"
    weights[f"{prefix}.weight"] = weights[f"{prefix}.weight"] * 0
    weights[f"{prefix}.bias"] = weights[f"{prefix}.bias"] * 0 + 1
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


@pytest.mark.slow
def test_a_model_of_one_vector_gets_a_flagged_card(constant_model, tmp_path, shared_data, capsys):
    build_revision(tmp_path / "rev", shared_data, ["STSBenchmark"], label="c1", rows=6)
    install(tmp_path / "store", tmp_path / "rev")
    out = tmp_path / "out"
    status = main(
        [
            str(constant_model),
            "--store",
            str(tmp_path / "store"),
            "--revision",
            "c1",
            "--out",
            str(out),
            "--quiet",
            "--backend",
            "torch",
        ]
    )
    err = capsys.readouterr().err
    assert status == 0 and "Traceback" not in err, err
    card = json.loads((out / "result_card.json").read_text())
    originals = [r for r in card["scores"] if r["transformation"] == "original" and r["subset"] == "all"]
    assert originals and all(r["value"] is None for r in originals)
    assert any(f["code"] == "undefined_score" and f["dataset"] == "STSBenchmark" for f in card["flags"])
    assert any(f["code"] == "collapsed" and f["dataset"] == "STSBenchmark" for f in card["flags"])  # issue 42
    assert "no effect can be estimated" in card["statistics"]["undefined"]
    assert "undefined_score" in (out / "result_card.md").read_text()


def _broken_model(root: Path, value: float) -> Path:
    """all-MiniLM-L6-v2 whose last layer norm's bias is `value` (NaN or infinity): every embedding is NaN."""
    folder = root / "model"
    shutil.copytree(minilm_path(), folder)
    weights = load_file(folder / "model.safetensors")
    last = max(int(k.split(".")[2]) for k in weights if k.startswith("encoder.layer."))
    bias = f"encoder.layer.{last}.output.LayerNorm.bias"
    weights[bias] = weights[bias] * 0 + value
    save_file(weights, folder / "model.safetensors", metadata={"format": "pt"})
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "inf"])
@pytest.mark.parametrize("dataset", ["STSBenchmark", "SciFact", "TwitterSemEval2015"])
def test_a_model_of_nan_vectors_is_refused_in_one_line_and_writes_nothing(
    tmp_path, shared_data, capsys, value, dataset
):
    """NaN vectors used to crash STS with a traceback and score retrieval 0.0 in a card that exited 0 (a NaN
    cosine is never below the collapse threshold): now the one table every task reads from refuses them."""
    model = _broken_model(tmp_path, value)
    build_revision(tmp_path / "rev", shared_data, [dataset], label="n1", rows=6)
    install(tmp_path / "store", tmp_path / "rev")
    out = tmp_path / "out"
    argv = [str(model), "--store", str(tmp_path / "store"), "--revision", "n1", "--out", str(out), "--quiet"]
    status = main([*argv, "--backend", "torch"])
    err = capsys.readouterr().err
    refusal = err.splitlines()[-1]  # after the backend's one line of what it loaded
    assert status != 0 and "Traceback" not in err and err.count("error:") == 1, err
    assert refusal.startswith("hteb-score: error: ") and "gave NaN or infinite vectors for" in refusal
    assert refusal.endswith("nothing was scored")
    assert not out.exists()
