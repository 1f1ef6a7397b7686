"""The fast encode path (issue 11 item 3): every text tokenised once, in one batched call of the
fast tokenizer; batches cut by a token budget from the length-sorted texts; padding and the copy to
the device done by a background thread while the model runs the batch before; one model replica per
device, each fed its share of the batches by a thread of its own; rows returned in input order.

Why: `SentenceTransformer.encode` tokenises batch by batch in the Python thread that also drives
the GPU, with a fixed batch size, so on a fast GPU tokenisation and Python binds it and the GPU
idles. Here the model runs sentence-transformers' own modules (Transformer -> Pooling -> ...,
prompt length for prompt-aware pooling as sentence-transformers computes it), so the embeddings
equal `SentenceTransformer.encode`'s up to float rounding; on CUDA the replicas run in the
precision the model was loaded in (fp16/bf16 with --precision).
"""

from __future__ import annotations

import copy
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

DEFAULT_TOKEN_BUDGET = 16384  # padded tokens per batch (rows x longest row)


def token_ids(model: Any, texts: Sequence[str], prompt: str | None) -> list[list[int]]:
    """Each text's token ids, the prompt prepended as sentence-transformers prepends it, truncated at
    the model's max_seq_length: one call of the fast tokenizer for all of them."""
    texts = [f"{prompt}{t}" for t in texts] if prompt else list(texts)
    return model.tokenizer(texts, truncation=True, max_length=model.max_seq_length, padding=False)["input_ids"]


def budget_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Indices grouped into batches, longest texts first, each within `budget` padded tokens
    (rows x longest row); a text longer than the budget gets a batch of its own."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for index in order:
        longest = lengths[current[0]] if current else lengths[index]
        if current and (len(current) + 1) * longest > budget:
            batches.append(current)
            current = []
        current.append(index)
    if current:
        batches.append(current)
    return batches


def _features(model: Any, ids: list[list[int]], prompt_length: int | None, device: Any) -> dict[str, Any]:
    padded = model.tokenizer.pad({"input_ids": ids}, padding=True, return_tensors="pt")
    features = {key: value.to(device, non_blocking=True) for key, value in padded.items()}
    if "token_type_ids" in _forward_inputs(model) and "token_type_ids" not in features:
        features["token_type_ids"] = features["input_ids"].new_zeros(features["input_ids"].shape)
    features["modality"] = "text"
    if prompt_length is not None:
        features["prompt_length"] = prompt_length
    return features


def _forward_inputs(model: Any) -> set[str]:
    names = getattr(model[0], "model_forward_params", None)
    return set(names) if names else {"input_ids", "attention_mask", "token_type_ids"}


def _prefetched(
    model: Any, ids: list[list[int]], batches: Sequence[list[int]], prompt_length: int | None, device: Any
) -> Iterator[tuple[list[int], dict[str, Any]]]:
    """The batches' padded tensors on `device`, made one batch ahead by a background thread."""
    ready: queue.Queue = queue.Queue(maxsize=2)
    failure: list[BaseException] = []

    def produce() -> None:
        try:
            for batch in batches:
                ready.put((batch, _features(model, [ids[i] for i in batch], prompt_length, device)))
        except BaseException as err:  # handed to the consumer, which raises it
            failure.append(err)
        finally:
            ready.put(None)

    threading.Thread(target=produce, daemon=True).start()
    while (item := ready.get()) is not None:
        yield item
    if failure:
        raise failure[0]


def _run(
    model: Any, ids: list[list[int]], batches: Sequence[list[int]], prompt_length: int | None, out: np.ndarray
) -> None:
    import torch

    device = next(model.parameters()).device
    with torch.inference_mode():
        for batch, features in _prefetched(model, ids, batches, prompt_length, device):
            embedded = model.forward(features)["sentence_embedding"]
            out[batch] = embedded.float().cpu().numpy()


def encode_batched(
    replicas: Sequence[Any],
    texts: Sequence[str],
    *,
    prompt: str | None = None,
    token_budget: int = DEFAULT_TOKEN_BUDGET,
) -> np.ndarray:
    """float32 embeddings of `texts` in input order, encoded by `replicas` (one SentenceTransformer
    per device) together; batches go to replicas in turn, largest first, so their work is even."""
    if not texts:
        return np.zeros((0, replicas[0].get_embedding_dimension()), dtype=np.float32)
    first = replicas[0]
    ids = token_ids(first, texts, prompt)
    prompt_length = first[0]._get_prompt_length(prompt) if prompt else None  # noqa: SLF001 - sentence-transformers' own count
    batches = budget_batches([len(i) for i in ids], token_budget)
    out = np.empty((len(texts), first.get_embedding_dimension()), dtype=np.float32)
    shares = [batches[k :: len(replicas)] for k in range(len(replicas))]
    if len(replicas) == 1:
        _run(first, ids, batches, prompt_length, out)
        return out
    failures: list[BaseException] = []

    def work(replica: Any, share: list[list[int]]) -> None:
        try:
            _run(replica, ids, share, prompt_length, out)
        except BaseException as err:
            failures.append(err)

    threads = [threading.Thread(target=work, args=(r, s)) for r, s in zip(replicas, shares)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return out


def replicate(model: Any, devices: Sequence[str]) -> list[Any]:
    """One replica of `model` per device (the model itself on the first)."""
    replicas = [model.to(devices[0])]
    for device in devices[1:]:
        replicas.append(copy.deepcopy(model).to(device))
    return replicas
