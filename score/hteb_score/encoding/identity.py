"""A model's identity: everything that changes its embeddings, as one sha256.

Weights, tokenizer files and the sentence-transformers module configs (modules.json,
sentence_bert_config.json with max_seq_length, the pooling and normalisation modules,
config_sentence_transformers.json with its prompts) all live in the model folder, so the identity
hashes every file there except what cannot change an embedding: documentation, git metadata and
the exports for other backends. The backend and precision the model runs in are hashed with them.
The embedding cache is keyed by it and the result card records it, so a changed max length or a
missing tokenizer file can never be served embeddings of the model as it was.

Also the check, before any data is read, that a local model folder has the tokenizer its
configuration asks for (transformers builds an empty one silently when the files are missing).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from hteb_contract.errors import HtebError

#: Files that never change an embedding: documentation and licences (hidden files, e.g. git metadata, are skipped too).
IGNORED_SUFFIXES = frozenset({".md"})
IGNORED_NAMES = frozenset({"LICENSE", "LICENSE.txt", "NOTICE"})
_BLOB = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a Hugging Face cache blob's name: git sha1 or sha256
#: Per backend, the top-level folders holding other backends' exports of the same model.
OTHER_BACKENDS = {"torch": frozenset({"onnx", "openvino"}), "onnx": frozenset({"openvino"}),
                  "openvino": frozenset({"onnx"})}


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


def tokenizer_folder(folder: Path) -> Path:
    """Where a local model keeps its tokenizer: its Transformer module's folder (modules.json), else the root."""
    modules = folder / "modules.json"
    if modules.is_file():
        try:
            entries = json.loads(modules.read_text(encoding="utf-8"))
            first = next(e for e in entries if str(e.get("type", "")).endswith("Transformer"))
            return folder / first.get("path", "")
        except (json.JSONDecodeError, UnicodeDecodeError, StopIteration, AttributeError, TypeError):
            raise HtebError(f"model {folder}: modules.json names no Transformer module") from None
    return folder


def check_local_model(folder: Path) -> None:
    """A local model folder loads WITH its tokenizer: the tokenizer class its configuration names
    finds at least one of its vocabulary files. Loads no weights."""
    from transformers import AutoTokenizer

    where = tokenizer_folder(folder)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(where), local_files_only=True)
    except Exception as err:  # transformers raises OSError, ValueError, KeyError... for a broken folder
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise HtebError(f"model {folder}: its tokenizer cannot be loaded: {first[:200]}") from None
    wanted = sorted(set(tokenizer.vocab_files_names.values()))
    if wanted and not any((where / name).is_file() for name in wanted):
        raise HtebError(f"model {folder}: no tokenizer files in {where} (needs one of {', '.join(wanted)})")


def check_model(model: str | None) -> None:
    """Before any data is read: a local model folder has its tokenizer; any other name is at
    least a well-formed Hugging Face model id (whether the Hub has it shows when it loads)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    from hteb_score.encoding.encoder import default_model_path

    source = Path(default_model_path() if model is None else model)
    if source.is_dir():
        check_local_model(source)
        return
    if source.exists():
        raise HtebError(f"cannot load model {model!r}: it is a file, not a model folder")
    try:
        validate_repo_id(str(model))
    except HFValidationError:
        raise HtebError(f"cannot load model {model!r}: no such local folder, and not a Hugging Face model id") from None
