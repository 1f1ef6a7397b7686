"""A model that is Python code, not a folder (`hteb-score MODULE:FACTORY --encoder python`): a
researcher's own engine, scored through mteb's encoder protocol, which such an engine already
speaks if it has been run on MTEB.

MODEL_ID names a factory, `package.module:name` (an importable module) or `path/to/file.py:name`;
`name()` is called once, with no arguments, and returns the encoder: an object whose
`encode(inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs)` takes a
DataLoader of {"text": [...]} batches and gives one row per text (mteb's `EncoderProtocol`).
What else it may say of itself, each optional:

- `identity` (str): everything that changes its embeddings (package and version, a hash of its
  weight file, its prompts...). The card's `model.identity` hashes it with the factory's name; the
  embedding cache keys by that and `hteb-score merge` refuses parts that differ in it. Without
  it the identity is unknown: null on the card, and --cache-dir is refused.
- `prompts` (dict): the prompt it puts before each prompt type's texts ("query", "document",
  "default" for texts mteb gives no prompt type), whatever the task: recorded on the card, and
  texts with equal prompts share embeddings across tasks. Without it nothing is shared between tasks.
- `mteb_model_meta` (mteb's ModelMeta, as mteb's own encoders carry): its name names the model
  unless --model-name does, and its similarity is recorded.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from hteb_contract.errors import HtebError, first_line
from hteb_score.encoding.mteb_encoder import NO_TYPE, as_float32, encode_raw, task_metadata

if TYPE_CHECKING:
    from hteb_contract.sources import DatasetInfo

FORM = "MODULE:FACTORY or FILE.py:FACTORY"
T = TypeVar("T")


def guarded(engine: str, where: str, call: Callable[[], T]) -> T:
    """`call()`, the engine's own code: whatever it raises, or exits with (sys.exit(0) included, which
    would otherwise end hteb-score with success and no card), is one line naming the engine."""
    try:
        return call()
    except HtebError:
        raise
    except SystemExit as err:
        raise HtebError(f"--encoder python: {engine} called sys.exit({err.code!r}) in {where}") from None
    except Exception as err:  # whatever the researcher's engine raises
        raise HtebError(
            f"--encoder python: {engine} failed in {where}: {type(err).__name__}: {first_line(err)[:200]}"
        ) from None


def checked_rows(engine: str, vectors: Any, count: int, dim: int | None) -> np.ndarray:
    """What `encode` returned, as float32 rows, if it is one row of numbers per text with the
    dimension of the rows before it; otherwise one line naming the engine and what it gave."""
    gave = f"--encoder python: {engine}.encode gave"
    try:
        raw = np.asarray(vectors.detach().cpu().float().numpy() if hasattr(vectors, "detach") else vectors)
    except (TypeError, ValueError, RuntimeError):  # ragged lists, objects numpy cannot hold
        raise HtebError(f"{gave} a {type(vectors).__name__} that is not an array of numbers") from None
    if raw.dtype.kind not in "fiu":
        raise HtebError(f"{gave} a {type(vectors).__name__} of {raw.dtype}, not numbers")
    if raw.ndim != 2 or len(raw) != count or raw.shape[1] == 0:
        raise HtebError(f"{gave} shape {raw.shape} for {count} texts; one row per text is needed")
    if dim is not None and raw.shape[1] != dim:
        raise HtebError(f"{gave} rows of dimension {raw.shape[1]} after rows of dimension {dim}")
    return as_float32(raw)  # finite or not: EmbeddingTable refuses NaN or infinity for every encoder


def looks_like_factory(model: str | None) -> bool:
    """Whether a MODEL_ID has the form of a factory (`--encoder auto` takes it as one): a Hub id has
    no colon, and an existing path is a folder, never a factory."""
    if model is None or Path(model).exists():
        return False
    where, colon, name = model.rpartition(":")
    return bool(colon and where and name.isidentifier())


def shown_target(target: str) -> str:
    """The factory as the card names it: a file by its name, not the path it has on this machine."""
    where, _, name = target.rpartition(":")
    return f"{Path(where).name}:{name}" if where.endswith(".py") else target


def resolve_factory(target: str) -> Callable[[], Any]:
    """The callable `target` names, imported; not that form, not importable or not callable: one line."""
    where, colon, name = target.rpartition(":")
    if not (colon and where and name.isidentifier()):
        raise HtebError(f"--encoder python: MODEL_ID {target!r} is not {FORM}")
    try:
        module = _module(where)
    except HtebError:
        raise
    except (Exception, SystemExit) as err:  # whatever the module raises while it runs
        raise HtebError(f"--encoder python: cannot import {where!r}: {first_line(err)[:200]}") from None
    found = getattr(module, name, None)
    if not callable(found):
        raise HtebError(f"--encoder python: {where!r} has no callable {name!r}")
    return found


def _module(where: str) -> Any:
    if not where.endswith(".py"):
        return importlib.import_module(where)
    path = Path(where)
    if not path.is_file():
        raise HtebError(f"--encoder python: no file {where!r}")
    spec = importlib.util.spec_from_file_location(f"hteb_encoder_{path.stem}", path)
    if spec is None or spec.loader is None:  # a .py file always has both
        raise HtebError(f"--encoder python: cannot load {where!r} as a module")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def encoder_identity(target: str, declared: str | None) -> str | None:
    """sha256 over the factory's name and what the encoder declares changes its embeddings."""
    if declared is None:
        return None
    entry = json.dumps({"factory": shown_target(target), "identity": declared}, sort_keys=True)
    return f"sha256:{hashlib.sha256(entry.encode()).hexdigest()}"


@dataclass
class PythonEncoder:
    """The encoder a factory made (`wrapper`), and what the card says of it."""

    model_id: str
    identity: str | None
    target: str
    declared: str | None  # the encoder's own `identity`
    prompts: dict[str, str] | None  # the encoder's own `prompts`
    similarity: str
    wrapper: Any = field(repr=False)
    device: str  # as asked for: the engine chooses where it runs
    batch_size: int
    dim: int | None = None  # known once it has encoded
    #: mteb task -> its task type, and the prompt types its texts were encoded as
    applied: dict[str, dict[str, str | None]] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        target: str,
        *,
        name: str | None = None,
        device: str = "auto",
        batch_size: int = 32,
        trust_remote_code: bool = False,
        progress: bool = True,
    ) -> PythonEncoder:
        """Call the factory; what it returns must have `encode`, and `identity`/`prompts` of the right types."""
        factory = resolve_factory(target)
        wrapper = guarded(shown_target(target), "its factory", factory)
        if not callable(getattr(wrapper, "encode", None)):
            raise HtebError(
                f"--encoder python: {shown_target(target)} gave a {type(wrapper).__name__}, which has no "
                "encode (mteb's EncoderProtocol)"
            )
        declared, prompts = getattr(wrapper, "identity", None), getattr(wrapper, "prompts", None)
        if declared is not None and not isinstance(declared, str):
            raise HtebError(f"--encoder python: the identity of {shown_target(target)} is not a string")
        if prompts is not None and not (
            isinstance(prompts, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in prompts.items())
        ):
            raise HtebError(f"--encoder python: the prompts of {shown_target(target)} are not a dict of strings")
        meta = getattr(wrapper, "mteb_model_meta", None)
        similarity = getattr(getattr(meta, "similarity_fn_name", None), "value", None) or "cosine"
        model_id = name or getattr(meta, "name", None) or shown_target(target)
        return cls(
            model_id,
            encoder_identity(target, declared),
            target,
            declared,
            prompts,
            similarity,
            wrapper,
            device,
            batch_size,
        )

    def prompt_key(self, task: DatasetInfo | None, prompt_type: str | None) -> str:
        """The prompt the encoder declares for the prompt type; without declared prompts, the
        prompt type and the task (mteb may prompt each task its own way)."""
        metadata = task_metadata(task)
        self.applied.setdefault(metadata.name, {"type": metadata.type})[prompt_type or NO_TYPE] = (
            None if self.prompts is None else self.prompts.get(prompt_type or NO_TYPE)
        )
        if self.prompts is None:
            return json.dumps([prompt_type, metadata.name])
        return json.dumps([self.prompts.get(prompt_type or NO_TYPE)])

    def encode(self, texts: Sequence[str], prompt_type: str | None, *, task: DatasetInfo | None = None) -> np.ndarray:
        engine = shown_target(self.target)
        task_metadata(task)  # a dataset without an mteb task is refused as such, not as the engine's failure
        raw = guarded(engine, "encode", lambda: encode_raw(self.wrapper, texts, prompt_type, task, self.batch_size))
        vectors = checked_rows(engine, raw, len(texts), self.dim)
        self.dim = vectors.shape[1]
        return vectors

    def card_model(self) -> dict[str, Any]:
        """The result card's `model` section: the factory, what the encoder declares, and the
        prompt types each mteb task's texts were encoded as."""
        return {
            "model_id": self.model_id,
            "revision": None,
            "identity": self.identity,
            "embedding_dim": self.dim,
            "similarity": self.similarity,
            "encoder": "python",
            "python": {
                "factory": shown_target(self.target),
                "identity": self.declared,
                "prompts": self.prompts,
                "tasks": self.applied,
            },
        }

    def settings(self) -> dict[str, Any]:
        """The encode settings for the result card."""
        return {
            "batch_size": self.batch_size,
            "dtype": "unknown",
            "normalize": False,
            "device": self.device,
            "max_seq_length": None,
            "prompts": dict(self.prompts or {}),
            "trust_remote_code": False,
        }
