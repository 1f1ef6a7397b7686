"""Holm's step-down correction (Holm 1979) — the plain one, not Holm-Sidak.

statsmodels' `multipletests` defaults to Holm-Sidak (`"hs"`); HTEB reports plain Holm. For the
pairs of several models, where the nulls constrain each other, `stats.shaffer` is the sharper one.
"""

from __future__ import annotations

from collections.abc import Sequence

from hteb_score.stats.step_down import step_down


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm-adjusted p-values in the input order: monotone in the sorted order and capped at 1.

    For sorted p_(1) <= ... <= p_(m): adjusted p_(i) = max_{j<=i} min(1, (m - j + 1) p_(j)).
    An undefined p-value (None or NaN: its test could not be run) stays None and is not counted
    in m: the family is the tests that were run.
    """
    return step_down(p_values, lambda m: range(m, 0, -1))
