"""--backend / --precision combinations no backend offers, or backends not installed: one line,
exit 2, nothing written, before any model loads."""

from __future__ import annotations

import sys

import pytest

from refusal import assert_one_line, run


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--precision", "fp16", "--device", "cpu"), "--backend torch --precision fp16 runs on cuda, not on cpu"),
        (("--backend", "openvino", "--precision", "int8"), "--backend openvino offers --precision fp32; not int8"),
        (("--backend", "onnx", "--precision", "bf16"), "--backend onnx offers --precision fp32, int8; not bf16"),
        (("--backend", "onnx", "--precision", "fp16"), "--backend onnx offers --precision fp32, int8; not fp16"),
        (
            (
                "--backend",
                "tensorrt",
            ),
            "Invalid value for '--backend'",
        ),
    ],
)
def test_refused_a_backend_and_precision_that_do_not_go_together(tmp_path, args, needle):
    code, _, err = run(*args, "--out", tmp_path / "out")
    assert_one_line(code, err, needle)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("backend", "module", "extra"), [("onnx", "onnxruntime", "onnx"), ("openvino", "openvino", "openvino")]
)
def test_refused_a_backend_that_is_not_installed(tmp_path, monkeypatch, backend, module, extra):
    monkeypatch.setitem(sys.modules, module, None)  # as if the extra were not installed
    code, _, err = run("--backend", backend, "--out", tmp_path / "out")
    assert_one_line(code, err, f"--backend {backend} needs {module}", f"pip install 'hteb-score[{extra}]'")
    assert not (tmp_path / "out").exists()


def test_refused_a_backend_for_a_model_mteb_loads(tmp_path):
    pytest.importorskip("mteb")
    code, _, err = run(
        "sentence-transformers/all-MiniLM-L6-v2", "--encoder", "mteb", "--backend", "onnx", "--out", tmp_path / "out"
    )
    assert_one_line(code, err, "--backend, --precision, --token-budget and device lists apply to sentence-transformers")


@pytest.mark.parametrize(
    ("device", "needle"),
    [
        ("cpu,cpu", "a list of devices names CUDA devices only"),
        ("cuda:0,mps", "a list of devices names CUDA devices only"),
        ("cuda:0,cuda", "names a device twice"),
        ("cuda:0,cuda:999", "CUDA device(s)"),
    ],
)
def test_refused_a_device_list_this_machine_cannot_run(tmp_path, device, needle):
    code, _, err = run("--device", device, "--out", tmp_path / "out")
    assert_one_line(code, err, needle)
    assert not (tmp_path / "out").exists()


def test_refused_a_token_budget_below_a_row(tmp_path):
    code, _, err = run("--token-budget", "8", "--out", tmp_path / "out")
    assert_one_line(code, err, "Invalid value for '--token-budget'")
