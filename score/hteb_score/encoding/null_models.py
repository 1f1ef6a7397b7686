"""Null models (`hteb-score hteb:random`, `hteb-score hteb:constant`; `--encoder null`): engines that
read no text, shipped with the scorer so that every figure can be checked against a model that knows
nothing. A figure a null model scores above chance measures the evaluator, not the embedding.

MODEL_ID is `hteb:ENGINE`, optionally with settings as a URL query: `hteb:random?norm=10&seed=3`.

- `random`: each text gets its own vector, a standard normal draw of numpy's PCG64 seeded by
  sha256(seed, text), scaled to length `norm`: the same text gets the same vector in every run and
  process, two texts independent directions (uniform on the sphere). Every cosine-based score is at
  chance whatever `norm` is; a score that moves with `norm` is not scale-invariant.
- `constant`: every text gets one vector, of length `norm`: a collapsed model (the card flags
  `collapsed`), whose similarities are all equal.

Settings: `seed` (random only; integer, default 0), `norm` (1e-6 to 1e6, default 1), `dim` (default 384).
The card's model id names the engine and the settings that differ from the defaults; `model.null`
records them all.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

import numpy as np

from hteb_contract.common.registry import Registry
from hteb_contract.errors import HtebError

if TYPE_CHECKING:
    from hteb_contract.sources import DatasetInfo

PREFIX = "hteb:"
FORM = "hteb:ENGINE or hteb:ENGINE?KEY=VALUE&... (ENGINE: random, constant)"
MAX_DIM = 1 << 16
MIN_NORM = 1e-6


@dataclass(frozen=True)
class NullSettings:
    """What a null model's vectors depend on."""

    seed: int = 0
    norm: float = 1.0
    dim: int = 384


def _int(value: str, low: int, high: int) -> int:
    if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:
        raise ValueError(f"an integer from {low} to {high}")
    return int(value)


def _norm(value: str) -> float:
    try:
        norm = float(value)
    except ValueError:
        norm = math.nan
    if not (math.isfinite(norm) and MIN_NORM <= norm <= 1 / MIN_NORM):  # float32 rows stay normal numbers
        raise ValueError(f"a number from {MIN_NORM:g} to {1 / MIN_NORM:g}")
    return norm


#: setting -> its parser (ValueError says what it must be)
PARSERS: dict[str, Callable[[str], Any]] = {
    "seed": lambda v: _int(v, 0, (1 << 63) - 1),
    "norm": _norm,
    "dim": lambda v: _int(v, 1, MAX_DIM),
}


def _random(texts: Sequence[str], settings: NullSettings) -> np.ndarray:
    """One independent direction per text, from sha256(seed, text)."""
    out = np.empty((len(texts), settings.dim), dtype=np.float64)
    for row, text in enumerate(texts):
        digest = hashlib.sha256(f"{settings.seed}\0{text}".encode("utf-8", "surrogatepass")).digest()
        out[row] = np.random.default_rng(np.frombuffer(digest, dtype="<u4")).standard_normal(settings.dim)
    return out


def _constant(texts: Sequence[str], settings: NullSettings) -> np.ndarray:
    """The same vector (all coordinates equal) for every text."""
    return np.ones((len(texts), settings.dim))


@dataclass(frozen=True)
class NullEngine:
    """An engine's vectors (before scaling to `norm`), the settings it takes, and what the card says of it."""

    vectors: Callable[[Sequence[str], NullSettings], np.ndarray]
    settings: tuple[str, ...]
    description: str


ENGINES: Registry[NullEngine] = Registry(
    "null model",
    entries={
        "random": NullEngine(
            _random,
            ("seed", "norm", "dim"),
            "one vector per text: numpy PCG64 standard normal seeded by sha256(seed, text), scaled to norm",
        ),
        "constant": NullEngine(
            _constant, ("norm", "dim"), "one vector for every text (all coordinates equal), of length norm"
        ),
    },
)


@dataclass(frozen=True)
class NullModel:
    """A null engine with its settings, as MODEL_ID names it."""

    engine: str
    settings: NullSettings = field(default_factory=NullSettings)

    @property
    def model_id(self) -> str:
        """`hteb:ENGINE`, with the settings that differ from the defaults as a query, in a fixed order."""
        default, given = asdict(NullSettings()), asdict(self.settings)
        changed = [
            f"{key}={_shown(given[key])}" for key in ENGINES.get(self.engine).settings if given[key] != default[key]
        ]
        return PREFIX + self.engine + ("?" + "&".join(changed) if changed else "")

    def card(self) -> dict[str, Any]:
        """The card's `model.null`: the engine, every setting it takes, and how it makes its vectors."""
        engine = ENGINES.get(self.engine)
        given = asdict(self.settings)
        return {"engine": self.engine, **{key: given[key] for key in engine.settings}, "vectors": engine.description}

    def identity(self) -> str:
        """sha256 over the engine and its settings (`model.identity`, the embedding cache's key)."""
        entry = json.dumps({"null_model": self.engine, **self.card()}, sort_keys=True)
        return f"sha256:{hashlib.sha256(entry.encode()).hexdigest()}"

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """float32 rows of length `norm`, one per text."""
        raw = ENGINES.get(self.engine).vectors(texts, self.settings)
        return (raw * (self.settings.norm / np.linalg.norm(raw, axis=1, keepdims=True))).astype(np.float32)


def _shown(value: float) -> str:
    """A setting as the model id writes it: `10` for 10.0, every digit it needs otherwise."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


def is_null_model(model: str | None) -> bool:
    """Whether MODEL_ID names a null model (`--encoder auto` takes it as one): it starts with `hteb:`."""
    return model is not None and model.startswith(PREFIX)


def parse(model: str) -> NullModel:
    """The null model MODEL_ID names; not of the form, an unknown engine or a bad setting: one line."""
    if not is_null_model(model):
        raise HtebError(f"--encoder null: MODEL_ID {model!r} is not {FORM}")
    name, _, query = model.removeprefix(PREFIX).partition("?")
    engine = ENGINES.get(name)
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError:
        raise HtebError(f"--encoder null: {model!r}: settings are KEY=VALUE joined by &") from None
    given: dict[str, Any] = {}
    for key, value in pairs:
        if key not in engine.settings:
            raise HtebError(
                f"--encoder null: {model!r}: hteb:{name} takes no setting {key!r}; known: {', '.join(engine.settings)}"
            )
        if key in given:
            raise HtebError(f"--encoder null: {model!r} gives {key} twice")
        try:
            given[key] = PARSERS[key](value)
        except ValueError as err:
            raise HtebError(f"--encoder null: {model!r}: {key} must be {err}, got {value!r}") from None
    return NullModel(ENGINES.canonical(name), NullSettings(**given))


@dataclass
class NullEncoder:
    """A null model as the embedding table runs it: no prompts, no device, nothing loaded."""

    model_id: str
    identity: str | None
    model: NullModel
    batch_size: int

    @classmethod
    def load(
        cls,
        target: str,
        *,
        device: str = "auto",
        batch_size: int = 32,
        trust_remote_code: bool = False,
        progress: bool = True,
    ) -> NullEncoder:
        """The null model `target` names (the device and the rest do not apply: it computes on the CPU)."""
        model = parse(target)
        return cls(model.model_id, model.identity(), model, batch_size)

    def prompt_key(self, task: DatasetInfo | None, prompt_type: str | None) -> str | None:
        """No prompts: a text has one vector whatever its role or task."""
        return None

    def encode(self, texts: Sequence[str], prompt_type: str | None, *, task: DatasetInfo | None = None) -> np.ndarray:
        return self.model.encode(texts)

    def card_model(self) -> dict[str, Any]:
        """The result card's `model` section."""
        return {
            "model_id": self.model_id,
            "revision": None,
            "identity": self.identity,
            "embedding_dim": self.model.settings.dim,
            "similarity": "cosine",
            "encoder": "null",
            "null": self.model.card(),
        }

    def settings(self) -> dict[str, Any]:
        """The encode settings for the result card."""
        return {
            "batch_size": self.batch_size,
            "dtype": "float32",
            "normalize": False,
            "device": "cpu",
            "max_seq_length": None,
            "prompts": {},
            "trust_remote_code": False,
        }
