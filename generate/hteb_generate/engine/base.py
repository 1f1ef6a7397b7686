"""The engine interface every backend implements, and the backend registry.

Why an interface: the pipeline and the judge make exactly two kinds of model call (batched chat
generation, next-token log-probabilities), so vLLM on a GPU, vLLM on a CPU and plain transformers
are interchangeable, and the on-disk cache wraps any of them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from hteb_contract.errors import HtebError
from hteb_contract.common.registry import Registry

Conversation = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class ChatResult:
    """One generated reply and why generation stopped: "stop" (end of turn, a stop token),
    "length" (max_tokens or the context length reached: the text is cut), or None (unknown)."""

    text: str
    finish_reason: str | None


@dataclass(frozen=True)
class ChatRequest:
    """One chat generation with its own sampling parameters and seed. `top_k`: sample among the k most
    likely tokens only (a retry, with the model's published default: Gemma 3's 64); 0, the whole vocabulary."""

    messages: tuple[tuple[str, str], ...]  # ((role, content), ...)
    temperature: float
    top_p: float
    max_tokens: int
    seed: int
    top_k: int = 0


class Engine(ABC):
    """A loaded model: one batched call per method, results in request order.

    A backend's constructor takes `(model_path, *, model_id, revision, **options)`; `options`
    names the keyword options it takes (`threads`, `tensor_parallel_size`, ...), nothing else.
    """

    model_id: str
    revision: str
    options: ClassVar[tuple[str, ...]] = ()
    #: the options that can change an answer (they key the call cache: engine_plan.engine_setup); the
    #: others (batch size, threads of the transformers engine, whose batches are canonical) do not
    answer_options: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def worker_resources(cls, options: Mapping[str, Any]) -> dict[str, float]:
        """What one copy of this engine takes on a Ray worker: its torch threads' CPU cores."""
        return {"num_cpus": options.get("threads") or 1}

    def close(self) -> None:
        """Free what the engine holds beyond its memory (worker processes): nothing here."""

    def facts(self) -> list[dict[str, Any]]:
        """What the loaded engine found that can move its answers though no request or option says it, one entry
        per copy of the model (a Ray engine's workers): vLLM's KV cache, sized by profiling the GPU's free memory,
        decides when a batch is preempted. Nothing here."""
        return []

    @abstractmethod
    def chat_results(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        """Generate one reply per request (one batched call), with its finish reason."""

    def chat_results_many(self, chunks: Sequence[Sequence[ChatRequest]]) -> Iterator[tuple[int, list[ChatResult]]]:
        """`chat_results` of each chunk, yielded as (chunk index, results) when done: one after the
        other here; a distributed engine runs the chunks side by side, vLLM's feeds them as one stream (the next
        beside the tail of the one before), and each yields them as they finish."""
        for index, chunk in enumerate(chunks):
            yield index, self.chat_results(chunk)

    def next_token_logprobs_many(
        self, chunks: Sequence[Sequence[Conversation]], candidates: Sequence[str]
    ) -> Iterator[tuple[int, list[dict[str, float]]]]:
        """`next_token_logprobs` of each chunk, as `chat_results_many`."""
        for index, chunk in enumerate(chunks):
            yield index, self.next_token_logprobs(chunk, candidates)

    def chat(self, requests: Sequence[ChatRequest]) -> list[str]:
        """The replies' texts only (what the judge reads)."""
        return [result.text for result in self.chat_results(requests)]

    @abstractmethod
    def next_token_logprobs(
        self, conversations: Sequence[Conversation], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        """Log-probability of each candidate's first token as the first token of the assistant
        reply (chat template with the generation prompt), without generating."""

    def first_token_ids(self, tokenizer: Any, candidates: Sequence[str]) -> dict[str, int]:
        """Each candidate's first token id under `tokenizer`; a candidate without tokens is an error."""
        ids = {}
        for candidate in candidates:
            tokens = tokenizer.encode(candidate, add_special_tokens=False)
            if not tokens:
                raise HtebError(f"candidate {candidate!r} has no token in {self.model_id}")
            ids[candidate] = tokens[0]
        return ids


THINKING_SWITCH = "enable_thinking"


def chat_template_kwargs(template: str | Mapping[str, str] | None) -> dict[str, Any]:
    """`{"enable_thinking": False}` when the model's chat template reads that variable, else {}.

    Why: a Qwen3-style template opens a `<think>` block unless told not to, and the judge's
    8-token answers would be spent inside it; templates without the variable get nothing, so their
    prompts stay byte for byte what they were. A tokenizer may hold several named templates.
    """
    texts = template.values() if isinstance(template, Mapping) else [template or ""]
    return {THINKING_SWITCH: False} if any(THINKING_SWITCH in text for text in texts) else {}


class EngineBackend(Protocol):
    """A backend as `ENGINES` holds it: an `Engine` class (its constructor also takes, as keywords,
    the `options` it names)."""

    @property
    def options(self) -> tuple[str, ...]: ...

    @property
    def answer_options(self) -> tuple[str, ...]: ...

    def __call__(self, model_path: str, *, model_id: str, revision: str) -> Engine: ...

    def worker_resources(self, options: Mapping[str, Any]) -> dict[str, float]: ...


#: `--engine NAME` -> backend class; the backends register themselves when the first lookup imports them.
ENGINES: Registry[EngineBackend] = Registry(
    "engine", modules=("hteb_generate.engine.transformers_engine", "hteb_generate.engine.vllm_engine")
)


def check_engine_options(name: str, options: Iterable[str]) -> None:
    """An option backend `name` does not take is a user error naming both (nothing is dropped silently)."""
    backend = ENGINES.get(name)
    for option in options:
        if option not in backend.options:
            takes = ", ".join(backend.options)
            raise HtebError(f"engine {ENGINES.canonical(name)!r} does not take option {option!r} (it takes: {takes})")


def create_engine(name: str, *, model_path: str, model_id: str, revision: str, **options: Any) -> Engine:
    """Load the model with backend `name`."""
    check_engine_options(name, options)
    return ENGINES.get(name)(model_path, model_id=model_id, revision=revision, **options)
