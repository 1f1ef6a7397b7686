"""A model's identity: everything that changes its embeddings, as one sha256.

Weights, tokenizer files and the sentence-transformers module configs (modules.json,
sentence_bert_config.json with max_seq_length, the pooling and normalisation modules,
config_sentence_transformers.json with its prompts) all live in the model folder, so the identity
hashes every file there except what cannot change an embedding: documentation, git metadata and
the exports for other backends. The backend and precision the model runs in are hashed with them.
The embedding cache is keyed by it and the result card records it, so a changed max length or a
missing tokenizer file can never be served embeddings of the model as it was.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

#: Files that never change an embedding: documentation and licences (hidden files, e.g. git metadata, are skipped too).
IGNORED_SUFFIXES = frozenset({".md"})
IGNORED_NAMES = frozenset({"LICENSE", "LICENSE.txt", "NOTICE"})
_BLOB = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a Hugging Face cache blob's name: git sha1 or sha256
#: Per backend, the top-level folders holding other backends' exports of the same model.
OTHER_BACKENDS = {
    "torch": frozenset({"onnx", "openvino"}),
    "onnx": frozenset({"openvino"}),
    "openvino": frozenset({"onnx"}),
}


def identity_files(folder: Path, backend: str) -> list[Path]:
    """The files of a model folder that the identity covers, sorted by relative path."""
    skipped = OTHER_BACKENDS.get(backend, frozenset())
    files = []
    for path in folder.rglob("*"):
        relative = path.relative_to(folder)
        if any(part.startswith(".") for part in relative.parts) or relative.parts[0] in skipped:
            continue
        if path.is_file() and path.suffix not in IGNORED_SUFFIXES and path.name not in IGNORED_NAMES:
            files.append(path)
    return sorted(files, key=lambda p: p.relative_to(folder).as_posix())


def model_identity(folder: Path, *, backend: str, precision: str) -> str | None:
    """sha256 over the sorted relative paths and bytes of the identity files, then the backend and
    precision; None when the folder does not exist (a model known by name only)."""
    folder = Path(folder)
    if not folder.is_dir():
        return None
    digest = hashlib.sha256()
    for path in identity_files(folder, backend):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + _content_id(path).encode() + b"\0")
    digest.update(f"backend={backend}\0precision={precision}".encode())
    return f"sha256:{digest.hexdigest()}"


def _content_id(path: Path) -> str:
    """A file's content hash. In the Hugging Face cache a snapshot's file links to a blob named by
    its content's hash (sha256 for an LFS file, git's sha1 for another), checked when downloaded:
    that name is used, so a many-GB model is not read again at every start. Other files: sha256."""
    target = path.resolve()
    if path.is_symlink() and target.parent.name == "blobs" and _BLOB.fullmatch(target.name):
        return target.name
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()
