"""Sensitivity (the card's `sensitivity`; issue 45): does the model hear a change of meaning?

Robustness asks whether a model keeps its score when meaning is kept; a model that ignores negation, numbers or
who-did-what-to-whom passes that test best, and a collapsed one (every text near one point) passes it perfectly.
The Sensitivity revisions pair each meaning-changing rule with a twin that edits the same span and keeps the
meaning (hteb_generate.transform.sensitivity), so for every item both rules edited the model is asked one
question, from the embeddings the run already has:

An item is one distinct (original, changed, twin) triple with its prompt: equal texts are edited alike, so a text
that occurs twelve times (STS15 repeats its sentences) is one outcome, counted once, whatever the model; pooled
over datasets (STSBenchmark shares sentences with STS12-16) likewise.

- `accuracy` (primary): the share of items whose twin is nearer the original than the changed text,
  cos(original, twin) > cos(original, changed), a tie (equal to DECIMALS decimals) counting one half. 0.5 is
  blind (a model of random vectors, a constant model, a model that does not read the cue), 1.0 separates every
  item; below 0.5 the model moves further for a change of form than for one of meaning. It is a comparison within
  one model's own similarities, so it needs no calibration across models. `ci`: the exact (Clopper-Pearson)
  interval of the share of wins among the items that are no tie, on the accuracy's scale; `blind`: the interval
  holds 0.5, exactly when the two-sided binomial test of the wins does not reject 0.5 (the test `detectable`
  states the reach of). Exact at any item count: a percentile bootstrap read 3 items of 3 as [1.0, 1.0], and
  a model of random vectors "heard" a pair on a dataset of 3 items.
- `detectable`: the smallest accuracy that an exact two-sided binomial test at ALPHA tells from 0.5 with POWER at
  the figure's decided items (ties aside, as the test sets them aside), on the accuracy's scale: a figure that
  reads blind below it may be a model that hears the cue weakly, not one that does not hear it (25 items: 0.77;
  400: 0.573; 3,000: 0.526, where none ties). None where too few are decided: a model of one vector ties every
  item, and its blind figure has no power at all.
- `margin` (secondary): the mean of c(original, twin) - c(original, changed) with c = (cos - b) / (1 - b), b the
  model's mean cosine between unrelated original texts of the item's dataset and language (the per-item
  measures' baseline, reported beside): in units of the distance to an unrelated text, so it compares across
  models whatever the width of their cone.

- `top1_flip` (retrieval datasets only; NevIR's question asked of the same items): the original query's top-1
  document over the whole corpus (cosine, exact, as `item_measures.top_k` finds it: similarities equal to
  SIMILARITY_DECIMALS decimals tie, and a tie goes to the document earlier in the corpus) is found; an item flips
  correctly when the twin's top-1 is still that document and the changed query's is not. Its `share`, the exact
  (Clopper-Pearson) interval of it, and its two parts: `twin_keeps` (the twin's top-1 is the original's) and
  `changed_loses` (the changed query's is not). Chance is not 0.5 but about 0: a model of random vectors keeps a
  top-1 for the twin about once in the corpus size, and a constant model (every document a tie) never loses one.
  It asks whether the change of meaning moves the answer and the change of form does not, not whether the new
  answer is right (the changed query has no judgements; in SciFact a claim and its negation share their
  evidence), so `accuracy` stays the primary figure.

Per (pair, dataset, language), per (pair, dataset) and per pair over every dataset (items pooled, seeds pooled),
then `overall`: the mean of the pairs' accuracies (`hard_overall`: of their hard accuracies); `top1_flip` per
(pair, dataset) and (pair, dataset, language) of a retrieval dataset, absent where its rows lack it (a part
written before it was recorded). The block stands
apart from the task scores: a drop of a task score under a meaning-changing rule is the model listening, never
fragility, and the Sensitivity axis is never in the HTEB total.

>>> pair = ("negation_flip", "negation_contraction")
>>> rows = [item_row(str(i), "D", pair, 1, "eng", 0.98, 0.91, 0.6) for i in range(9)]
>>> rows.append(item_row("9", "D", pair, 1, "eng", 0.9, 0.9, 0.6))
>>> rows.append(item_row("9", "D", pair, 1, "eng", 0.9, 0.9, 0.6))  # the same item again: counted once
>>> figure = summarise(rows)
>>> figure["items"], figure["accuracy"], figure["blind"]
(10, 0.95, False)
"""

from __future__ import annotations

import functools
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from hteb_contract.tasks import task_type
from hteb_score.scoring.item_measures import SIMILARITY_DECIMALS, Baseline, corpus_embeddings, cosines, prompt_of, top_k

if TYPE_CHECKING:  # annotations only
    from hteb_contract.item_columns import ItemColumns
    from hteb_score.encoding.encoder import EmbeddingTable
    from hteb_score.scoring.data import Variant

#: Cosines equal to this many decimals are a tie (float32 noise is no preference).
DECIMALS = 6
#: The level of a figure's confidence interval.
CONFIDENCE = 0.95
#: The test and power `detectable` states a figure's reach at.
ALPHA = 0.05
POWER = 0.8
#: The columns of an item row (what a part stores, in this order).
COLUMNS = (
    "item",
    "pair",
    "seed",
    "language",
    "kept_cosine",
    "changed_cosine",
    "baseline_drift",
    "twin_keeps_top1",
    "changed_keeps_top1",
)
#: The columns of a hard-twin row (`hard_row`; scoring/hard_twins.py): kept_cosine is the hard twin's.
HARD_COLUMNS = (*COLUMNS[:7], "twin")
#: What a hard figure holds of `summarise`'s (the margin's baseline is the rule figure's business).
HARD_FIGURE = ("items", "accuracy", "ci", "blind", "detectable")
METHOD = {
    "item": "a distinct (original, changed, twin) triple with its prompt, of a text both rules of a minimal pair "
    "edited (the changed rule and its meaning-keeping twin, same span): a repeated text counts once; seeds pooled",
    "accuracy": f"share of items with cos(original, twin) > cos(original, changed), a tie to {DECIMALS} decimals "
    "counting 1/2: 0.5 is blind, 1.0 separates every item",
    "ci": f"{CONFIDENCE:.0%} exact (Clopper-Pearson) interval of the wins among the items that are no tie, on "
    "the accuracy's scale; `blind`: the interval holds 0.5 (the exact two-sided binomial test of the wins does "
    "not reject 0.5)",
    "detectable": f"smallest accuracy an exact two-sided binomial test at {ALPHA:.0%} tells from 0.5 with "
    f"{POWER:.0%} power at the items that are no tie, on the accuracy's scale (null: too few are decided): blind "
    "below it may be a cue heard weakly",
    "margin": "mean of c(original, twin) - c(original, changed), c = (cos - b) / (1 - b) with b the model's mean "
    "cosine between unrelated original texts of the item's dataset and language (`baseline`)",
    "overall": "mean of the pairs' accuracies",
    "top1_flip": "retrieval datasets: share of items whose twin query's top-1 document (cosine over the whole "
    f"corpus; similarities equal to {SIMILARITY_DECIMALS} decimals tie, the earlier corpus document first) is the "
    "original query's and whose changed query's is not, with its exact (Clopper-Pearson) interval; twin_keeps, "
    "changed_loses: the two parts' shares. Chance is about 0, not 0.5 (a model of random vectors rarely keeps a "
    "top-1 for the twin; a constant model never loses one). It asks whether the answer moves, not whether the "
    "new one is right: accuracy stays the primary figure",
}
#: `hard_overall`'s method (a run given --hard-twins-from).
HARD_OVERALL = "mean of the pairs' hard accuracies, over the pairs with a hard item (null where none has one)"
#: The `hard` figure's method (a run given --hard-twins-from).
HARD_METHOD = (
    "the accuracy asked again with an LLM revision's rewrite of the same original text as the twin (its "
    "meaning-keeping LLM transformations, `twins`; dataset.hard_twins names the revision), over the items whose "
    "original it rewrote: the same tie rule, exact interval and one count per (original, changed, twin) item. "
    "Harder: the rewrite differs from the original in more than the edited span, so token overlap does not win"
)


def item_key(prompt: str | None, original: str, changed: str, kept: str) -> str:
    """What makes two rows one item: the same texts under the same prompt (sha256, 16 hex digits)."""
    text = "\x1f".join((prompt or "", original, changed, kept))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def item_row(
    item: str,
    dataset: str,
    pair: tuple[str, str],
    seed: int | None,
    language: str | None,
    kept: float,
    changed: float,
    baseline_drift: float | None,
    top1: tuple[bool, bool] | None = None,
) -> dict[str, Any]:
    """One item's cosines with its original: under the twin (`kept`) and under the changed rule; `top1` (a
    retrieval query): whether the twin's top-1 document and the changed query's are the original's."""
    return {
        "item": item,
        "dataset": dataset,
        "pair": pair[0],
        "seed": seed,
        "language": language,
        "kept_cosine": round(float(kept), DECIMALS),
        "changed_cosine": round(float(changed), DECIMALS),
        "baseline_drift": baseline_drift,
        "twin_keeps_top1": None if top1 is None else bool(top1[0]),
        "changed_keeps_top1": None if top1 is None else bool(top1[1]),
    }


def hard_row(row: Mapping[str, Any], twin: str) -> dict[str, Any]:
    """An `item_row` asked with a hard twin (an LLM revision's rewrite of its original, by transformation `twin`):
    its `kept_cosine` is cos(original, hard twin); the columns of HARD_COLUMNS."""
    return {**{c: row[c] for c in ("dataset", *HARD_COLUMNS[:-1])}, "twin": twin}


def top1_kept(
    original: np.ndarray, twin: np.ndarray, changed: np.ndarray, documents: np.ndarray
) -> list[tuple[bool, bool]]:
    """Per query (rows of the three in step): whether the twin's top-1 document and the changed query's are the
    original's, by cosine over every row of `documents` (`item_measures.top_k`: similarities equal to
    SIMILARITY_DECIMALS decimals tie, and a tie goes to the earlier document, so the answer is the same on every
    machine).

    >>> docs = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]])  # documents 0 and 2 tie on every query: 0 is first
    >>> top1_kept(np.array([[1.0, 0.1]]), np.array([[2.0, 0.0]]), np.array([[0.1, 1.0]]), docs)
    [(True, False)]
    """
    first = top_k(original, documents, 1)
    return [
        (kept == found, moved == found)
        for found, kept, moved in zip(first, top_k(twin, documents, 1), top_k(changed, documents, 1))
    ]


@dataclass(frozen=True)
class Edited:
    """The items both rules of one minimal pair edited, in one seed of one dataset, under one prompt: each
    `picked` is (its text's reference, its row in `changed`, its row in `twin`)."""

    dataset: str
    pair: tuple[str, str]
    seed: int | None
    prompt: str | None
    changed: ItemColumns
    twin: ItemColumns
    picked: list[tuple[tuple[str, str, str], int, int]]
    retrieval: bool  # its variant's task searches a corpus (top-1 flips are found for its queries)
    variant: Variant

    def originals(self) -> list[str]:
        return [self.changed.original_text[at] for _, at, _ in self.picked]

    def changed_texts(self) -> list[str]:
        return [self.changed.transformed_text[at] for _, at, _ in self.picked]


def edited(variants: Sequence[Variant]) -> Iterator[Edited]:
    """The items of one dataset's `variants` that both rules of a minimal pair edited (the original differs
    from both edits), grouped by (pair, seed, prompt): what every Sensitivity figure is asked of."""
    found = {(v.transformation, v.seed): v for v in variants if v.pair is not None and v.items}
    for (name, seed), changed in found.items():
        pair = changed.pair
        twin = found.get((pair[1], seed)) if pair is not None and name == pair[0] else None
        if pair is None or twin is None or changed.items is None or twin.items is None:
            continue
        kept_at = {ref: at for at, ref in enumerate(twin.items.refs())}
        chosen: dict[str | None, list[tuple[Any, int, int]]] = defaultdict(list)
        for at, ref in enumerate(changed.items.refs()):
            other = kept_at.get(ref)
            original = changed.items.original_text[at]
            if other is None or original in (changed.items.transformed_text[at], twin.items.transformed_text[other]):
                continue
            chosen[prompt_of(ref[0])].append((ref, at, other))
        searches = task_type(changed.dataset.info.task_type).searches_corpus
        for prompt, picked in chosen.items():
            yield Edited(
                changed.dataset.info.name, pair, seed, prompt, changed.items, twin.items, picked, searches, changed
            )


def pair_rows(
    variants: Sequence[Variant], table: EmbeddingTable, base: Baseline, documents: dict[str, np.ndarray]
) -> list[dict[str, Any]]:
    """Every item that both rules of a minimal pair edited, among one dataset's `variants`, with both cosines
    and, for a retrieval query, whether each edit keeps the original's top-1 document (embeddings the run already
    holds: nothing is embedded again; `documents`: the corpus embeddings by dataset, shared with the per-item
    measures)."""
    rows: list[dict[str, Any]] = []
    for found in edited(variants):
        embed = table.view(found.variant.dataset.info)
        o = np.asarray(embed(found.originals(), found.prompt))
        c = np.asarray(embed(found.changed_texts(), found.prompt))
        k = np.asarray(embed([found.twin.transformed_text[other] for _, _, other in found.picked], found.prompt))
        tops: list[tuple[bool, bool] | None] = [None] * len(found.picked)
        if found.retrieval and found.prompt == "query":
            tops = list(top1_kept(o, k, c, corpus_embeddings(found.variant, embed, documents)))
        for (ref, at, other), kept, moved, top1 in zip(found.picked, cosines(o, k), cosines(o, c), tops):
            texts = (found.changed.original_text[at], found.changed.transformed_text[at])
            key = item_key(found.prompt, *texts, found.twin.transformed_text[other])
            language, drift = text_language(base, ref)
            rows.append(item_row(key, found.dataset, found.pair, found.seed, language, kept, moved, drift, top1))
    return rows


def text_language(base: Baseline, ref: tuple[str, str, str]) -> tuple[str | None, float | None]:
    """A text's language and its language's baseline drift (None where either is unknown)."""
    language = base.language.get(ref)
    return language, base.drift.get(language) if language else None


def _outcomes(rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
    kept = np.array([r["kept_cosine"] for r in rows], dtype=np.float64)
    changed = np.array([r["changed_cosine"] for r in rows], dtype=np.float64)
    return np.where(kept > changed, 1.0, np.where(kept == changed, 0.5, 0.0))


def _margins(rows: Sequence[Mapping[str, Any]]) -> list[float]:
    """(cos_kept - cos_changed) / (1 - b) per item whose baseline is known and above 0 (1 - b = its drift)."""
    return [
        (r["kept_cosine"] - r["changed_cosine"]) / r["baseline_drift"]
        for r in rows
        if r["baseline_drift"] is not None and r["baseline_drift"] > 0
    ]


def _interval(outcomes: np.ndarray) -> list[float] | None:
    """The exact interval of the accuracy: the Clopper-Pearson interval of the wins among the decided items
    (no tie), mapped onto the accuracy, where each tie counts one half; every item a tie is exactly 0.5."""
    items = len(outcomes)
    if not items:
        return None
    ties, wins = int(np.sum(outcomes == 0.5)), int(np.sum(outcomes == 1.0))
    decided = items - ties
    if not decided:
        return [0.5, 0.5]
    found = stats.binomtest(wins, decided).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return [round((bound * decided + ties / 2) / items, 6) for bound in (float(found.low), float(found.high))]


@functools.lru_cache(maxsize=None)
def detectable(items: int) -> float | None:
    """The smallest accuracy (up to 3 decimals, rounded up) that `items` outcomes tell from 0.5 with POWER in
    an exact two-sided binomial test at ALPHA; None where no count of them could (5 items or fewer)."""
    counts = np.arange(items + 1)
    p_values = np.minimum(1.0, 2 * stats.binom.sf(counts - 1, items, 0.5))
    significant = counts[(2 * counts > items) & (p_values <= ALPHA)]
    if not len(significant):
        return None
    high = int(significant[0])  # reject at high or more successes, or at items - high or fewer

    def power(accuracy: float) -> float:
        return float(stats.binom.sf(high - 1, items, accuracy) + stats.binom.cdf(items - high, items, accuracy))

    low, top = 0.5, 1.0
    if power(top) < POWER:
        return None
    while top - low > 1e-5:
        middle = (low + top) / 2
        low, top = (middle, top) if power(middle) < POWER else (low, middle)
    return float(np.ceil(top * 1000) / 1000)


def reach(outcomes: np.ndarray) -> float | None:
    """`detectable` at the outcomes' decided items (the test `ci` and `blind` rest on sets ties aside), on the
    accuracy's scale, where each tie counts one half: what this figure can tell, at the ties it really meets."""
    ties = int(np.sum(outcomes == 0.5))
    found = detectable(len(outcomes) - ties)
    if found is None or not ties:
        return found
    return float(np.ceil((found * (len(outcomes) - ties) + ties / 2) / len(outcomes) * 1000) / 1000)


def distinct(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One row per item (its first), in order."""
    seen: dict[str, Mapping[str, Any]] = {}
    for row in rows:
        seen.setdefault(row["item"], row)
    return list(seen.values())


def summarise(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The figure of some items, each counted once: count, accuracy with its interval and whether it holds 0.5,
    margin."""
    rows = distinct(rows)
    outcomes = _outcomes(rows)
    ci = _interval(outcomes)
    margins = _margins(rows)
    baselines = sorted({r["baseline_drift"] for r in rows if r["baseline_drift"] is not None})
    return {
        "items": len(rows),
        "accuracy": round(float(outcomes.mean()), 6) if len(rows) else None,
        "ci": ci,
        "blind": None if ci is None else bool(ci[0] <= 0.5 <= ci[1]),
        "detectable": reach(outcomes),
        "margin": round(float(np.mean(margins)), 6) if margins else None,
        "baseline": [round(1.0 - baselines[0], 6)] if len(baselines) == 1 else None,  # one b applies, else none
    }


def hard_figure(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The hard figure of some hard-twin rows: the transformations their twins are and `summarise`'s accuracy,
    interval, reading and reach over them (the same tie rule, exact interval and one count per item)."""
    figure = summarise(rows)
    return {"twins": sorted({r["twin"] for r in rows}), **{k: figure[k] for k in HARD_FIGURE}}


def top1_flip(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The top-1 flip of some items, each counted once: their count, the share that flip correctly (the twin
    keeps the original's top-1 document, the changed query does not) with its exact interval, and the two parts'
    shares; None where no item has the top-1s (not a retrieval query, or a part written before they were)."""
    known = [r for r in distinct(rows) if r["twin_keeps_top1"] is not None]
    if not known:
        return None
    keeps = np.array([r["twin_keeps_top1"] for r in known], dtype=bool)
    loses = ~np.array([r["changed_keeps_top1"] for r in known], dtype=bool)
    flips = int(np.sum(keeps & loses))
    found = stats.binomtest(flips, len(known)).proportion_ci(confidence_level=CONFIDENCE, method="exact")
    return {
        "items": len(known),
        "share": round(flips / len(known), 6),
        "ci": [round(float(found.low), 6), round(float(found.high), 6)],
        "twin_keeps": round(float(keeps.mean()), 6),
        "changed_loses": round(float(loses.mean()), 6),
    }


def _with_flip(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A (pair, dataset[, language]) figure: `summarise`, and `top1_flip` where its items have one."""
    flip = top1_flip(rows)
    return {**summarise(rows), **({} if flip is None else {"top1_flip": flip})}


def _mean(accuracies: Iterable[float | None]) -> float | None:
    """The mean of the accuracies that were scored, to the card's digits; None where none was."""
    found = [a for a in accuracies if a is not None]
    return round(float(np.mean(found)), 6) if found else None


def reading(figure: Mapping[str, Any]) -> str | None:
    """What a figure says: "blind" where its interval holds 0.5, else "hears" or "inverted" by which way its
    accuracy leans; None where it was not scored (no items)."""
    if figure["blind"] is None:
        return None
    if figure["blind"]:
        return "blind"
    return "hears" if figure["accuracy"] > 0.5 else "inverted"


def readings(figures: Mapping[str, Mapping[str, Any]]) -> dict[str, list[str]]:
    """Which of `figures` (pair -> figure) hear, are blind, are inverted (`reading`): what a model's pairs say
    together, where a mean of their accuracies would weigh a pair of a few items as much as one of thousands.
    A figure scored on no item tells nothing: blind."""
    found = {name: reading(figure) or "blind" for name, figure in figures.items()}
    return {kind: [name for name, k in found.items() if k == kind] for kind in ("hears", "blind", "inverted")}


def _grouped(rows: Iterable[Mapping[str, Any]], *keys: str) -> dict[tuple[Any, ...], list[Mapping[str, Any]]]:
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[tuple(row[k] for k in keys)].append(row)
    return groups


def sensitivity_block(
    rows: Sequence[Mapping[str, Any]], hard: Sequence[Mapping[str, Any]] | None = None
) -> dict[str, Any] | None:
    """The card's `sensitivity` block from the item rows of every unit (None: no minimal pair was scored);
    `hard`: the hard-twin rows of a run given --hard-twins-from, whose figure each figure then carries (`hard`,
    over the items that have one: 0 where none has)."""
    if not rows:
        return None
    keys = (("pair",), ("pair", "dataset"), ("pair", "dataset", "language"))
    hard_groups = [_grouped(hard or (), *k) for k in keys]

    def with_hard(figure: dict[str, Any], level: int, group: tuple[Any, ...]) -> dict[str, Any]:
        return figure if hard is None else {**figure, "hard": hard_figure(hard_groups[level].get(group, []))}

    pairs = {pair: summarise(items) for (pair,), items in sorted(_grouped(rows, "pair").items())}
    figures = [with_hard({"pair": pair, **figure}, 0, (pair,)) for pair, figure in pairs.items()]
    overall = {"overall": _mean(p["accuracy"] for p in figures)}
    if hard is not None:  # the pairs' hard accuracies, over the pairs with a hard item
        overall["hard_overall"] = _mean(p["hard"]["accuracy"] for p in figures)
    return {
        "method": METHOD if hard is None else {**METHOD, "hard": HARD_METHOD, "hard_overall": HARD_OVERALL},
        **overall,
        "pairs": figures,
        "datasets": [
            with_hard({"pair": pair, "dataset": dataset, **_with_flip(items)}, 1, (pair, dataset))
            for (pair, dataset), items in sorted(_grouped(rows, "pair", "dataset").items())
        ],
        "languages": [
            with_hard({"pair": g[0], "dataset": g[1], "language": g[2], **_with_flip(items)}, 2, g)
            for g, items in sorted(
                _grouped(rows, "pair", "dataset", "language").items(), key=lambda kv: tuple(map(str, kv[0]))
            )
        ],
    }
