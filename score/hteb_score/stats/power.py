"""How often the model-against-model test finds a real gap: a seeded simulation of what
`report.compare.pairwise` runs (per pair, the Wilcoxon signed-rank test over datasets; Shaffer over all pairs).

The simulated comparison: `models` models on `datasets` datasets; the last is ahead of the others,
which are equal, by `gap` points on every dataset; each model's score on each dataset carries an
independent normal error of SD `sd / sqrt(2)`, so the per-dataset difference of two models has SD
`sd` (`pooled_difference_sd` measures that spread on real scores; a dataset's own level cancels in
the differences). Found: a planted pair (the model ahead against one of the others) separated with
the right winner. The signed-rank test depends on the differences only through their signs and
ranks, so the power is a function of gap / sd: `detectable_gap` is computed once in SDs and scaled.

The same seed draws the same errors at every gap (common random numbers), and a larger gap can only
lower a planted pair's p-value, so the power grows with the gap and a bisection finds the smallest
gap that reaches the target.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import numpy as np
from scipy import stats

from hteb_score.stats.shaffer import step_divisors
from hteb_score.stats.signed_rank_distribution import signed_rank_counts
from hteb_score.stats.step_down import adjust_rows

ALPHA = 0.05
POWER = 0.8
REPS = 2000
SEED = 0
#: up to this many datasets scipy's Wilcoxon (method "auto") gives the exact p of untied differences, past it
#: the normal approximation
EXACT_MAX_N = 50


@dataclass(frozen=True)
class Power:
    """Shares over the simulated comparisons. `alone`: the planted pair against the first equal
    model, tested by itself (Wilcoxon p < alpha); `holm`, `shaffer`: the planted pairs found among
    all pairs, each correction; `false`: comparisons in which Shaffer separates two equal models."""

    gap: float
    sd: float
    datasets: int
    models: int
    reps: int
    alone: float
    holm: float
    shaffer: float
    false: float


def pooled_difference_sd(scores: Mapping[str, Mapping[str, float]]) -> float | None:
    """The spread of two models' per-dataset differences, pooled over the pairs: the root mean of each
    pair's sample variance over the datasets every model has (None with fewer than 2 models or datasets)."""
    models = sorted(scores)
    shared = sorted(set.intersection(*(set(scores[m]) for m in models))) if models else []
    if len(models) < 2 or len(shared) < 2:
        return None
    variances = [
        np.var([scores[a][d] - scores[b][d] for d in shared], ddof=1) for a, b in itertools.combinations(models, 2)
    ]
    return float(np.sqrt(np.mean(variances)))


def simulate(
    gap: float, sd: float, datasets: int, *, models: int = 4, reps: int = REPS, seed: int = SEED
) -> np.ndarray:
    """Scores (reps, models, datasets) of `reps` simulated comparisons: the last model `gap` ahead."""
    scores = np.random.default_rng(seed).normal(0, sd * np.sqrt(0.5), size=(reps, models, datasets))
    scores[:, -1] += gap
    return scores


def pair_tests(scores: np.ndarray) -> tuple[list[tuple[int, int]], np.ndarray, np.ndarray]:
    """Every pair (a, b), a < b, of the models of `scores` (reps, models, datasets), and per comparison
    and pair the two-sided Wilcoxon p of the differences b - a and whether b is the one ahead (its
    positive ranks outweigh the negative: the side the Hodges-Lehmann shift takes)."""
    models, datasets = scores.shape[1:]
    pairs = list(itertools.combinations(range(models), 2))
    differences = np.stack([scores[:, b] - scores[:, a] for a, b in pairs], axis=1)
    ranks = stats.rankdata(np.abs(differences), axis=-1)
    positive = np.sum(np.where(differences > 0, ranks, 0), axis=-1)
    return pairs, _two_sided_p(positive, datasets), positive > datasets * (datasets + 1) / 4


def _two_sided_p(positive: np.ndarray, n: int) -> np.ndarray:
    """scipy's two-sided Wilcoxon p from the positive rank sums T+ of n untied differences (normal errors
    tie with probability 0), for every row at once: up to EXACT_MAX_N twice the smaller tail of the exact
    null distribution, capped at 1; past it the normal approximation without continuity correction."""
    mean = n * (n + 1) / 4
    if n > EXACT_MAX_N:
        return 2 * stats.norm.sf(np.abs(positive - mean) / np.sqrt(n * (n + 1) * (2 * n + 1) / 24))
    cdf = np.cumsum(np.asarray(signed_rank_counts(n), dtype=float)) / 2.0**n
    smaller = np.minimum(positive, 2 * mean - positive).astype(int)
    return np.minimum(1.0, 2 * cdf[smaller])


def adjusted(p: np.ndarray, models: int, correction: str) -> np.ndarray:
    """Each row of p-values (all pairs of `models`) adjusted by "holm" or "shaffer"."""
    tested = p.shape[-1]
    divisors = {"holm": range(tested, 0, -1), "shaffer": step_divisors(tested, models)}[correction]
    return adjust_rows(p, divisors)


def power(
    gap: float, sd: float, datasets: int, *, models: int = 4, reps: int = REPS, alpha: float = ALPHA, seed: int = SEED
) -> Power:
    """The shares `Power` names, over `reps` seeded simulated comparisons."""
    if sd <= 0 or datasets < 1 or models < 2 or reps < 1:
        raise ValueError("power needs sd > 0, at least one dataset, two models and one simulation")
    pairs, p, ahead = pair_tests(simulate(gap / sd, 1.0, datasets, models=models, reps=reps, seed=seed))
    planted = np.array([b == models - 1 for _, b in pairs])
    right = np.where(planted, ahead, True)  # equal models separated either way: a false separation
    holm, shaffer = ((adjusted(p, models, c) < alpha) & right for c in ("holm", "shaffer"))
    alone = (p[:, np.argmax(planted)] < alpha) & ahead[:, np.argmax(planted)]
    return Power(
        gap,
        sd,
        datasets,
        models,
        reps,
        alone=float(np.mean(alone)),
        holm=float(np.mean(holm[:, planted])),
        shaffer=float(np.mean(shaffer[:, planted])),
        false=float(np.mean(np.any(shaffer[:, ~planted], axis=1))),
    )


@cache
def _detectable_in_sds(
    datasets: int, models: int, which: str, target: float, reps: int, alpha: float, seed: int
) -> float | None:
    def reaches(gap: float) -> bool:
        return getattr(power(gap, 1.0, datasets, models=models, reps=reps, alpha=alpha, seed=seed), which) >= target

    high = 1.0
    while not reaches(high):
        high *= 2
        if high > 64:  # too few datasets for the test to reach alpha whatever the gap
            return None
    low = 0.0
    while high - low > 0.005:
        middle = (low + high) / 2
        low, high = (low, middle) if reaches(middle) else (middle, high)
    return high


def detectable_gap(
    sd: float,
    datasets: int,
    *,
    models: int = 4,
    which: str = "shaffer",
    target: float = POWER,
    reps: int = REPS,
    alpha: float = ALPHA,
    seed: int = SEED,
) -> float | None:
    """The smallest gap (in the unit of `sd`, to half a percent of it) found with probability `target`:
    `which` is "alone" (one pair tested by itself) or "shaffer" / "holm" (among all pairs of `models`);
    None where no gap reaches it (too few datasets)."""
    if which not in ("alone", "holm", "shaffer"):
        raise ValueError(f"which must be alone, holm or shaffer, not {which!r}")
    if sd <= 0:
        raise ValueError("sd must be positive")
    in_sds = _detectable_in_sds(datasets, models, which, target, reps, alpha, seed)
    return None if in_sds is None else in_sds * sd
