"""A collapsed model: its embeddings of a dataset's texts are all (near-)identical, so every similarity
is the same and nothing it scores there says anything of the texts. Its task scores are chance (or
undefined), a transformation changes none of its vectors, and a delta of 0 or a pass rate of 1 would
read as perfect robustness. `hteb:constant` is one by construction; a real model can be one too (a
broken checkpoint, a pooling that ignores its input).

Measured per dataset on the distinct (text, prompt) pairs the run embedded for it (the first SAMPLE, in
the order they were asked for): the mean cosine between the embeddings of two different texts, from
the mean c of their unit vectors, (n|c|^2 - 1) / (n - 1). At or above COLLAPSED_COSINE, or with every
embedding equal (zero vectors included), the dataset is flagged `collapsed` on the card, and its
per-item measures are not taken. Real models sit far below: a narrow cone such as e5's has mean
cosines of 0.7-0.8 between unrelated texts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from hteb_score.encoding.encoder import EmbeddingTable, Request
from hteb_score.flags import Flag

#: A dataset whose texts' embeddings have at least this mean cosine between two of them is collapsed.
COLLAPSED_COSINE = 0.999
#: The distinct texts of a dataset the measure reads (its cost stays bounded on a large corpus).
SAMPLE = 4096


def mean_pairwise_cosine(vectors: np.ndarray) -> float:
    """The mean cosine between two different rows (a zero row counts as cosine 0 with every row)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    units = vectors / np.where(norms == 0, 1.0, norms)
    n = len(units)
    total = units.sum(axis=0)
    return float((total @ total - float((norms > 0).sum())) / (n * (n - 1)))


def collapse_flag(requests: Sequence[Request], table: EmbeddingTable) -> Flag | None:
    """The `collapsed` flag of the dataset whose texts `requests` asked for (all of one dataset,
    embedded in `table`), or None; the caller names the dataset (`Flag.of`)."""
    if not requests:
        return None
    distinct = list(dict.fromkeys((text, prompt) for _, text, prompt in requests))[:SAMPLE]
    if len(distinct) < 2:
        return None
    by_prompt: dict[str | None, list[str]] = defaultdict(list)
    for text, prompt in distinct:
        by_prompt[prompt].append(text)
    embed = table.view(requests[0][0])
    vectors = np.concatenate(
        [np.asarray(embed(texts, prompt), dtype=np.float64) for prompt, texts in by_prompt.items()]
    )
    identical = bool((vectors == vectors[0]).all())
    cosine = mean_pairwise_cosine(vectors)
    if not identical and cosine < COLLAPSED_COSINE:
        return None
    said = "every one is the same vector" if identical else f"the mean cosine between two of them is {cosine:.4f}"
    return Flag(
        "collapsed",
        f"the model's embeddings of {len(vectors)} distinct texts of this dataset are "
        f"(near-)identical ({said}): its scores here are chance, its deltas say nothing of robustness, "
        "and its per-item measures are not taken",
    )
