"""Statistics given undefined inputs (None, NaN, inf): an undefined result with its reason, never a
traceback and never a NaN passed on (issue 10: "p-values must lie in [0, 1]" on a NaN score)."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract.taxonomy import INSTALLED
from hteb_score.stats.bootstrap import percentile_bootstrap
from hteb_score.stats.hodges_lehmann import hodges_lehmann
from hteb_score.stats.holm import holm
from hteb_score.scoring.score_record import ScoreRecord
from hteb_score.scoring.statistics import add_holm, model_statistics, paired_effect
from hteb_score.stats.wilcoxon import wilcoxon_signed_rank

NAN, INF = float("nan"), float("inf")
UNDEFINED = {
    "nan": [-1.0, NAN, -3.0, -2.0],
    "none": [-1.0, None, -3.0],
    "inf": [INF, -1.0, -2.0],
    "all_nan": [NAN, NAN],
}


@pytest.mark.parametrize("deltas", list(UNDEFINED.values()), ids=list(UNDEFINED))
def test_flagged_wilcoxon_and_hodges_lehmann_of_undefined_differences(deltas):
    test = wilcoxon_signed_rank(deltas)
    assert (test.statistic, test.p_value) == (None, None)
    assert test.undefined.endswith("differences undefined (None, NaN or infinite)")
    hl = hodges_lehmann(deltas)
    assert (hl.shift, hl.ci_low, hl.ci_high, hl.confidence) == (None, None, None, None) and hl.undefined
    assert hodges_lehmann(deltas, method="bootstrap").undefined == hl.undefined


@pytest.mark.parametrize("deltas", list(UNDEFINED.values()), ids=list(UNDEFINED))
def test_flagged_paired_effect_and_holm_of_an_undefined_family_member(deltas):
    """The family's other tests are corrected among themselves; the undefined one says why."""
    family = {"defined": paired_effect([-1.0, -2.0, -3.0, -4.0, -5.0, -6.0]), "undefined": paired_effect(deltas)}
    add_holm(family, INSTALLED)
    entry = family["undefined"]
    assert entry["p_value"] is None and entry["p_holm"] is None and entry["mean_delta"] is None
    assert "undefined (None, NaN or infinite)" in entry["undefined"]
    assert family["defined"]["p_holm"] == pytest.approx(family["defined"]["p_value"])  # a family of one test run
    assert "undefined" not in family["defined"]


@pytest.mark.parametrize("p", [[0.01, None, 0.04], [NAN, 0.2], [None]], ids=["none", "nan", "only_none"])
def test_flagged_holm_leaves_undefined_p_values_out_of_the_family(p):
    defined = [v for v in p if v is not None and not math.isnan(v)]
    expected = iter(holm(defined))
    assert holm(p) == [None if v is None or math.isnan(v) else pytest.approx(next(expected)) for v in p]


def test_refused_holm_p_value_out_of_range():
    """A defined p-value outside [0, 1] is a programming error, still refused."""
    with pytest.raises(ValueError, match=r"p-values must lie in \[0, 1\]"):
        holm([0.5, 1.5, None])


@pytest.mark.parametrize("sample", [[1.0, NAN, 2.0], [1.0, None, 3.0], [INF, 1.0, 2.0]], ids=["nan", "none", "inf"])
def test_flagged_bootstrap_of_an_undefined_sample(sample):
    low, high = percentile_bootstrap(lambda x: float(sum(x)), sample)
    assert math.isnan(low) and math.isnan(high)


def test_flagged_model_statistics_skip_undefined_scores():
    """Score records holding null or NaN: left out, the statistics of the rest are computed."""
    scores = [
        ScoreRecord(d, "STS", "all", "original", None, "m", v)
        for d, v in (("A", 80.0), ("B", 70.0), ("C", None), ("D", 60.0))
    ]
    scores += [
        ScoreRecord(d, "STS", "all", "paraphrasing", 1, "m", v)
        for d, v in (("A", 75.0), ("B", NAN), ("C", 50.0), ("D", 58.0))
    ]
    stats = model_statistics(scores, [], INSTALLED)
    entry = stats["per_transformation"]["paraphrasing"]
    assert entry["n_datasets"] == 2 and entry["mean_delta"] == pytest.approx(-3.5) and entry["p_value"] is not None


FLOATS = st.one_of(
    st.none(), st.floats(allow_nan=True, allow_infinity=True, width=64), st.sampled_from([NAN, INF, -INF, 0.0, 1e-12])
)


@settings(max_examples=examples(200), deadline=None)
@given(deltas=st.lists(FLOATS, max_size=12))
@example(deltas=[1e308, 1.7e308, 1e308])
@example(deltas=[1.0, 1.0, 1.0, 1.797693134862316e299])
def test_fuzz_paired_effect(deltas):
    """Any list of values: every number in the effect is finite or None, None only with a reason."""
    if not deltas:
        return
    entry = paired_effect(deltas)
    add_holm({"x": entry}, INSTALLED)
    numbers = {k: v for k, v in entry.items() if isinstance(v, float) or v is None}
    assert all(v is None or math.isfinite(v) for v in numbers.values()), entry
    assert any(v is None for v in numbers.values()) == ("undefined" in entry), entry


@settings(max_examples=examples(200), deadline=None)
@given(p=st.lists(st.one_of(st.none(), st.just(NAN), st.floats(0.0, 1.0)), max_size=10))
def test_fuzz_holm(p):
    adjusted = holm(p)
    assert len(adjusted) == len(p)
    for raw, adj in zip(p, adjusted):
        if raw is None or math.isnan(raw):
            assert adj is None
        else:
            assert raw - 1e-12 <= adj <= 1.0
