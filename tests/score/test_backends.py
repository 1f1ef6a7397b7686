"""Encoding backends and precisions (issue 11 item 2): the transformer exported once to ONNX and run
by onnxruntime or OpenVINO gives torch fp32's embeddings; reduced precision is measured, flagged in
the card and marked by compare."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from hteb_score.cli import main
from hteb_score.encoding.encoder import Encoder, probe_texts
from models import minilm_path

pytestmark = pytest.mark.slow  # real MiniLM, real exports


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("exports")


@pytest.fixture(scope="module")
def texts(shared_data) -> list[str]:
    rows = [json.loads(line) for line in (shared_data / "STSBenchmark" / "test.jsonl").open()][:100]
    corpus = [json.loads(line) for line in (shared_data / "SciFact" / "corpus.jsonl").open()][:20]
    return [r["sentence1"] for r in rows] + [d["text"] for d in corpus]  # short and truncated-long texts


@pytest.fixture(scope="module")
def torch_fp32(texts) -> np.ndarray:
    encoder = Encoder.load(str(minilm_path()), device="cpu", progress=False)
    assert (encoder.backend, encoder.precision, encoder.max_diff) == ("torch", "fp32", 0.0)
    return encoder.encode(texts, None)


@pytest.mark.parametrize("backend", ["onnx", "openvino"])
def test_exported_backends_give_torch_fp32s_embeddings(backend, exports, texts, torch_fp32):
    encoder = Encoder.load(str(minilm_path()), device="cpu", progress=False, backend=backend, export_root=exports)
    assert np.abs(encoder.encode(texts, None) - torch_fp32).max() < 1e-5
    assert encoder.max_diff is not None and encoder.max_diff < 1e-5
    settings = encoder.settings()
    assert (settings["backend"], settings["precision"], settings["dtype"]) == (backend, "fp32", "float32")


def test_the_export_is_made_once_per_model_and_reused(exports, texts):
    first = Encoder.load(str(minilm_path()), device="cpu", progress=False, backend="onnx", export_root=exports)
    [made] = list((exports / "exports").glob("*/model.onnx"))
    stamp = made.stat().st_mtime_ns
    again = Encoder.load(str(minilm_path()), device="cpu", progress=False, backend="onnx", export_root=exports)
    assert made.stat().st_mtime_ns == stamp and list((exports / "exports").glob("*/model.onnx")) == [made]
    assert not list(made.parent.glob(".*"))  # no temporary file left beside it
    assert np.array_equal(first.encode(texts[:8], None), again.encode(texts[:8], None))


def test_identity_differs_per_backend_and_precision(exports):
    def load(**kw):
        return Encoder.load(str(minilm_path()), device="cpu", progress=False, export_root=exports, **kw)

    identities = {
        load().identity,
        load(backend="onnx").identity,
        load(backend="onnx", precision="int8").identity,
        load(backend="openvino").identity,
        load(precision="bf16").identity,
    }
    assert len(identities) == 5


def test_reduced_precision_is_measured_flagged_and_marked_by_compare(exports, tmp_path):
    common = ["--datasets", "STSBenchmark", "--transformations", "paraphrasing", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "fp32")]) == 0
    assert main([*common, "--backend", "onnx", "--precision", "int8", "--out", str(tmp_path / "int8")]) == 0
    card = json.loads((tmp_path / "int8" / "result_card.json").read_text())
    encode = card["encode"]
    assert (encode["backend"], encode["precision"], encode["dtype"]) == ("onnx", "int8", "int8")
    assert 1e-4 < encode["max_diff_vs_torch_fp32"] < 0.5  # int8 really is another model's numbers
    [flag] = [f for f in card["flags"] if f["code"] == "reduced_precision"]
    assert "--backend onnx --precision int8" in flag["message"]
    assert "onnx int8 (max diff vs torch fp32" in (tmp_path / "int8" / "result_card.md").read_text()
    fp32 = json.loads((tmp_path / "fp32" / "result_card.json").read_text())
    assert not any(f["code"] == "reduced_precision" for f in fp32["flags"])
    assert (
        main(
            [
                "compare",
                str(tmp_path / "fp32" / "result_card.json"),
                str(tmp_path / "int8" / "result_card.json"),
                "--out",
                str(tmp_path / "compare"),
                "--splits",
                "5",
            ]
        )
        == 0
    )
    models = [row["model"] for row in json.loads((tmp_path / "compare" / "comparison.json").read_text())["leaderboard"]]
    assert sorted(models) == [
        "sentence-transformers/all-MiniLM-L6-v2",
        "sentence-transformers/all-MiniLM-L6-v2 [onnx int8]",
    ]


def test_openvino_fp32_scores_equal_torch_fp32s(exports, tmp_path):
    """The default rule's test: a backend is a candidate default only if its scores equal torch fp32's to 1e-4
    (bench/bench_backends.py measures it at full size)."""
    common = ["--datasets", "STSBenchmark,SciFact,TwitterSemEval2015", "--quiet"]
    assert main([*common, "--backend", "torch", "--out", str(tmp_path / "torch")]) == 0
    assert main([*common, "--backend", "openvino", "--out", str(tmp_path / "ov")]) == 0
    scores = [
        {
            (r["dataset"], r["transformation"], r["seed"], r["subset"]): r["value"]
            for r in json.loads((tmp_path / name / "result_card.json").read_text())["scores"]
        }
        for name in ("torch", "ov")
    ]
    assert scores[0].keys() == scores[1].keys()
    assert max(abs(scores[0][k] - scores[1][k]) for k in scores[0]) <= 1e-4


def test_the_probe_set_is_real_text():
    probe = probe_texts()
    assert len(probe) == 64 and len(set(probe)) == 64 and max(map(len, probe)) > 1000


def test_the_default_is_openvino_fp32_on_cpu_when_installed_else_torch(tmp_path, monkeypatch):
    """bench/bench_backends.py measured openvino fp32 the fastest option with torch fp32's scores."""
    common = ["--datasets", "STSBenchmark", "--transformations", "paraphrasing", "--quiet"]
    assert main([*common, "--out", str(tmp_path / "default")]) == 0
    encode = json.loads((tmp_path / "default" / "result_card.json").read_text())["encode"]
    assert (encode["backend"], encode["precision"]) == ("openvino", "fp32") and encode["max_diff_vs_torch_fp32"] < 1e-5
    monkeypatch.setitem(sys.modules, "openvino", None)  # the openvino extra not installed
    assert main([*common, "--out", str(tmp_path / "plain")]) == 0
    encode = json.loads((tmp_path / "plain" / "result_card.json").read_text())["encode"]
    assert (encode["backend"], encode["precision"], encode["max_diff_vs_torch_fp32"]) == ("torch", "fp32", 0.0)


def test_the_fp32_reference_of_a_half_precision_checkpoint_is_fp32(tmp_path):
    """transformers 5 loads a checkpoint stored in float16 in float16; the scorer's torch fp32 loads it in
    float32 and the card's dtype is the one the weights actually ran in."""
    import torch
    from sentence_transformers import SentenceTransformer

    half = SentenceTransformer(str(minilm_path()), device="cpu").half()
    half.save(str(tmp_path / "half"))
    encoder = Encoder.load(str(tmp_path / "half"), device="cpu", backend="torch", precision="fp32", progress=False)
    assert {p.dtype for p in encoder.model.parameters()} == {torch.float32}
    assert encoder.settings()["dtype"] == "float32" and encoder.max_diff == 0.0


def test_a_model_of_unknown_identity_leaves_no_export_behind(tmp_path):
    """Its export goes to a private temporary folder (the model's size each run): removed when the process ends."""
    import subprocess

    code = (
        "import sys; from pathlib import Path; from hteb_score.encoding.backends import export_dir; "
        "folder = export_dir(Path(sys.argv[1]), None); (folder / 'model.onnx').write_bytes(b'x' * 1000); "
        "print(folder)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "cache")],
        capture_output=True,
        text=True,
        check=True,
        env={"TMPDIR": str(tmp_path), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    folder = Path(done.stdout.strip())
    assert folder.parent == tmp_path and folder.name.startswith("hteb-export-") and not folder.exists()
    import hteb_score.encoding.backends as backends

    assert backends.export_dir(tmp_path / "cache", "model:abc") == tmp_path / "cache" / "exports" / "model_abc"
