"""`hteb-score --corpus-robustness` refused before any work: one line, exit 2, no output folder,
no model weights loaded (the suite refuses weight loading outside slow tests)."""

from __future__ import annotations

from pathlib import Path

from hteb_score import SAMPLE_REVISION
from models import minilm_path
from refusal import assert_one_line, partials, run


def test_refused_corpus_robustness_on_a_revision_without_a_perturbed_corpus(tmp_path: Path) -> None:
    """The bundled sample revision transforms queries only."""
    code, out, err = run(minilm_path(), "--corpus-robustness", "--out", tmp_path / "out")
    assert_one_line(
        code,
        err,
        f"--corpus-robustness: revision {SAMPLE_REVISION} has no perturbed corpus",
        "hteb-generate --corpus-noise",
    )
    assert out == "" and not (tmp_path / "out").exists() and partials(tmp_path) == []


def test_refused_corpus_robustness_with_a_source_dir(tmp_path: Path, shared_data: Path) -> None:
    code, out, err = run(
        minilm_path(),
        "--source-dir",
        shared_data,
        "--datasets",
        "SciFact",
        "--corpus-robustness",
        "--out",
        tmp_path / "out",
    )
    assert_one_line(code, err, "--source-dir scores original data only", "--corpus-robustness")
    assert out == "" and not (tmp_path / "out").exists() and partials(tmp_path) == []
