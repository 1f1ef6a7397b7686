"""Model against model on each dataset, over its items: is A ahead of B on THIS dataset?

The dataset-level test (report/compare/pairwise.py) asks whether A is ahead on datasets like these, with the
datasets as its unit. Here the unit is the item: for every pair of models, column and dataset, both
models' per-item outcomes (outcomes.parquet beside each card: evaluators/outcomes.py) are drawn
together (stats/paired_bootstrap.py: the same draws for every model, within each subset), each
variant's main score is recomputed on every draw, and the column's figure is rebuilt from them by
the card's own rules: seeds averaged, an axis the mean of its transformations, the HTEB score the mean
of the paper's axes, and a variant whose coverage leaves subsets out the Original plus the mean change
over the subsets kept (scoring/coverage.py). Before any draw the figure on the items themselves must be
the card's: outcomes that give another number are refused in one line.

Per dataset: the difference (first - second, points), its 95% percentile CI, the centred-bootstrap p,
Holm over the pair's datasets, and `separated` (Holm p < ALPHA). The pair's replicability count is on
how many datasets it is separated, and for whom (Dror et al. 2017, "Replicability analysis for NLP",
with Holm's step-down: the datasets counted are, with probability >= 1 - ALPHA, all real). A dataset a
model has no outcomes for (a card written before them, or the mteb protocol, whose main scores are no
function of single items) is listed as untested with the reason.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hteb_contract.errors import HtebError
from hteb_score.scoring.model_scores import HTEB, ModelScores
from hteb_score.stats.holm import holm
from hteb_score.stats.paired_bootstrap import REPLICATES, draws, paired_verdict

ALPHA = 0.05
ORIGINAL = "original"
#: how far a column's figure on the items may lie from the card's, in points (ranking means are rounded to 5 d.p.)
TOLERANCE = 1e-3
METHOD = {
    "unit": "per dataset, the items of each variant (pairs, rows, queries, documents), the same for both models",
    "test": f"paired bootstrap over items, within each subset, {REPLICATES} draws shared by every model; each "
    "variant's main score recomputed on every draw and the column rebuilt by the card's rules; 95% "
    "percentile CI; two-sided p of the centred bootstrap test ((1 + k) / (1 + B))",
    "correction": f"Holm over each pair's datasets; separated: Holm p < {ALPHA}",
    "replicability": "datasets on which the pair is separated, and for whom (Dror et al. 2017, with Holm)",
}

VariantKey = tuple[str, str, "int | None"]
#: a variant's value on each row of a block of draws, by (transformation, seed)
Values = Callable[[str, "int | None"], np.ndarray]
#: one dataset's figures: column -> model -> (its figure on the items, its figure on every draw)
Figures = dict[str, dict[str, tuple[float, np.ndarray]]]


@dataclass(frozen=True)
class DatasetTest:
    """First minus second on one dataset, over its items."""

    dataset: str
    difference: float
    ci: tuple[float, float]
    p: float
    p_holm: float
    items: int

    @property
    def separated(self) -> bool:
        return self.p_holm < ALPHA

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "difference": self.difference,
            "ci": list(self.ci),
            "p": self.p,
            "p_holm": self.p_holm,
            "separated": self.separated,
            "items": self.items,
        }


@dataclass(frozen=True)
class PairDatasets:
    """One pair's per-dataset verdicts on one column, and the datasets it could not test (with why)."""

    first: str
    second: str
    tests: list[DatasetTest]
    untested: dict[str, str] = field(default_factory=dict)

    def replicability(self) -> dict[str, Any]:
        ahead = [t.dataset for t in self.tests if t.separated and t.difference > 0]
        behind = [t.dataset for t in self.tests if t.separated and t.difference < 0]
        return {
            "separated": len(ahead) + len(behind),
            "tested": len(self.tests),
            "first_ahead": ahead,
            "second_ahead": behind,
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "per_dataset": [t.to_json() for t in self.tests],
            "replicability": self.replicability(),
            "untested": dict(self.untested),
        }


def column_value(model: ModelScores, dataset: str, column: str, value: Values) -> np.ndarray:
    """The model's figure of `column` on `dataset` (points) from its variants' values, by the card's rules
    (hteb_score.scoring.aggregate): seeds averaged, axes the mean of their transformations, HTEB the paper axes'."""
    if column == ORIGINAL:
        return 100 * value(ORIGINAL, None)
    if column == HTEB:
        return np.mean([column_value(model, dataset, axis, value) for axis in model.taxonomy.paper_axes], axis=0)
    members = [t for t in model.taxonomy.members.get(column, (column,)) if dataset in model.transformations.get(t, {})]
    if not members:
        raise KeyError(f"{model.model} has no {column} on {dataset}")
    return np.mean([100 * _seed_mean(model, dataset, t, value) for t in members], axis=0)


def _seed_mean(model: ModelScores, dataset: str, transformation: str, value: Values) -> np.ndarray:
    seeds = sorted(s for d, t, s in _variants(model) if d == dataset and t == transformation and s is not None)
    if not seeds:
        raise KeyError(f"{model.model} has no outcomes of {transformation} on {dataset}")
    return np.mean([value(transformation, s) for s in seeds], axis=0)


def _variants(model: ModelScores) -> list[VariantKey]:
    return list(model.outcomes or {})


def _left_out(card: Mapping[str, Any] | None) -> dict[VariantKey, set[str]]:
    """Per variant, the subsets its figure leaves out (the card's coverage)."""
    return {
        (c["dataset"], c["transformation"], c["seed"]): {s["subset"] for s in c["left_out"]}
        for c in (card or {}).get("coverage", [])
        if c["left_out"]
    }


class _ModelOnDataset:
    """One model's outcomes on one dataset, placed on the dataset's items: each variant's value on a block of draws."""

    def __init__(self, model: ModelScores, dataset: str, position: Mapping[tuple[str, str], int]) -> None:
        self.model = model
        self.outcomes = {(t, s): o for (d, t, s), o in (model.outcomes or {}).items() if d == dataset}
        self.columns = {
            key: np.asarray([position[(sub, item)] for sub, item in zip(o.subset, o.item)])
            for key, o in self.outcomes.items()
        }
        left_out = _left_out(model.card)
        self.left_out = {(t, s): subsets for (d, t, s), subsets in left_out.items() if d == dataset}

    def values(self, block: np.ndarray) -> Values:
        """The variants' values on `block`'s draws (computed when first asked)."""
        cache: dict[tuple[str, int | None], dict[str, np.ndarray]] = {}

        def subsets(key: tuple[str, int | None]) -> dict[str, np.ndarray]:
            if key not in cache:
                cache[key] = self.outcomes[key].scores(block[:, self.columns[key]])
            return cache[key]

        def value(transformation: str, seed: int | None) -> np.ndarray:
            found = subsets((transformation, seed))
            out = self.left_out.get((transformation, seed))
            if not out:
                return np.mean(list(found.values()), axis=0)
            original = subsets((ORIGINAL, None))
            kept = [s for s in found if s not in out]
            return np.mean(list(original.values()), axis=0) + np.mean([found[s] - original[s] for s in kept], axis=0)

        return value


def _items(models: Iterable[ModelScores], dataset: str) -> tuple[dict[tuple[str, str], int], list[np.ndarray]]:
    """The dataset's items (subset, id) in a fixed order, and the positions of each subset's."""
    keys = sorted(
        {
            (s, i)
            for m in models
            for (d, _, _), o in (m.outcomes or {}).items()
            if d == dataset
            for s, i in zip(o.subset, o.item)
        }
    )
    position = {key: at for at, key in enumerate(keys)}
    strata: dict[str, list[int]] = {}
    for (subset, _), at in position.items():
        strata.setdefault(subset, []).append(at)
    return position, [np.asarray(v) for _, v in sorted(strata.items())]


def _why_untested(model: ModelScores, dataset: str) -> str | None:
    if model.outcomes is None:
        return f"{model.model}: no outcomes.parquet beside its card"
    if not any(d == dataset and t == ORIGINAL for d, t, _ in model.outcomes):
        return f"{model.model}: no per-item outcomes on {dataset} (its protocol's main score is no function of single items)"
    return None


def per_dataset_tests(
    models: Sequence[ModelScores],
    pairs: Mapping[str, Sequence[tuple[str, str]]],
    datasets: Sequence[str],
    *,
    seed: int = 0,
    replicates: int = REPLICATES,
    threads: int | None = None,
) -> dict[str, list[PairDatasets]]:
    """Per column, each of its pairs (first, second) tested on each of `datasets` over the items, the datasets
    on `threads` threads (None: one per core); the verdicts are the same on any number."""
    by_name = {m.model: m for m in models}
    untested: dict[str, dict[str, str]] = {}  # dataset -> model -> why
    ready: dict[str, list[ModelScores]] = {}
    for dataset in datasets:
        untested[dataset] = {m.model: why for m in models if (why := _why_untested(m, dataset)) is not None}
        if len(testable := [m for m in models if m.model not in untested[dataset]]) >= 2:
            ready[dataset] = testable
    # Datasets are drawn apart (each its own seeded draws) and numpy lets go of the GIL in its loops: one thread
    # per core. Results are read in the datasets' order, so a refusal names the first dataset, as one thread would,
    # and the datasets not begun are not computed.
    pool = ThreadPoolExecutor(max_workers=threads or os.cpu_count() or 1)  # cpu_count: sched_getaffinity is Linux-only
    try:
        running = {
            dataset: pool.submit(_figures, testable, dataset, pairs, seed=seed, replicates=replicates)
            for dataset, testable in ready.items()
        }
        figures: dict[str, Figures] = {dataset: future.result() for dataset, future in running.items()}
    finally:
        pool.shutdown(cancel_futures=True)
    out: dict[str, list[PairDatasets]] = {}
    for column, column_pairs in pairs.items():
        out[column] = []
        for first, second in column_pairs:
            raw: list[tuple[str, float, tuple[float, float], float, int]] = []
            skipped = {}
            for dataset in datasets:
                found = figures.get(dataset, {}).get(column, {})
                if first not in found or second not in found:
                    why = untested[dataset].get(first) or untested[dataset].get(second) or f"no {column} figure"
                    skipped[dataset] = why
                    continue
                (a, a_reps), (b, b_reps) = found[first], found[second]
                verdict = paired_verdict(a - b, a_reps - b_reps)
                raw.append((dataset, verdict.difference, verdict.ci, verdict.p, _item_count(by_name[first], dataset)))
            adjusted = holm([p for _, _, _, p, _ in raw])
            tests = [
                DatasetTest(d, diff, ci, p, float(p_holm if p_holm is not None else math.nan), n)
                for (d, diff, ci, p, n), p_holm in zip(raw, adjusted)
            ]
            out[column].append(PairDatasets(first, second, tests, skipped))
    return out


def _item_count(model: ModelScores, dataset: str) -> int:
    return len((model.outcomes or {})[(dataset, ORIGINAL, None)].item)


def _figures(
    models: Sequence[ModelScores],
    dataset: str,
    pairs: Mapping[str, Sequence[tuple[str, str]]],
    *,
    seed: int,
    replicates: int,
) -> Figures:
    """Per column, per model: its figure on the items (checked against its card) and on every draw."""
    position, strata = _items(models, dataset)
    placed = [_ModelOnDataset(m, dataset, position) for m in models]
    on_items = {m.model.model: m.values(np.ones((1, len(position)))) for m in placed}  # each variant scored once
    out: Figures = {}
    for column in pairs:
        for m in placed:
            try:
                value = float(column_value(m.model, dataset, column, on_items[m.model.model])[0])
            except KeyError:
                continue  # the model has no such figure on this dataset
            _check_figure(m.model, dataset, column, value)
            out.setdefault(column, {})[m.model.model] = (value, np.empty(0))
    blocks: list[tuple[_ModelOnDataset, list[dict[str, np.ndarray]]]] = [(m, []) for m in placed]
    for block in draws(strata, len(position), dataset, seed=seed, replicates=replicates):
        for m, parts in blocks:
            values = m.values(block)
            parts.append({c: column_value(m.model, dataset, c, values) for c in out if m.model.model in out[c]})
    for m, parts in blocks:
        for column in out:
            if m.model.model in out[column]:
                value, _ = out[column][m.model.model]
                out[column][m.model.model] = (value, np.concatenate([p[column] for p in parts]))
    return out


def _check_figure(model: ModelScores, dataset: str, column: str, value: float) -> None:
    """The figure the items give must be the one the comparison ranks by (the card's, on the comparison's basis)."""
    stated = model.original.get(dataset) if column == ORIGINAL else model.column(column).get(dataset)
    if stated is None or not abs(stated - value) <= TOLERANCE:
        raise HtebError(
            f"{model.source}: its outcomes.parquet gives {column} {value:.4f} on {dataset}, the card "
            f"{stated}: the file is not this card's (score the model again)"
        )


def attach(pairwise: dict[str, Any], tests: Mapping[str, Sequence[PairDatasets]]) -> dict[str, Any]:
    """comparison.json's `pairwise` with each pair's per-dataset verdicts, replicability count and untested datasets."""
    found = {(column, t.first, t.second): t for column, pairs in tests.items() for t in pairs}
    if not any(t.tests for t in found.values()):
        return pairwise
    for column, ranking in pairwise["columns"].items():
        for pair in ranking["pairs"]:
            verdicts = found.get((column, pair["first"], pair["second"]))
            if verdicts is not None:
                pair.update(verdicts.to_json())
    return {**pairwise, "per_dataset_method": dict(METHOD)}


def markdown(
    tests: Mapping[str, Sequence[PairDatasets]], label: Callable[[str], str], name: Callable[[str], str]
) -> list[str]:
    """comparison.md's section: per column, each pair's replicability count and the datasets that separate it."""
    found = tables(tests, label, name)
    if not found:
        return []
    return [
        "",
        "## Model against model on each dataset (paired bootstrap over items, Holm over datasets)",
        "",
        f"Per pair and dataset, the difference (first minus second, points) on the dataset's items, {REPLICATES} "
        "paired bootstrap draws of the items, Holm over the pair's datasets; separated: Holm p < "
        f'{ALPHA}. The count answers "on which of these datasets is one model ahead" (Dror et al. 2017); '
        'the section above answers "on datasets like these". Every figure is in comparison.json '
        "(`pairwise.columns.*.pairs[].per_dataset`).",
        "",
        *found,
    ]


def tables(
    tests: Mapping[str, Sequence[PairDatasets]], label: Callable[[str], str], name: Callable[[str], str]
) -> list[str]:
    """Per column with tested pairs, its heading and table: each pair's count and the datasets separating it
    (their differences); [] where no pair has items to test."""
    out: list[str] = []
    for column, pairs in tests.items():
        tested = [t for t in pairs if t.tests]
        if not tested:
            continue
        out += [
            f"### {label(column)}",
            "",
            "| First | Second | separated | first ahead on | second ahead on |",
            "|---|---|---|---|---|",
        ]
        for t in tested:
            count = t.replicability()
            ahead = ", ".join(
                f"{name(d.dataset)} ({d.difference:+.2f})" for d in t.tests if d.separated and d.difference > 0
            )
            behind = ", ".join(
                f"{name(d.dataset)} ({d.difference:+.2f})" for d in t.tests if d.separated and d.difference < 0
            )
            out.append(
                f"| {name(t.first)} | {name(t.second)} | {count['separated']} of {count['tested']} "
                f"| {ahead or '-'} | {behind or '-'} |"
            )
        out.append("")
    return out
