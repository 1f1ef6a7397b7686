"""CPU backend on plain transformers: exact greedy decoding, left-padded batches.

Why a canonical batch order: requests are sorted by (prompt length, token ids) before they are
cut into batches, so the batches depend only on the set of pending requests, never on the order
the pipeline produced them in; similar lengths also keep padding small. Sampled requests draw
from a per-row generator seeded with the request's seed, so they batch too. The prompt pass
computes logits for the last position only (`logits_to_keep=1`): the full (batch, length,
vocabulary) tensor would cost a fifth of the time and gigabytes of memory for nothing.
A reply's finish reason is "length" when it used all of `max_tokens` without a stop token, else
"stop". Sampling keeps the `top_k` most likely tokens (when set), then the smallest prefix reaching `top_p`,
as vLLM does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from hteb_contract.errors import HtebError

from hteb_generate.engine.base import ENGINES, ChatRequest, ChatResult, Conversation, Engine, chat_template_kwargs


@ENGINES.register("transformers")
class TransformersEngine(Engine):
    options = ("batch_size", "threads")

    def __init__(
        self, model_path: str, *, model_id: str, revision: str, batch_size: int = 16, threads: int | None = None
    ) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if not Path(model_path).is_dir():
            raise HtebError(f"transformers engine needs a local model folder; {model_path} is not one")
        if threads:
            torch.set_num_threads(threads)
        self._torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_path)
        self.model = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
        self.model.eval()
        self.model_id, self.revision, self.batch_size = model_id, revision, batch_size
        self.template_kwargs = chat_template_kwargs(self.tokenizer.chat_template)

    def _prompt_ids(self, messages: Conversation) -> list[int]:
        chat = [{"role": role, "content": content} for role, content in messages]
        ids = self.tokenizer.apply_chat_template(
            chat, add_generation_prompt=True, tokenize=True, **self.template_kwargs
        )
        if isinstance(ids, Mapping):  # transformers 5 returns a BatchEncoding
            ids = ids["input_ids"]
        return list(ids)

    def _groups(self, prompts: list[list[int]], keys: list[tuple]) -> list[list[int]]:
        """Indices grouped by sampling key, sorted by (length, ids) within a key, chunked."""
        by_key: dict[tuple, list[int]] = {}
        for index, key in enumerate(keys):
            by_key.setdefault(key, []).append(index)
        groups: list[list[int]] = []
        for key in sorted(by_key):
            members = sorted(by_key[key], key=lambda i: (len(prompts[i]), prompts[i]))
            groups.extend(members[i : i + self.batch_size] for i in range(0, len(members), self.batch_size))
        return groups

    def _batch(self, prompts: list[list[int]]) -> tuple:
        """Left-padded input ids and attention mask (generation continues from the right edge)."""
        torch = self._torch
        width = max(len(p) for p in prompts)
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.tokenizer.eos_token_id
        ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        return ids, mask

    def chat_results(self, requests: Sequence[ChatRequest]) -> list[ChatResult]:
        prompts = [self._prompt_ids(r.messages) for r in requests]
        results: list[ChatResult] = [ChatResult("", None)] * len(requests)
        for group in self._groups(prompts, [(r.max_tokens,) for r in requests]):
            batch = [requests[i] for i in group]
            for index, (tokens, stopped) in zip(group, self._decode([prompts[i] for i in group], batch)):
                # one sequence of ids decodes to one str (transformers types decode for batches too)
                text = self.tokenizer.decode(tokens, skip_special_tokens=True).strip()  # type: ignore[union-attr]
                results[index] = ChatResult(text, "stop" if stopped else "length")
        return results

    def _stop_ids(self) -> set[int]:
        stop = self.model.generation_config.eos_token_id
        ids = set(stop if isinstance(stop, list) else [stop] if stop is not None else [])
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        return ids

    def _decode(self, prompts: list[list[int]], batch: list[ChatRequest]) -> list[tuple[list[int], bool]]:
        """Greedy or seeded sampling per row, in one batch: each row draws from its own generator,
        so its output does not depend on which rows share the batch. Each row: its tokens, and
        whether it ended on a stop token (False: max_tokens ran out)."""
        torch = self._torch
        ids, mask = self._batch(prompts)
        positions = (mask.cumsum(-1) - 1).clamp(min=0)
        generators = [torch.Generator().manual_seed(r.seed) for r in batch]
        stop = self._stop_ids()
        tokens: list[list[int]] = [[] for _ in batch]
        done = [False] * len(batch)
        with torch.no_grad():
            out = self.model(
                input_ids=ids, attention_mask=mask, position_ids=positions, use_cache=True, logits_to_keep=1
            )
            for _ in range(batch[0].max_tokens):
                logits = out.logits[:, -1, :].float()
                chosen = [self._choose(logits[row], request, generators[row]) for row, request in enumerate(batch)]
                for row, token in enumerate(chosen):
                    if not done[row]:
                        if token in stop:
                            done[row] = True
                        else:
                            tokens[row].append(token)
                if all(done):
                    break
                mask = torch.cat([mask, torch.ones((len(batch), 1), dtype=mask.dtype)], dim=1)
                positions = positions[:, -1:] + 1
                step = torch.tensor([[t] for t in chosen])
                out = self.model(
                    input_ids=step,
                    attention_mask=mask,
                    position_ids=positions,
                    past_key_values=out.past_key_values,
                    use_cache=True,
                )
        return list(zip(tokens, done))

    def _choose(self, logits, request: ChatRequest, generator) -> int:
        torch = self._torch
        if request.temperature == 0:
            return int(torch.argmax(logits))
        if request.top_k and request.top_k < logits.shape[-1]:  # the k most likely tokens, as vLLM's top_k
            kth = torch.topk(logits, request.top_k).values[-1]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        probs = torch.softmax(logits / request.temperature, dim=-1)
        if request.top_p < 1:
            ordered, order = torch.sort(probs, descending=True)
            keep = ordered.cumsum(-1) - ordered < request.top_p  # the smallest prefix reaching top_p
            probs = torch.zeros_like(probs).scatter(0, order[keep], ordered[keep])
        return int(torch.multinomial(probs / probs.sum(), 1, generator=generator))

    def next_token_logprobs(
        self, conversations: Sequence[Conversation], candidates: Sequence[str]
    ) -> list[dict[str, float]]:
        torch = self._torch
        token_of = self.first_token_ids(self.tokenizer, candidates)
        prompts = [self._prompt_ids(c) for c in conversations]
        results: list[dict[str, float]] = [{} for _ in conversations]
        for group in self._groups(prompts, [()] * len(prompts)):
            ids, mask = self._batch([prompts[i] for i in group])
            positions = (mask.cumsum(-1) - 1).clamp(min=0)
            with torch.no_grad():
                logits = self.model(
                    input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=1
                ).logits[:, -1, :]
            logprobs = torch.log_softmax(logits.float(), dim=-1)
            for row, index in enumerate(group):
                results[index] = {c: float(logprobs[row, t]) for c, t in token_of.items()}
        return results
