"""The paired bootstrap over items: two models scored on the same items, the items drawn with
replacement (within each subset, so every subset keeps its size) and both models' scores computed
on every draw (Efron & Tibshirani 1993 ch. 16; Koehn 2004; Berg-Kirkpatrick et al. 2012).

`draws` gives the draws as rows of counts, in blocks (a block's memory is REPLICATES_PER_BLOCK x items);
`paired_verdict` turns the difference on the items and its replicates into the percentile CI and the
two-sided p of the centred bootstrap test (Hall & Wilson 1991): the replicates minus the difference
stand in for the difference's distribution under "no difference", and p is the share of them at
least as far from 0 as the difference itself, counted with the observed one ((1 + k) / (1 + B)).
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

#: replicates of a per-dataset test: p can reach 1/2001, below Holm's bar for the first of 15 datasets (0.05/15)
REPLICATES = 2000
REPLICATES_PER_BLOCK = 250
CONFIDENCE = 0.95


def draws(
    strata: Sequence[np.ndarray], n_items: int, key: str, *, seed: int = 0, replicates: int = REPLICATES
) -> Iterator[np.ndarray]:
    """Blocks of (replicates, n_items) counts: per stratum (the positions of a subset's items), its size
    drawn with replacement among its items. Seeded by `seed` and `key` (a dataset's name), so every
    comparison of the same items draws the same samples whichever models it holds."""
    rng = np.random.default_rng([seed, zlib.crc32(key.encode())])
    for start in range(0, replicates, REPLICATES_PER_BLOCK):
        size = min(REPLICATES_PER_BLOCK, replicates - start)
        block = np.zeros((size, n_items))
        for positions in strata:
            block[:, positions] = rng.multinomial(
                len(positions), np.full(len(positions), 1 / len(positions)), size=size
            )
        yield block


@dataclass(frozen=True)
class PairedVerdict:
    """A difference on the items, its bootstrap percentile CI and centred-bootstrap p."""

    difference: float
    ci: tuple[float, float]
    p: float
    replicates: int


def paired_verdict(difference: float, replicates: np.ndarray) -> PairedVerdict:
    """The verdict on `difference` from its bootstrap `replicates` (undefined replicates dropped)."""
    defined = replicates[np.isfinite(replicates)]
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(defined, [tail, 1 - tail])
    extreme = int(np.sum(np.abs(defined - difference) >= abs(difference)))
    return PairedVerdict(float(difference), (float(low), float(high)), (1 + extreme) / (1 + len(defined)), len(defined))
