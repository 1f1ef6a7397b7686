"""`paired_cosine` is sklearn's `1 - paired_cosine_distances` (mteb's `cosine_*` keys) to the last bit on rows of
any norm sklearn reads, and the same cosine at norms sklearn does not (a float32 row under 1.2e-6 reads as a zero
vector, one past 1e19 squares to infinity)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import paired_cosine_distances

from hteb_score.evaluators.similarity import paired_cosine


def _rows(seed: int, n: int, dim: int, dtype: type) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((n, dim)) * rng.lognormal(0, 2, (n, 1)) for _ in range(2))
    return a.astype(dtype), b.astype(dtype)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 50), dim=st.integers(1, 64), wide=st.booleans())
def test_paired_cosine_is_sklearns_bit_for_bit_where_sklearn_reads_the_norm(seed, n, dim, wide):
    a, b = _rows(seed, n, dim, np.float64 if wide else np.float32)
    assert np.array_equal(paired_cosine(a, b), 1 - paired_cosine_distances(a, b))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), exponent=st.floats(-30, 30))
def test_paired_cosine_does_not_see_the_norm(seed, exponent):
    a, b = _rows(seed, 20, 16, np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    scale = np.float32(10.0**exponent)
    assert np.allclose(paired_cosine(a * scale, b * scale), paired_cosine(a, b), atol=1e-6)


def test_sklearn_alone_would_read_a_small_row_as_a_zero_vector():
    """Why the rows are scaled first: the failure the test above guards against is real."""
    a, b = (
        rows / np.linalg.norm(rows, axis=1, keepdims=True) * np.float32(1e-6) for rows in _rows(0, 20, 16, np.float32)
    )
    assert np.all(1 - paired_cosine_distances(a, b) > 0.999)
    assert not np.all(paired_cosine(a, b) > 0.999)
