"""The encoder: any sentence-transformers model (id or local path), its resolved revision, the
prompts it applies, and an embedding table that embeds each unique (text, prompt) once per run.
`TextEncoder` is what the table needs of an encoder; `Encoder` (sentence-transformers) and
`mteb_encoder.MtebEncoder` (a model of mteb's registry) implement it.

Query/document prompts: a model whose sentence-transformers config defines prompts named
`query` / `document` (or `passage`) gets them for retrieval/reranking queries and documents, as
mteb applies them; the applied prompts are recorded in the result card.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from hteb_contract.common import json_input
from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.common.escape import visible
from hteb_contract.errors import HtebError, first_line
from hteb_contract.common.paths import default_cache_dir
from hteb_score import SAMPLE_DIR
from hteb_score.encoding.backends import DTYPES
from hteb_score.encoding.batched import DEFAULT_TOKEN_BUDGET
from hteb_score.encoding.cache import EmbeddingCache
from hteb_score.encoding.embed import Embed
from hteb_score.encoding.identity import model_identity
from hteb_score.encoding.model_files import (
    DEFAULT_MODEL_ID,
    ModelChoice,
    check_tokenizer,
    default_model_commit,
    default_model_path,
    model_root,
    resolve_revision,
)
from hteb_score.encoding.vector_store import DEFAULT_MEMMAP_BYTES, VectorStore

if TYPE_CHECKING:
    from hteb_contract.sources import DatasetInfo

PROBE_FILE = SAMPLE_DIR / "probe.txt"  # 64 real texts: STSBenchmark sentences, SciFact abstracts
_PROMPT_ALIASES = {"query": ("query",), "document": ("document", "passage", "corpus")}


def _read_probe(path: Path) -> float | None:
    try:
        value = json_input.read(path, ValueError)["max_diff_vs_torch_fp32"]
    except (ValueError, KeyError, TypeError):
        return None
    return float(value) if isinstance(value, (int, float)) else None


def probe_texts() -> list[str]:
    """The probe set on which a backend or precision is compared with torch fp32 (the card's max_diff_vs_torch_fp32)."""
    return PROBE_FILE.read_text(encoding="utf-8").splitlines()


class TextEncoder(Protocol):
    """What the embedding table needs of an encoder. `prompt_key` is the exact prompt (or
    instruction) the model gets for a dataset's texts of a prompt type: texts with equal keys get
    equal embeddings, so the table embeds each (text, key) once and the cache keys by it."""

    model_id: str
    identity: str | None

    def prompt_key(self, task: DatasetInfo | None, prompt_type: str | None) -> str | None: ...

    def encode(
        self, texts: Sequence[str], prompt_type: str | None, *, task: DatasetInfo | None = None
    ) -> np.ndarray: ...


class LoadedEncoder(TextEncoder, Protocol):
    """An encoder as `load_encoder` gives it: it also says, for the result card, what model it runs and how."""

    def card_model(self) -> dict[str, Any]: ...

    def settings(self) -> dict[str, Any]: ...


@dataclass
class Encoder:
    """A loaded sentence-transformers model and the settings it encodes with."""

    model_id: str
    revision: str | None  # None: it cannot be determined
    identity: str | None  # model_identity: what changes its embeddings; None: it cannot be determined
    model: Any = field(repr=False)
    device: str
    batch_size: int
    dtype: str
    trust_remote_code: bool = False
    backend: str = "torch"
    precision: str = "fp32"
    max_diff: float | None = None  # largest |embedding - torch fp32's| on the probe set; None: not measured
    token_budget: int | None = None  # batched.py's path (padded tokens per batch); None: SentenceTransformer.encode
    replicas: list[Any] = field(default_factory=list, repr=False)  # one model per device of a device list
    pinned: str | None = None  # --model-revision as given (revision is the commit it resolved to)

    @classmethod
    def load(
        cls,
        model: str | None,
        *,
        device: str = "auto",
        batch_size: int = 32,
        trust_remote_code: bool = False,
        progress: bool = True,
        backend: str = "torch",
        precision: str | None = None,
        export_root: Path | None = None,
        token_budget: int | None = None,
        choice: ModelChoice = ModelChoice(),
    ) -> Encoder:
        """Load a model by Hub id or local path; an unknown model is a one-line HtebError.
        `backend`/`precision` (backends.py; precision None: fp16 on cuda, else fp32) are checked
        before the model loads; exports are kept under `export_root` (default: $HTEB_CACHE_DIR, else ~/.cache/hteb).
        `choice`: the Hub commit to load (--model-revision) or the name of a local folder (--model-name)."""
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        from hteb_score.encoding.backends import check_backend

        if not progress:
            transformers_logging.disable_progress_bar()

        if device == "auto":  # onnxruntime and OpenVINO run here on CPU
            device = "cuda" if torch.cuda.is_available() and backend == "torch" else "cpu"
        devices = device.split(",")
        if token_budget is None and (devices[0].startswith("cuda") or len(devices) > 1):
            token_budget = DEFAULT_TOKEN_BUDGET  # the GPU path: pre-tokenised, length-sorted, prefetched batches
        precision = precision or ("fp16" if device.startswith("cuda") and backend == "torch" else "fp32")
        runner = check_backend(backend, precision, device)
        model_id = model or DEFAULT_MODEL_ID
        source = default_model_path() if model is None else model
        try:
            # float32 explicitly: transformers 5 loads a checkpoint stored in half precision in half, and the
            # fp32 reference (and max_diff_vs_torch_fp32) would silently be measured against half
            loaded = SentenceTransformer(
                source,
                device=devices[0],
                trust_remote_code=trust_remote_code,
                revision=choice.commit,
                model_kwargs={"dtype": torch.float32},
            )
        except Exception as err:  # sentence-transformers raises OSError, ValueError, HTTP errors...
            where = "local folder" if Path(source).exists() else "Hugging Face model (offline or not found)"
            first = first_line(err)
            raise HtebError(f"cannot load model {model_id!r} as a {where}: {first[:200]}") from None
        check_tokenizer(loaded, model_id)
        auto_model = getattr(loaded[0], "auto_model", None)  # the transformers model of a Transformer module
        folder = Path(auto_model.name_or_path) if auto_model is not None else Path(source)
        # a Hub id loads from a cache folder it does not name; the default model's folder holds a known commit
        revision = (
            choice.commit or (default_model_commit(folder) if model is None else None) or resolve_revision(folder)
        )
        root = model_root(Path(source), folder)
        identity = model_identity(root, backend=backend, precision=DTYPES[precision])
        if model is not None and Path(model).exists():
            model_id = choice.name or str(Path(model).resolve())
        encoder = cls(
            model_id,
            revision,
            identity,
            loaded,
            device,
            batch_size,
            DTYPES[precision],
            trust_remote_code,
            backend,
            precision,
            None,
            token_budget,
            pinned=choice.pinned,
        )
        if (backend, precision) == ("torch", "fp32"):
            encoder.max_diff = 0.0
            encoder.dtype = weights_dtype(loaded, encoder.dtype)
            return encoder.replicated(devices)
        measured = None  # the probe's difference is kept beside an export: measured once per model and runtime
        if runner.attach is None:  # torch: the loaded model, cast
            reference = encoder.encode(probe_texts(), None)  # torch fp32, as loaded
            loaded.to({"bf16": torch.bfloat16, "fp16": torch.float16}[precision])
            encoder.dtype = weights_dtype(loaded, encoder.dtype)
        else:
            from hteb_score.encoding.backends import export_dir

            exports = Path(export_root) if export_root is not None else default_cache_dir()
            folder = export_dir(exports, model_identity(root, backend="torch", precision="float32"))
            measured = folder / f"probe-{backend}-{precision}.json"
            known = _read_probe(measured)
            if known is not None:
                runner.attach(loaded, folder, precision)
                encoder.max_diff = known
                return encoder.replicated(devices)
            reference = encoder.encode(probe_texts(), None)  # torch fp32, before the runner replaces it
            runner.attach(loaded, folder, precision)
        encoder.max_diff = float(np.abs(encoder.encode(probe_texts(), None) - reference).max())
        if measured is not None:
            atomic_write_text(measured, json.dumps({"max_diff_vs_torch_fp32": encoder.max_diff}) + "\n")
        return encoder.replicated(devices)

    def replicated(self, devices: Sequence[str]) -> Encoder:
        """This encoder with one model replica per device (the batched path feeds them together)."""
        from hteb_score.encoding.batched import replicate

        self.replicas = replicate(self.model, devices) if len(devices) > 1 else [self.model]
        return self

    def prompt_name(self, prompt_type: str | None) -> str | None:
        """The model's own prompt name for a query/document role, if it defines one."""
        prompts = getattr(self.model, "prompts", None) or {}
        for name in _PROMPT_ALIASES.get(prompt_type or "", ()):
            if name in prompts:
                return name
        return None

    def applied_prompts(self) -> dict[str, str]:
        prompts = getattr(self.model, "prompts", None) or {}
        applied = {}
        for role in _PROMPT_ALIASES:
            name = self.prompt_name(role)
            if name is not None and prompts[name]:
                applied[role] = prompts[name]
        return applied

    def prompt_key(self, task: DatasetInfo | None, prompt_type: str | None) -> str | None:
        """The prompt text applied to a prompt type, whatever the task (the embedding cache's key)."""
        return self.applied_prompts().get(prompt_type or "")

    def card_model(self) -> dict[str, Any]:
        """The result card's `model` section."""
        pinned = {} if self.pinned is None else {"pinned": self.pinned}
        return {
            "model_id": self.model_id,
            "revision": self.revision,
            "identity": self.identity,
            **pinned,
            "embedding_dim": self.model.get_embedding_dimension(),
            "similarity": "cosine",
            "encoder": "sentence-transformers",
        }

    def encode(self, texts: Sequence[str], prompt_type: str | None, *, task: DatasetInfo | None = None) -> np.ndarray:
        """float32 embeddings, rows in input order, unnormalised (metrics take cosine themselves)."""
        name = self.prompt_name(prompt_type)
        if self.token_budget is not None:
            from hteb_score.encoding.batched import encode_batched

            prompt = None if name is None else self.model.prompts[name]
            return encode_batched(self.replicas or [self.model], texts, prompt=prompt, token_budget=self.token_budget)
        vectors = self.model.encode(
            list(texts), batch_size=self.batch_size, prompt_name=name, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def settings(self) -> dict[str, Any]:
        """The encode settings for the result card."""
        return {
            "batch_size": self.batch_size,
            "dtype": self.dtype,
            "normalize": False,
            "device": self.device,
            "max_seq_length": getattr(self.model, "max_seq_length", None),
            "prompts": self.applied_prompts(),
            "trust_remote_code": self.trust_remote_code,
            "backend": self.backend,
            "precision": self.precision,
            "max_diff_vs_torch_fp32": self.max_diff,
            "token_budget": self.token_budget,
        }


def weights_dtype(model: Any, fallback: str) -> str:
    """The dtype the torch model's floating-point weights are in ("float32"): what the card records."""
    kinds = {str(p.dtype).removeprefix("torch.") for p in model.parameters() if p.is_floating_point()}
    return kinds.pop() if len(kinds) == 1 else fallback


Request = tuple["DatasetInfo | None", str, "str | None"]  # (task, text, prompt type)


class EmbeddingTable:
    """Every unique (text, prompt key) of a run, embedded once; lookups after `fill`, through a
    task's `view`. With `cache_dir`, embeddings are also read from and written to an on-disk cache
    keyed by the encoder's identity, the prompt key and the text."""

    def __init__(
        self, encoder: TextEncoder, cache_dir: Path | None = None, *, memmap_bytes: int = DEFAULT_MEMMAP_BYTES
    ) -> None:
        if cache_dir is not None and encoder.identity is None:
            raise HtebError(f"cannot cache embeddings of {encoder.model_id}: its identity cannot be determined")
        self.encoder = encoder
        self.cache = EmbeddingCache(cache_dir) if cache_dir is not None else None
        self._vectors = VectorStore(memmap_bytes=memmap_bytes)  # (text, prompt key) -> vector, held once
        self._keys: dict[tuple[str | None, str | None], str | None] = {}  # (task name, prompt type) -> prompt key
        self.requested = 0  # texts asked for, duplicates included
        self.encoded = 0  # texts the model actually encoded (cache misses)
        self.from_cache = 0  # rows the on-disk cache gave

    def _key(self, task: DatasetInfo | None, prompt_type: str | None) -> str | None:
        where = (None if task is None else task.name, prompt_type)
        if where not in self._keys:
            self._keys[where] = self.encoder.prompt_key(task, prompt_type)
        return self._keys[where]

    def fill(self, requests: Iterable[Request], *, progress: bool = True, chunk: int = 2048) -> None:
        """Embed what is not known yet: unique keys, cache first, the rest in chunks per prompt key
        (encoded as the first task and prompt type that asked for that key)."""
        from tqdm.auto import tqdm

        keys: list[tuple[str, str | None]] = []
        asked_as: dict[str | None, tuple[DatasetInfo | None, str | None]] = {}
        for task, text, prompt_type in requests:
            self.requested += 1
            prompt = self._key(task, prompt_type)
            asked_as.setdefault(prompt, (task, prompt_type))
            keys.append((text, prompt))
        missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
        if self.cache is not None and missing:
            found = self.cache.get_many(self._cache_keys(missing), self._vectors.dim)
            hits = [(key, found[ckey]) for key, ckey in zip(missing, self._cache_keys(missing)) if ckey in found]
            if hits:
                self.from_cache += len(hits)
                self._vectors.add([key for key, _ in hits], np.stack([vector for _, vector in hits]))
            missing = [k for k in missing if k not in self._vectors]
        by_prompt: dict[str | None, list[str]] = {}
        for text, prompt in missing:
            by_prompt.setdefault(prompt, []).append(text)
        bar = tqdm(total=len(missing), desc="embedding", unit="text", disable=not progress or not missing)
        for prompt, group in by_prompt.items():
            task, prompt_type = asked_as[prompt]
            for start in range(0, len(group), chunk):
                batch = group[start : start + chunk]
                vectors = self.encoder.encode(batch, prompt_type, task=task)
                self._check_finite(vectors, batch)
                new = [(t, prompt) for t in batch]
                if self.cache is not None and self.from_cache and self._vectors.dim not in (None, vectors.shape[1]):
                    raise HtebError(
                        f"embedding cache {self.cache.folder} holds rows of dimension "
                        f"{self._vectors.dim}; {self.encoder.model_id} gives {vectors.shape[1]}: "
                        "it is not what this model wrote"
                    )
                self._vectors.add(new, vectors)
                if self.cache is not None:
                    self.cache.put_many(dict(zip(self._cache_keys(new), vectors)))
                self.encoded += len(batch)
                bar.update(len(batch))
        bar.close()

    def _check_finite(self, vectors: np.ndarray, batch: Sequence[str]) -> None:
        """Refuse NaN or infinite rows before anything holds them: every metric downstream would either fail on
        them or score them as a silent 0 (a NaN cosine is never below a threshold)."""
        bad = ~np.isfinite(vectors).all(axis=1)
        if bad.any():
            first = batch[int(np.argmax(bad))]
            raise HtebError(
                f"{self.encoder.model_id} gave NaN or infinite vectors for {int(bad.sum())} of {len(batch)} texts "
                f"(the first: {visible(first[:80])}): its weights or its arithmetic overflow; nothing was scored"
            )

    def _cache_keys(self, keys: Sequence[tuple[str, str | None]]) -> list[str]:
        base = f"{self.encoder.identity}\0"
        return [hashlib.sha256(f"{base}{prompt or ''}\0{text}".encode()).hexdigest() for text, prompt in keys]

    def view(self, task: DatasetInfo | None) -> Embed:
        """The `Embed` callable the evaluators of `task` take: rows in order; unknown text is a bug, not input."""

        def embed(texts: Sequence[str], prompt_type: str | None) -> np.ndarray:
            prompt = self._key(task, prompt_type)
            try:
                return self._vectors.rows([(t, prompt) for t in texts])
            except KeyError as missing:
                raise KeyError(f"text was not embedded before evaluation: {missing.args[0]!r:.80}") from None

        return embed

    @property
    def unique(self) -> int:
        return len(self._vectors)

    @property
    def dim(self) -> int | None:
        """The dimension of the rows the run scored, whether the model or the cache gave them (None: none yet)."""
        return self._vectors.dim
