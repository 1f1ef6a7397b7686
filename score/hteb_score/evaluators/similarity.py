"""The similarity arithmetic the evaluators share, computed the way mteb computes it (same library,
same dtype), because ranks and ties depend on the last bits of a float32 cosine."""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import paired_cosine_distances


def paired_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """sklearn's `1 - paired_cosine_distances` (mteb's STS/pair `cosine_scores`), input dtype."""
    return 1 - paired_cosine_distances(a, b)


def torch_pairwise_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """mteb's `pairwise_cos_sim`: torch L2-normalise, then row-wise dot, float32."""
    import torch

    ta = torch.nn.functional.normalize(torch.as_tensor(a), p=2, dim=1)
    tb = torch.nn.functional.normalize(torch.as_tensor(b), p=2, dim=1)
    return (ta * tb).sum(dim=-1).numpy()


def torch_cosine_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """mteb's `cos_sim`: torch L2-normalise both, then a @ b.T, float32."""
    import torch

    ta = torch.as_tensor(a)
    tb = torch.as_tensor(b)
    if ta.ndim == 1:
        ta = ta.reshape(1, -1)
    if tb.ndim == 1:
        tb = tb.reshape(1, -1)
    ta = torch.nn.functional.normalize(ta, p=2, dim=1)
    tb = torch.nn.functional.normalize(tb, p=2, dim=1)
    return (ta @ tb.transpose(0, 1)).numpy()


def torch_dot_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """mteb's `dot_score`: a @ b.T in torch, float32."""
    import torch

    ta = torch.as_tensor(a)
    tb = torch.as_tensor(b)
    if ta.ndim == 1:
        ta = ta.reshape(1, -1)
    if tb.ndim == 1:
        tb = tb.reshape(1, -1)
    return (ta @ tb.transpose(0, 1)).numpy()


def normalized(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero), float32, C-contiguous (for faiss)."""
    import torch

    out = torch.nn.functional.normalize(torch.as_tensor(np.asarray(vectors, dtype=np.float32)), p=2, dim=1)
    return np.ascontiguousarray(out.numpy())
