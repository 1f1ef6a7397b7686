"""`--encoder python` refused in one line, exit 2, nothing written: a MODEL_ID not of the form
MODULE:FACTORY or FILE.py:FACTORY, a module that does not import (or raises), a missing file, a
name that is not callable, a factory that raises or gives an object without `encode`, and the
options that pin or run a sentence-transformers model. No engine runs here."""

from __future__ import annotations

import pytest

from hteb_score.encoding.choice import choose
from refusal import assert_one_line, partials, run

pytest.importorskip("mteb")

FACTORIES = """
def no_encode():
    return object()


def raises():
    raise RuntimeError("engine file is corrupt")


not_callable = 42
"""


@pytest.fixture
def factories(tmp_path):
    path = tmp_path / "factories.py"
    path.write_text(FACTORIES)
    (tmp_path / "broken.py").write_text("raise ImportError('libengine.so: cannot open shared object file')\n")
    return path


def _refused(tmp_path, model, *args, needles=()):
    out = tmp_path / "out"
    code, _, err = run(model, "--encoder", "python", *args, "--datasets", "STSBenchmark", "--out", out, "--quiet")
    assert_one_line(code, err, *needles)
    assert not out.exists() and partials(tmp_path) == []


@pytest.mark.parametrize(
    ("model", "needles"),
    [
        ("justaname", ("'justaname' is not MODULE:FACTORY or FILE.py:FACTORY",)),
        ("no_such_engine_pkg.encoders:make", ("cannot import 'no_such_engine_pkg.encoders'", "No module named")),
        ("json:no_such_factory", ("'json' has no callable 'no_such_factory'",)),
    ],
    ids=["form", "module", "attribute"],
)
def test_refused_a_factory_that_cannot_be_found(model, needles, tmp_path):
    _refused(tmp_path, model, needles=needles)


@pytest.mark.parametrize(
    ("target", "needles"),
    [
        ("missing.py:make", ("no file", "missing.py")),
        ("broken.py:make", ("cannot import", "libengine.so: cannot open shared object file")),
        ("factories.py:not_callable", ("has no callable 'not_callable'",)),
        ("factories.py:raises", ("factories.py:raises failed in its factory: RuntimeError: engine file is corrupt",)),
        ("factories.py:no_encode", ("factories.py:no_encode gave a object, which has no encode",)),
    ],
    ids=["missing-file", "import-fails", "not-callable", "factory-raises", "no-encode"],
)
def test_refused_a_factory_that_gives_no_encoder(target, needles, factories, tmp_path):
    _refused(tmp_path, str(factories.parent / target), needles=needles)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (("--model-revision", "main"), ("--model-revision pins a Hub model", "is a factory")),
        (("--backend", "onnx"), ("--backend, --precision", "the factory's engine runs itself")),
    ],
    ids=["model-revision", "backend"],
)
def test_refused_options_of_sentence_transformers_models(args, needles, factories, tmp_path):
    _refused(tmp_path, f"{factories}:no_encode", *args, needles=needles)


def test_refused_python_encoder_without_a_model(tmp_path):
    code, _, err = run("--encoder", "python", "--out", tmp_path / "out", "--quiet")
    assert_one_line(code, err, "--encoder python needs a MODEL_ID")


def test_auto_takes_a_factorys_form_as_python(factories):
    """A Hub id has no colon and an existing path is a folder: auto reads MODULE:FACTORY as a factory."""
    assert choose("auto", f"{factories}:no_encode").kind == "python"
    assert choose("auto", "json:dumps").kind == "python"
    assert choose("auto", "sentence-transformers/all-MiniLM-L6-v2").kind != "python"
    assert choose("auto", str(factories.parent)).kind == "sentence-transformers"
