"""Per-item robustness, label-free (the card's `item_measures`; docs/scoring.md#per-item-measures), from
the embeddings the run already has: nothing is embedded again.

An item is one transformed text (the unit the judge rates); a pair measure's item is the pair. Every
figure is a drift, 1 - cosine, the paper's sign (SPEC: drift vs quality) and the `statistics` block's, so
the whole card reads one way: 0 is an embedding that did not move, larger moved further. For each item:

- `drift`: 1 - cos(emb(original text), emb(transformed text)), queries with the query prompt;
- `baseline_drift` (per dataset and language, `Baseline`): the mean drift between two distinct original
  texts of that language (every pair of them), the model's own scale: 1 - b with b the mean cosine of
  unrelated texts. The calibrated drift is drift / baseline_drift (= 1 - (cos - b) / (1 - b)): 0 is no
  move, 1 as far as an unrelated text, so it compares across models whatever the width of their cone;
- `top10_changed` (Retrieval, query items): the set of the TOP_K corpus documents nearest the original
  query (cosine, exact; similarities equal to SIMILARITY_DECIMALS decimals tie, broken by corpus order)
  differs from the transformed query's; None elsewhere;
- `order_discordance` (STS, STR and pair classification, once per pair): with s = cos(emb(sentence1),
  emb(sentence2)) of each pair on its original texts and s' on the variant's, the share of the other
  pairs j of its subset (the metric ranks within a subset) whose order with it is reversed,
  (s_i - s_j)(s'_i - s'_j) < 0 (Kendall's discordance; similarities equal to DRIFT_DECIMALS decimals tie,
  and a tie on either side is no reversal: float32 noise is not an order). A monotone change of every
  similarity (a uniform shift) reverses no pair. It sits on the pair's first counted text; None elsewhere.

Only the texts a figure counts enter it (`statistics.counted`): changed (transformed != original) and in
a subset the variant's figure keeps (`scoring.coverage`: the Noise figure leaves out the subsets a rule
does not apply to or barely changed); the unchanged and left-out shares of the items stand beside.
Per (transformation, dataset), seeds pooled: the drift's mean and quantiles QUANTILES, the pass rate
(drift <= PASS_DRIFT, i.e. cosine >= 0.9), the calibrated drift's mean and pass rate (<= CALIBRATED_PASS),
the baseline per language, the share of query items whose top-10 changed, the mean pair discordance, and
the Spearman correlation of the drift, calibrated drift, pass and top-10 change with the judge's quality
over the rated counted items. The block stands apart from the task-metric totals. The explorer keeps,
per variant, the EXPLORER_TOP_N items that moved most (lowest cosine) and the EXPLORER_TOP_N
lowest-cosine items whose outcome flipped, with their texts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hteb_contract.tasks import task_type
from hteb_score.evaluators.pairs import SentencePairEvaluator
from hteb_score.evaluators.subsets import group_rows
from hteb_score.evaluators.trec import doc_text
from hteb_score.scoring.statistics import DRIFT_DECIMALS, MIN_QUALITY_ITEMS, counted, drift_row
from hteb_score.stats.ranking import spearman_interval, spearman_rho

if TYPE_CHECKING:  # annotations only
    from hteb_contract.sources import SourceDataset
    from hteb_score.encoding.encoder import EmbeddingTable
    from hteb_score.encoding.embed import Embed
    from hteb_score.evaluators.base import Evaluator
    from hteb_score.scoring.data import Variant

#: An item passes when its embedding moved at most this drift (cosine >= 0.9 with its original's).
PASS_DRIFT = 0.1
#: An item passes on the calibrated scale when it moved at most this share of the way to an unrelated
#: text: the raw threshold where unrelated texts are orthogonal (b = 0), stricter for a narrower cone.
CALIBRATED_PASS = 0.1
#: How many nearest documents a query's top list holds.
TOP_K = 10
#: The drift quantiles the card states (percent).
QUANTILES = (5, 25, 50, 75, 95)
#: The explorer's bound: per variant, this many lowest-cosine items and this many flipped ones.
EXPLORER_TOP_N = 10
#: Similarities equal to this many decimals are ties in a top-10 list (broken by corpus order).
SIMILARITY_DECIMALS = 9
QUERY_TABLES = ("queries",)
#: Queries searched at once (their similarities to the whole corpus held in memory together).
QUERY_CHUNK = 64
#: Pairs whose discordance is counted at once (a row of comparisons with their whole subset each).
PAIR_CHUNK = 256
#: Texts whose embeddings the baseline holds at once (however many a language has).
BASELINE_CHUNK = 4096
METHOD = {
    "item": "one transformed text (a pair measure: one pair); seeds pooled per (transformation, dataset)",
    "sign": "every figure is a drift, 1 - cosine, as the paper's drift vs quality and the statistics block: "
    "0 = the embedding did not move; one sign for the whole card",
    "counted": "only texts the transformation changed (transformed != original), in subsets the variant's figure "
    "keeps (the Noise figure's left-out subsets are not counted); unchanged_share and left_out_share "
    "are over all items (null for rows of a part written before they were recorded: all counted)",
    "drift": "1 - cos(emb(original), emb(transformed)); queries with the query prompt",
    "pass": f"drift (to {DRIFT_DECIMALS} decimals) <= {PASS_DRIFT}, i.e. cosine >= {1 - PASS_DRIFT:g}",
    "baseline_drift": "per dataset and language: the mean of 1 - cos over every pair of two distinct original "
    "texts of the items (b = 1 - baseline_drift, the mean cosine of unrelated texts); "
    "the model's own embeddings, nothing embedded again",
    "calibrated_drift": "drift / baseline_drift = 1 - (cos - b) / (1 - b): 1 = as far as an unrelated text; "
    f"calibrated pass: <= {CALIBRATED_PASS}; undefined where the baseline drift is 0",
    "top10_changed": f"Retrieval query items: the set of the {TOP_K} nearest corpus documents (cosine, exact) "
    "of the original query differs from the transformed query's",
    "order_discordance": "STS, STR and pair-classification pairs with a counted text, once per pair: the share of "
    "the other pairs j of its subset with (s_i - s_j)(s'_i - s'_j) < 0, s = cos(sentence1, "
    f"sentence2) on the original texts and s' on the variant's, both to {DRIFT_DECIMALS} decimals "
    "(Kendall discordance, a tie no reversal: a monotone change of every similarity gives 0); "
    "the variant's figure is the mean over its pairs",
    "quality_spearman": "Spearman of the drift, calibrated drift, pass and top-10 change with the judge's quality "
    f"over the rated counted items (None under {MIN_QUALITY_ITEMS} or when either is constant)",
}


@dataclass
class VariantItems:
    """One variant's items: a drift row with its measures each, and the explorer's rows (with texts)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    explorer: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class Baseline:
    """One dataset's texts' languages and, per language, the model's mean drift between unrelated texts."""

    language: Mapping[tuple[str, str, str], str]  # (table, item id, field) -> the text's language
    drift: Mapping[str, float | None]  # language -> baseline drift (None: under two distinct texts)


def prompt_of(table: str) -> str | None:
    return "query" if table in QUERY_TABLES else None


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosines (a zero row: 0 with anything)."""
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.einsum("ij,ij->i", a, b) / np.where(norms == 0, 1.0, norms)


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def mean_pair_drift(chunks: Iterable[np.ndarray]) -> float | None:
    """The mean of 1 - cos over every pair of two different rows of the `chunks` together (a zero row:
    cosine 0 with every row), from the sum of the unit rows u: the sum over i != j of u_i . u_j is
    |sum u|^2 - sum |u_i|^2. None under two rows."""
    total, squares, n = 0.0, 0.0, 0
    for chunk in chunks:
        units = _unit(np.asarray(chunk, dtype=np.float64))
        total = total + units.sum(axis=0)
        squares += float(np.einsum("ij,ij->", units, units))
        n += len(units)
    if n < 2:
        return None
    return float(1.0 - (np.dot(total, total) - squares) / (n * (n - 1)))


def text_languages(original: SourceDataset) -> dict[tuple[str, str, str], str]:
    """(table, item id, field) -> the language of that text of the dataset."""
    columns = original.text_columns()
    return dict(zip(zip(columns["table"], columns["item_id"], columns["field"]), columns["language"]))


def baseline(variants: Sequence[Variant], original: SourceDataset | None, table: EmbeddingTable) -> Baseline:
    """The dataset's baseline: per language, `mean_pair_drift` over the distinct original texts of its
    items (any variant), each with its item's prompt; every one was embedded for the drift already."""
    if original is None:
        return Baseline({}, {})
    language = text_languages(original)
    pools: dict[str, dict[str | None, set[str]]] = defaultdict(lambda: defaultdict(set))
    for variant in variants:
        items = variant.items
        for ref, text in zip(items.refs() if items else (), items.original_text if items else ()):
            if ref in language:
                pools[language[ref]][prompt_of(ref[0])].add(text)
    embed = table.view(original.info)

    def chunks(pool: Mapping[str | None, set[str]]) -> Iterator[np.ndarray]:
        for prompt, texts in pool.items():
            ordered = sorted(texts)
            for start in range(0, len(ordered), BASELINE_CHUNK):
                yield np.asarray(embed(ordered[start : start + BASELINE_CHUNK], prompt))

    drift = {lang: mean_pair_drift(chunks(pool)) for lang, pool in sorted(pools.items())}
    return Baseline(language, {lang: None if d is None else round(d, DRIFT_DECIMALS) for lang, d in drift.items()})


def corpus_embeddings(variant: Variant, embed: Embed, documents: dict[str, np.ndarray]) -> np.ndarray:
    """The embeddings of the corpus `variant` searches (the run's, read from its table), kept in `documents` by
    dataset: every variant of a retrieval dataset and its minimal pairs search the same one."""
    name = variant.dataset.info.name
    if name not in documents:
        documents[name] = np.asarray(embed([doc_text(d) for d in variant.dataset.tables["corpus"]], "document"))
    return documents[name]


def top_k(queries: np.ndarray, documents: np.ndarray, k: int = TOP_K) -> list[frozenset[int]]:
    """The indices of the k documents of highest cosine with each query (ties: the earlier document)."""
    docs = _unit(documents.astype(np.float64)).T
    found: list[frozenset[int]] = []
    for start in range(0, len(queries), QUERY_CHUNK):  # a chunk's similarities at a time, however large the corpus
        chunk = _unit(queries[start : start + QUERY_CHUNK].astype(np.float64))
        order = np.argsort(-np.round(chunk @ docs, SIMILARITY_DECIMALS), axis=1, kind="stable")[:, :k]
        found.extend(frozenset(row.tolist()) for row in order)
    return found


def order_discordance(before: np.ndarray, after: np.ndarray, groups: Sequence[str], pairs: Sequence[int]) -> np.ndarray:
    """For each index of `pairs`: the share of the other pairs of its group whose order with it on `before`
    is reversed on `after`, (b_i - b_j)(a_i - a_j) < 0 with both read to DRIFT_DECIMALS decimals
    (a tie on either side is no reversal); NaN for a pair alone in its group. Rank-invariant: any
    non-decreasing map of every similarity keeps every order, so it gives 0."""
    b = np.round(np.asarray(before, dtype=np.float64), DRIFT_DECIMALS)
    a = np.round(np.asarray(after, dtype=np.float64), DRIFT_DECIMALS)
    members: dict[str, list[int]] = defaultdict(list)
    for at, group in enumerate(groups):
        members[group].append(at)
    wanted: dict[str, list[int]] = defaultdict(list)
    for at, pair in enumerate(pairs):
        wanted[groups[pair]].append(at)
    index = np.asarray(pairs, dtype=int)
    out = np.full(len(index), np.nan)
    for group, positions in wanted.items():
        peers = np.array(members[group])
        if len(peers) < 2:
            continue
        for start in range(0, len(positions), PAIR_CHUNK):
            chunk = positions[start : start + PAIR_CHUNK]
            rows = index[chunk]
            reversed_ = np.sign(b[rows, None] - b[None, peers]) * np.sign(a[rows, None] - a[None, peers]) < 0
            out[chunk] = reversed_.sum(axis=1) / (len(peers) - 1)
    return out


def measure_variant(
    variant: Variant,
    original: SourceDataset | None,
    table: EmbeddingTable,
    evaluator: Evaluator,
    documents: dict[str, np.ndarray] | None = None,
    *,
    base: Baseline,
    left_out: Collection[str] = (),
) -> VariantItems:
    """Every item of `variant` measured (`original`: the dataset's original data, for the pair order;
    `documents`: the corpus embeddings by dataset, kept by the caller so each variant of a retrieval
    dataset reuses them; `base`: the dataset's `baseline`; `left_out`: the subsets its figure leaves out)."""
    items = variant.items
    if not items:
        return VariantItems()
    info = variant.dataset.info
    embed = table.view(info)
    n = len(items)
    cosine = np.zeros(n)
    top10: list[bool | None] = [None] * n
    by_prompt: dict[str | None, list[int]] = defaultdict(list)
    for at, split in enumerate(items.split):
        by_prompt[prompt_of(split)].append(at)
    for prompt, rows in by_prompt.items():
        a = np.asarray(embed([items.original_text[at] for at in rows], prompt))
        b = np.asarray(embed([items.transformed_text[at] for at in rows], prompt))
        cosine[rows] = cosines(a, b)
        if task_type(info.task_type).searches_corpus and prompt == "query":
            documents = {} if documents is None else documents
            docs = corpus_embeddings(variant, embed, documents)
            for at, before, after in zip(rows, top_k(a, docs), top_k(b, docs)):
                top10[at] = before != after
    out = VariantItems()
    for at, ref in enumerate(items.refs()):
        language = base.language.get(ref)
        out.rows.append(
            {
                "dataset": items.dataset,
                **drift_row(
                    items.transformation,
                    items.quality[at],
                    items.original_text[at],
                    items.transformed_text[at],
                    float(1.0 - cosine[at]),
                    applicable=items.subset[at] not in left_out,
                ),
                "language": language,
                "baseline_drift": base.drift.get(language) if language else None,
                "top10_changed": top10[at],
                "order_discordance": None,
            }
        )
    pairs: dict[tuple[str, str], float] = {}
    if isinstance(evaluator, SentencePairEvaluator):
        chosen = {
            (split, item_id) for (split, item_id), row in zip(zip(items.split, items.item_id), out.rows) if counted(row)
        }
        pairs = _pair_discordance(variant, original, embed, chosen)
        carried: set[tuple[str, str]] = set()
        for key, row in zip(zip(items.split, items.item_id), out.rows):
            if key in pairs and key not in carried and counted(row):  # the pair's figure, on its first counted text
                row["order_discordance"] = pairs[key]
                carried.add(key)
    out.explorer = _explorer(variant, cosine, top10, [pairs.get(key) for key in zip(items.split, items.item_id)])
    return out


def _pair_discordance(
    variant: Variant, original: SourceDataset | None, embed: Any, chosen: Collection[tuple[str, str]]
) -> dict[tuple[str, str], float]:
    """(split, item id) -> `order_discordance` of each `chosen` pair, within its subset of the variant's rows."""
    if original is None or not chosen:
        return {}
    split = variant.dataset.info.eval_split
    before = dict(zip(original.ids[split], original.tables[split]))
    after = [
        (item_id, row)
        for item_id, row in zip(variant.dataset.ids[split], variant.dataset.tables[split])
        if item_id in before
    ]
    if not after:
        return {}

    def similarity(rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
        return cosines(
            np.asarray(embed([r["sentence1"] for r in rows], None), dtype=np.float64),
            np.asarray(embed([r["sentence2"] for r in rows], None), dtype=np.float64),
        )

    rows = [row for _, row in after]
    groups = [""] * len(rows)
    for subset, index in group_rows(rows).items():
        for at in index:
            groups[at] = subset
    wanted = [at for at, (item_id, _) in enumerate(after) if (split, item_id) in chosen]
    shares = order_discordance(similarity([before[item_id] for item_id, _ in after]), similarity(rows), groups, wanted)
    return {
        (split, after[at][0]): round(float(share), DRIFT_DECIMALS)
        for at, share in zip(wanted, shares)
        if not np.isnan(share)
    }


def _explorer(
    variant: Variant, cosine: np.ndarray, top10: Sequence[bool | None], order: Sequence[float | None]
) -> list[dict[str, Any]]:
    """The EXPLORER_TOP_N lowest-cosine items and the EXPLORER_TOP_N lowest-cosine flipped ones (a pair's
    texts: its order reversed against at least one other pair)."""
    items = variant.items
    assert items is not None
    flipped = [None if share is None else share > 0 for share in order]
    ranked = np.argsort(cosine, kind="stable").tolist()
    moved = ranked[:EXPLORER_TOP_N]
    flips = [at for at in ranked if top10[at] or flipped[at]][:EXPLORER_TOP_N]
    rows = []
    for at in sorted(set(moved) | set(flips), key=ranked.index):
        rows.append(
            {
                "dataset": items.dataset,
                "transformation": items.transformation,
                "seed": items.seed,
                "split": items.split[at],
                "item_id": items.item_id[at],
                "field": items.field[at],
                "original_text": items.original_text[at],
                "transformed_text": items.transformed_text[at],
                "cosine": float(cosine[at]),
                "top10_changed": top10[at],
                "order_flipped": flipped[at],
                "moved_most": at in moved,
                "outcome_flipped": bool(top10[at] or flipped[at]),
                "quality": items.quality[at],
                "fluency": items.fluency[at],
                "with_errors": bool(items.with_errors[at]),
            }
        )
    return rows


def _mean(values: Sequence[float | bool | None]) -> tuple[int, float | None]:
    defined = [float(v) for v in values if v is not None]
    return len(defined), (float(np.mean(defined)) if defined else None)


def _quality_rho(values: Sequence[float | bool | None], quality: Sequence[float | None]) -> float | None:
    pairs = [(float(v), float(q)) for v, q in zip(values, quality) if v is not None and q is not None]
    if len(pairs) < MIN_QUALITY_ITEMS:
        return None
    x, y = (np.array(v) for v in zip(*pairs))
    return spearman_rho(x, y)


def _share_of(rows: Sequence[Mapping[str, Any]], column: str, value: bool) -> float | None:
    """The share of `rows` whose `column` is `value`; None where a row does not say (a part written before
    the column was recorded, whose texts all count)."""
    found = [r.get(column) for r in rows]
    return None if any(v is None for v in found) else float(np.mean([v is value for v in found]))


def _calibrated(row: Mapping[str, Any]) -> float | None:
    base = row.get("baseline_drift")
    return None if not base else round(float(row["drift"]) / base, DRIFT_DECIMALS)


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One (transformation, dataset)'s measures from its items' rows, over the counted ones."""
    kept = [r for r in rows if counted(r)]
    drift = np.round(np.array([r["drift"] for r in kept], dtype=float), DRIFT_DECIMALS)
    passed = (drift <= PASS_DRIFT).tolist()
    calibrated = [_calibrated(r) for r in kept]
    quality = [r.get("quality") for r in kept]
    n_calibrated, calibrated_mean = _mean(calibrated)
    _, calibrated_pass = _mean([None if c is None else c <= CALIBRATED_PASS for c in calibrated])
    n_queries, top10 = _mean([r.get("top10_changed") for r in kept])
    n_pairs, discordance = _mean([r.get("order_discordance") for r in kept])
    quantiles = np.percentile(drift, QUANTILES) if len(kept) else [None] * len(QUANTILES)
    n_rated, drift_rho = sum(q is not None for q in quality), _quality_rho(drift.tolist(), quality)
    return {
        "n_items": len(rows),
        "unchanged_share": _share_of(rows, "changed", False),
        "left_out_share": _share_of(rows, "applicable", False),
        "n_counted": len(kept),
        "drift_mean": float(drift.mean()) if len(kept) else None,
        **{f"drift_p{q}": None if v is None else float(v) for q, v in zip(QUANTILES, quantiles)},
        "pass_rate": float(np.mean(passed)) if len(kept) else None,
        "baseline_drift": dict(
            sorted({r["language"]: r.get("baseline_drift") for r in kept if r.get("language") is not None}.items())
        ),
        "n_calibrated": n_calibrated,
        "calibrated_drift_mean": calibrated_mean,
        "calibrated_pass_rate": calibrated_pass,
        "n_query_items": n_queries,
        "top10_changed_share": top10,
        "n_pair_items": n_pairs,
        "order_discordance": discordance,
        "n_rated": n_rated,
        "quality_spearman": {
            "drift": drift_rho,
            "calibrated_drift": _quality_rho(calibrated, quality),
            "pass": _quality_rho(passed, quality),
            "top10_changed": _quality_rho([r.get("top10_changed") for r in kept], quality),
        },
        **({} if drift_rho is None else {"quality_spearman_interval": {"drift": _interval(drift_rho, n_rated)}}),
    }


def _interval(rho: float, n: int) -> list[float] | None:
    found = spearman_interval(rho, n)
    return None if found is None else list(found)


def item_measures_block(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The card's `item_measures`: per transformation and dataset, `summary`. None without a transformed
    item. What they cost is the card's `timings.item_measures_s` (one process's, like every timing)."""
    grouped: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        grouped[row["transformation"]][row["dataset"]].append(row)
    if not grouped:
        return None
    return {
        "method": dict(METHOD),
        "sign": "drift",
        "pass_drift": PASS_DRIFT,
        "calibrated_pass": CALIBRATED_PASS,
        "top_k": TOP_K,
        "quantiles": list(QUANTILES),
        "explorer_top_n": EXPLORER_TOP_N,
        "per_transformation": {t: {d: summary(by_d[d]) for d in sorted(by_d)} for t, by_d in sorted(grouped.items())},
    }
