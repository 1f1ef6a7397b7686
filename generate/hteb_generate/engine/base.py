"""The engine interface every backend implements, and the backend registry.

Why an interface: the pipeline and the judge make exactly two kinds of model call (batched chat
generation, next-token log-probabilities), so vLLM on a GPU, vLLM on a CPU and plain transformers
are interchangeable, and the on-disk cache wraps any of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hteb_contract.errors import unknown_name

Conversation = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ChatRequest:
    """One chat generation with its own sampling parameters and seed."""

    messages: tuple[tuple[str, str], ...]  # ((role, content), ...)
    temperature: float
    top_p: float
    max_tokens: int
    seed: int


class Engine(ABC):
    """A loaded model: one batched call per method, results in request order."""

    model_id: str
    revision: str
    name: str

    @abstractmethod
    def chat(self, requests: Sequence[ChatRequest]) -> list[str]:
        """Generate one reply per request (one batched call)."""

    @abstractmethod
    def next_token_logprobs(
        self, conversations: Sequence[Conversation], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        """Log-probability of each candidate's first token as the first token of the assistant
        reply (chat template with the generation prompt), without generating."""


EngineFactory = Callable[..., Engine]
ENGINES: dict[str, EngineFactory] = {}


def register_engine(name: str) -> Callable[[EngineFactory], EngineFactory]:
    """Make a backend selectable by name (`--engine NAME`); names are unique."""

    def wrap(factory: EngineFactory) -> EngineFactory:
        if name in ENGINES:
            raise ValueError(f"engine {name!r} is already registered")
        ENGINES[name] = factory
        return factory

    return wrap


def check_engine_name(name: str) -> None:
    """An unknown backend is a user error naming the known ones."""
    if name not in ENGINES:
        raise unknown_name("engine", name, sorted(ENGINES))


def create_engine(name: str, **options: Any) -> Engine:
    """Load the model with backend `name`."""
    check_engine_name(name)
    return ENGINES[name](**options)
