"""Similarities computed the way mteb 2.26 computes them, so tied scores stay tied (or not) exactly
as in mteb: pairwise tasks use sklearn's paired cosine; matrices (summarisation, reranking) use
torch float32 `normalize(p=2) @ normalize(p=2).T` (mteb.similarity_functions.cos_sim)."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.metrics.pairwise import paired_cosine_distances


def normalize(embeddings: np.ndarray) -> torch.Tensor:
    """L2-normalised float32 rows, with torch's eps handling (zero vectors stay zero)."""
    return torch.nn.functional.normalize(torch.as_tensor(np.asarray(embeddings, dtype=np.float32)), p=2, dim=1)


def cos_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos(a[i], b[j]) for all i, j in float32, as mteb's `cos_sim`."""
    return (normalize(a) @ normalize(b).T).numpy()


def dot_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a[i] . b[j] in float32, as mteb's `dot_score`."""
    return (
        torch.as_tensor(np.asarray(a, dtype=np.float32)) @ torch.as_tensor(np.asarray(b, dtype=np.float32)).T
    ).numpy()


def pairwise_cos_torch(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos(a[i], b[i]) as mteb's `pairwise_cos_sim` (the `similarity_*` keys of a cosine model)."""
    return (normalize(a) * normalize(b)).sum(dim=-1).numpy()


def paired_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """cos(a[i], b[i]) as sklearn's `1 - paired_cosine_distances` (mteb's `cosine_*` keys), bit for bit, on rows
    first scaled by a power of two (`power_of_two_scaled`): sklearn takes a float32 row of norm below 1.2e-6 for a
    zero vector and scores it 1 against anything, so a model of small vectors would score every pair the same."""
    return 1 - paired_cosine_distances(power_of_two_scaled(a), power_of_two_scaled(b))


def power_of_two_scaled(rows: np.ndarray) -> np.ndarray:
    """Each row times the power of two that brings its largest |value| into [0.5, 1): exact in binary floating
    point (only exponents change), so any norm-invariant figure of the rows is unchanged to the last bit, and no
    row is too small or too large for its norm to be computed. A zero row stays zero."""
    rows = np.asarray(rows)
    _, exponent = np.frexp(np.abs(rows).max(axis=1, keepdims=True))
    return np.ldexp(rows, -exponent)
