"""Hodges-Lehmann location shift of paired differences, with a 95% confidence interval.

The estimate is the median of the Walsh averages (d_i + d_j) / 2, i <= j. The default interval is
distribution-free: the k-th smallest and k-th largest Walsh averages, with k from the exact
signed-rank null distribution — the set of shifts the two-sided Wilcoxon test would not reject;
past EXACT_MAX_N differences k comes from its normal approximation (`method` "walsh-normal").
With fewer than 6 differences no interval reaches 95%; the widest one is returned and
`confidence` says what it actually covers. `method="bootstrap"` gives a seeded percentile
bootstrap interval of the estimate instead (1000 resamples by default). An undefined difference
(None, NaN, inf) leaves shift and interval None, with the reason in `undefined`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from hteb_score.stats.bootstrap import percentile_bootstrap
from hteb_score.stats.signed_rank_distribution import lower_critical_value, signed_rank_cdf
from hteb_score.stats.undefined import undefined_reason
from hteb_score.stats.wilcoxon import DEFAULT_DECIMALS, rounded_differences

CI_METHODS = ("walsh", "bootstrap")
#: Past this many non-zero differences the Walsh interval takes k from the normal approximation of
#: the signed-rank distribution and says so (method WALSH_NORMAL); scipy's wilcoxon does the same.
EXACT_MAX_N = 50
WALSH_NORMAL = "walsh-normal"


@dataclass(frozen=True)
class HodgesLehmannResult:
    """Shift estimate and interval; `confidence` is the coverage the interval achieves."""

    shift: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float | None
    method: str
    n: int
    undefined: str | None = None  # why the fields above are None


def walsh_averages(differences: Sequence[float]) -> np.ndarray:
    """All (d_i + d_j) / 2 with i <= j, sorted: n(n+1)/2 values."""
    d = np.asarray(differences, dtype=float)
    i, j = np.triu_indices(len(d))
    return np.sort((d[i] + d[j]) / 2.0)


def hodges_lehmann_shift(differences: Sequence[float]) -> float:
    """The median of the Walsh averages."""
    if len(differences) == 0:
        raise ValueError("Hodges-Lehmann shift needs at least one difference")
    return float(np.median(walsh_averages(differences)))


def hodges_lehmann(
    differences: Sequence[float | None],
    *,
    confidence: float = 0.95,
    method: str = "walsh",
    n_resamples: int = 1000,
    seed: int = 0,
    decimals: int = DEFAULT_DECIMALS,
) -> HodgesLehmannResult:
    """HL shift with a distribution-free (`walsh`) or percentile-bootstrap (`bootstrap`) interval.

    Zero differences are dropped first, matching the Wilcoxon test's default zero rule, so the
    interval is the inversion of the test that is reported beside it.
    """
    if method not in CI_METHODS:
        raise ValueError(f"method must be one of {', '.join(CI_METHODS)}, not {method!r}")
    reason = undefined_reason(differences, "differences")
    if reason is not None:
        return HodgesLehmannResult(None, None, None, None, method, len(differences), reason)
    d = rounded_differences(differences, decimals)
    nonzero = d[d != 0]
    if len(nonzero) == 0:
        return HodgesLehmannResult(0.0, 0.0, 0.0, 1.0, method, 0)
    shift = hodges_lehmann_shift(nonzero)
    if len(nonzero) == 1:
        return HodgesLehmannResult(shift, shift, shift, 0.0, method, 1)
    if method == "bootstrap":
        low, high = percentile_bootstrap(
            hodges_lehmann_shift, nonzero, confidence=confidence, n_resamples=n_resamples, seed=seed
        )
        return HodgesLehmannResult(shift, low, high, confidence, method, len(nonzero))
    walsh = walsh_averages(nonzero)
    n = len(nonzero)
    if n > EXACT_MAX_N:  # the exact distribution costs about n^3: 3,003 datasets took minutes
        k, achieved = normal_critical_value(n, 1.0 - confidence)
        method = WALSH_NORMAL
    else:
        k = max(lower_critical_value(n, 1.0 - confidence), 1)
        achieved = 1.0 - 2.0 * signed_rank_cdf(k - 1, n)
    return HodgesLehmannResult(shift, float(walsh[k - 1]), float(walsh[len(walsh) - k]), achieved, method, n)


def normal_critical_value(n: int, alpha: float) -> tuple[int, float]:
    """k and the coverage of the Walsh interval from the normal approximation of the signed-rank
    sum (mean n(n+1)/4, variance n(n+1)(2n+1)/24, continuity-corrected; Hollander & Wolfe Sec. 3.3),
    what scipy's wilcoxon also uses past n = 50.

    >>> normal_critical_value(51, 0.05), lower_critical_value(51, 0.05)
    ((454, 0.9504...), 454)
    """
    mean, sd = n * (n + 1) / 4.0, math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    k = max(int(math.floor(mean + 0.5 - stats.norm.ppf(1.0 - alpha / 2.0) * sd)), 1)
    achieved = 1.0 - 2.0 * float(stats.norm.cdf((k - 1 + 0.5 - mean) / sd))
    return k, achieved


def coverage_note(confidence: float | None, nominal: float = 0.95) -> str:
    """ " (93.8%)" when an interval covers less than `nominal` (too few non-zero differences for
    it), else "": a table headed "95% CI" must say which of its intervals are not."""
    if confidence is None or confidence >= nominal - 1e-12:
        return ""
    return f" ({confidence:.1%})"
