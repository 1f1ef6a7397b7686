"""A model of mteb's registry as the scorer's encoder: loaded by its `ModelMeta`, and every text
encoded through mteb's own encoder `encode(DataLoader, task_metadata=..., prompt_type=...)` with
the metadata of the mteb task the dataset names, so each task gets the prompt or instruction mteb
gives it (per task name, task type and query/document, as the model's implementation says).

Why the prompt is also computed here (`prompt_key`): the embedding table embeds each (text,
prompt) once across tasks and the on-disk cache keys by it, so it must know which prompt mteb will
apply before encoding. For the wrappers whose prompt rule is known (sentence-transformers models
and instruction-tuned ones, unless a subclass changes `encode`) it is mteb's rule itself; for any
other wrapper the key is the task, so nothing is shared between tasks that mteb might encode apart.
mteb is an optional extra of the scorer: it is imported only when this encoder is asked for.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from hteb_contract.errors import HtebError, first_line
from hteb_score.encoding.identity import model_identity
from hteb_score.encoding.mteb_registry import registry_entry
from hteb_score.encoding.model_files import check_tokenizer, model_root, resolve_revision

if TYPE_CHECKING:
    from hteb_contract.sources import DatasetInfo

NO_TYPE = "default"  # the card's name for texts mteb encodes without a prompt type (STS, classification...)


def task_metadata(task: DatasetInfo | None) -> Any:
    """The TaskMetadata of the mteb task a dataset names (mteb's prompts depend on it); a dataset
    naming none, or one mteb does not have, is a one-line error."""
    if task is None or not task.mteb_task:
        where = "a dataset" if task is None else f"dataset {task.name!r}"
        raise HtebError(
            f"{where} names no mteb task (mteb_task in its dataset.json): an mteb model cannot choose its prompt"
        )
    return _mteb_task(task.name, task.mteb_task)


@lru_cache(maxsize=None)
def _mteb_task(dataset: str, name: str) -> Any:
    import mteb

    try:
        return mteb.get_task(name).metadata
    except (KeyError, ValueError):
        raise HtebError(f"dataset {dataset!r}: mteb has no task {name!r} (mteb_task in its dataset.json)") from None


def check_tasks(tasks: Sequence[DatasetInfo]) -> None:
    """Before the model loads: every dataset names an mteb task mteb has."""
    for task in tasks:
        task_metadata(task)


def _sentence_transformer_prompt(wrapper: Any, metadata: Any, prompt_type: Any) -> str | None:
    """SentenceTransformerEncoderWrapper.encode: the prompt named by get_prompt_name in model_prompts."""
    from mteb.models.abs_encoder import get_prompt_name

    name = get_prompt_name(wrapper.model_prompts, metadata, prompt_type)
    return wrapper.model_prompts.get(name) if name else None


def _instruct_prompt(wrapper: Any, metadata: Any, prompt_type: Any) -> str | None:
    """InstructSentenceTransformerModel.encode: the task instruction, never on passages when so configured."""
    from mteb.types import PromptType

    if not wrapper.apply_instruction_to_passages and prompt_type == PromptType.document:
        return None
    return wrapper.get_task_instruction(metadata, prompt_type) or None


#: mteb wrapper class name -> how its `encode` picks the prompt it passes to the model
PROMPT_RULES: dict[str, Callable[[Any, Any, Any], str | None]] = {
    "SentenceTransformerEncoderWrapper": _sentence_transformer_prompt,
    "InstructSentenceTransformerModel": _instruct_prompt,
}


def prompt_rule(wrapper: Any) -> Callable[[Any, Any, Any], str | None] | None:
    """The rule of the nearest known class of `wrapper`, if its `encode` is that class's own."""
    for cls in type(wrapper).__mro__:
        if cls.__name__ in PROMPT_RULES:
            return PROMPT_RULES[cls.__name__] if getattr(type(wrapper), "encode") is getattr(cls, "encode") else None
    return None


def _stable(value: Any) -> Any:
    """`value` as JSON that is equal whenever it is: functions by name and bytecode, not by address."""
    if isinstance(value, dict):
        return {str(k): _stable(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_stable(v) for v in value]
        return sorted(items, key=json.dumps) if isinstance(value, (set, frozenset)) else items
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    code = getattr(value, "__code__", None)
    name = f"{getattr(value, '__module__', '')}.{getattr(value, '__qualname__', type(value).__qualname__)}"
    if code is None:
        return name
    return f"{name}#{hashlib.sha256(code.co_code + repr(code.co_consts).encode()).hexdigest()[:16]}"


def loader_name(meta: Any) -> str | None:
    return None if meta.loader is None else _stable(meta.loader)


@dataclass
class MtebEncoder:
    """A loaded mteb model (`wrapper`, mteb's encoder) and its registry entry (`meta`)."""

    model_id: str
    revision: str | None
    identity: str | None  # model files, the mteb entry's loader and its arguments; None: not a local model
    meta: Any = field(repr=False)
    wrapper: Any = field(repr=False)
    device: str
    batch_size: int
    dtype: str
    trust_remote_code: bool = False
    pinned: str | None = None  # --model-revision as given, when it is the revision mteb's registry pins
    #: mteb task -> its task type and the prompt given to each prompt type asked for (None: none)
    applied: dict[str, dict[str, str | None]] = field(default_factory=dict)

    @classmethod
    def load(
        cls,
        name: str,
        *,
        device: str = "auto",
        batch_size: int = 32,
        trust_remote_code: bool = False,
        progress: bool = True,
        pinned: str | None = None,
    ) -> MtebEncoder:
        """Load `name` from mteb's registry with its own loader, at the revision it pins (`pinned`:
        --model-revision naming that revision, recorded); unregistered or unloadable: one line."""
        import torch
        from transformers.utils import logging as transformers_logging

        meta = registry_entry(name)
        if not progress:
            transformers_logging.disable_progress_bar()
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        extra = {"trust_remote_code": True} if trust_remote_code else {}
        try:
            wrapper = meta.load_model(device=device, **extra)
        except Exception as err:  # the loaders raise OSError, ValueError, ImportError, HTTP errors...
            first = first_line(err)
            raise HtebError(f"cannot load mteb model {name!r}: {first[:200]}") from None
        model = getattr(wrapper, "model", None)
        if hasattr(model, "tokenizer"):
            check_tokenizer(model, name)
        folder = _transformer_folder(model)
        dtype = _dtype(model)
        revision = meta.revision or (None if folder is None else resolve_revision(folder))
        identity = None
        if folder is not None:
            files = model_identity(
                model_root(Path(name), folder), backend=getattr(model, "backend", "torch"), precision=dtype
            )
            if files is not None:
                entry = json.dumps(
                    {
                        "files": files,
                        "name": meta.name,
                        "revision": meta.revision,
                        "loader": loader_name(meta),
                        "loader_kwargs": _stable(meta.loader_kwargs),
                        "wrapper": _stable(type(wrapper)),
                    },
                    sort_keys=True,
                )
                identity = f"sha256:{hashlib.sha256(entry.encode()).hexdigest()}"
        return cls(
            meta.name,
            revision,
            identity,
            meta,
            wrapper,
            device,
            batch_size,
            dtype,
            bool(meta.loader_kwargs.get("trust_remote_code", False) or trust_remote_code),
            pinned,
        )

    def prompt_key(self, task: DatasetInfo | None, prompt_type: str | None) -> str:
        """The prompt type and the exact prompt mteb gives this task's texts of it (recorded for
        the card); for a wrapper whose prompt rule is unknown, the prompt type and the task."""
        from mteb.types import PromptType

        metadata = task_metadata(task)
        kind = None if prompt_type is None else PromptType(prompt_type)
        rule = prompt_rule(self.wrapper)
        if rule is None:
            return json.dumps([prompt_type, None, metadata.name])
        prompt = rule(self.wrapper, metadata, kind)
        self.applied.setdefault(metadata.name, {"type": metadata.type})[prompt_type or NO_TYPE] = prompt
        return json.dumps([prompt_type, prompt])

    def encode(self, texts: Sequence[str], prompt_type: str | None, *, task: DatasetInfo | None = None) -> np.ndarray:
        """float32 embeddings from mteb's encoder (`encode_through`)."""
        return encode_through(self.wrapper, texts, prompt_type, task, self.batch_size)

    def applied_prompts(self) -> dict[str, str]:
        """Every non-empty prompt applied, as `mteb task/prompt type` -> prompt."""
        return {
            f"{task}/{kind}": prompt
            for task, prompts in self.applied.items()
            for kind, prompt in prompts.items()
            if kind != "type" and prompt
        }

    def card_model(self) -> dict[str, Any]:
        """The result card's `model` section, with the mteb entry and the prompts it gave each task."""
        model = getattr(self.wrapper, "model", None)
        dim = self.meta.embed_dim if isinstance(self.meta.embed_dim, int) else None
        if dim is None and model is not None and hasattr(model, "get_embedding_dimension"):
            dim = model.get_embedding_dimension()
        similarity = getattr(self.meta.similarity_fn_name, "value", self.meta.similarity_fn_name)
        pinned = {} if self.pinned is None else {"pinned": self.pinned}
        return {
            "model_id": self.model_id,
            "revision": self.revision,
            "identity": self.identity,
            **pinned,
            "embedding_dim": dim,
            "similarity": similarity or "cosine",
            "encoder": "mteb",
            "mteb": {
                "name": self.meta.name,
                "revision": self.meta.revision,
                "loader": loader_name(self.meta),
                "mteb_version": importlib.metadata.version("mteb"),
                "use_instructions": self.meta.use_instructions,
                "model_prompts": getattr(self.wrapper, "model_prompts", None) or None,
                "prompts_known": prompt_rule(self.wrapper) is not None,
                "prompts": self.applied,
            },
        }

    def settings(self) -> dict[str, Any]:
        """The encode settings for the result card."""
        model = getattr(self.wrapper, "model", None)
        return {
            "batch_size": self.batch_size,
            "dtype": self.dtype,
            "normalize": False,
            "device": self.device,
            "max_seq_length": getattr(model, "max_seq_length", None),
            "prompts": self.applied_prompts(),
            "trust_remote_code": self.trust_remote_code,
        }


def encode_through(
    wrapper: Any, texts: Sequence[str], prompt_type: str | None, task: DatasetInfo | None, batch_size: int
) -> np.ndarray:
    """float32 embeddings from an encoder of mteb's protocol (`EncoderProtocol.encode`)."""
    return as_float32(encode_raw(wrapper, texts, prompt_type, task, batch_size))


def as_float32(vectors: Any) -> np.ndarray:
    """What an encoder returned (a tensor, an array, lists of numbers) as a float32 array."""
    if hasattr(vectors, "detach"):
        vectors = vectors.detach().cpu().float().numpy()
    return np.asarray(vectors, dtype=np.float32)


def encode_raw(
    wrapper: Any, texts: Sequence[str], prompt_type: str | None, task: DatasetInfo | None, batch_size: int
) -> Any:
    """What the encoder's `encode` returns, given the texts as mteb gives them: a DataLoader of
    "text", the task's metadata and the prompt type."""
    from datasets import Dataset
    from mteb.types import PromptType
    from torch.utils.data import DataLoader

    metadata = task_metadata(task)
    assert task is not None  # task_metadata refuses a missing task
    loader = DataLoader(Dataset.from_dict({"text": list(texts)}), batch_size=batch_size)
    return wrapper.encode(
        loader,
        task_metadata=metadata,
        hf_split=task.eval_split,
        hf_subset="default",
        prompt_type=None if prompt_type is None else PromptType(prompt_type),
        batch_size=batch_size,
        show_progress_bar=False,
    )


def _transformer_folder(model: Any) -> Path | None:
    """Where a sentence-transformers model's Transformer module was loaded from (None: not one)."""
    try:
        return Path(model[0].auto_model.name_or_path)
    except (TypeError, IndexError, AttributeError, KeyError):
        return None


def _dtype(model: Any) -> str:
    parameters = getattr(model, "parameters", None)
    if parameters is None:
        return "unknown"
    first = next(iter(parameters()), None)
    return "unknown" if first is None else str(first.dtype).removeprefix("torch.")
