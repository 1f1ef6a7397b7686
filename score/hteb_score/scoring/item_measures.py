"""Per-item robustness, label-free (the card's `item_measures`; docs/scoring.md#per-item-measures), from
the embeddings the run already has: nothing is embedded again.

An item is one transformed text (the unit the judge rates). For each item of a variant:

- `cosine`: cos(emb(original text), emb(transformed text)), queries with the query prompt (drift is 1 - it);
- `top10_changed` (Retrieval, query items): the set of the TOP_K corpus documents nearest the original query
  (cosine, exact; similarities equal to SIMILARITY_DECIMALS decimals tie, broken by corpus order) differs from
  the transformed query's; None elsewhere;
- `order_flipped` (STS, STR and pair classification): with s = cos(emb(sentence1), emb(sentence2)) of each
  pair (to SIMILARITY_DECIMALS decimals) and m the median of s over the dataset's pairs (every subset) on their
  original texts, the item's pair is above m on its original texts and not on its transformed texts, or the
  other way round: it has left its half of the predicted similarity order (the order both metrics rank by).
  None elsewhere.

Per (transformation, dataset), seeds pooled: the cosine's mean and quantiles QUANTILES, the pass rate
(cosine >= PASS_COSINE), the share of query items whose top-10 changed and of pair items whose order flipped,
and each measure's Spearman correlation with the judge's quality over the rated items. The block stands
apart from the task-metric totals. The explorer keeps, per variant, the EXPLORER_TOP_N items that moved most
(lowest cosine) and the EXPLORER_TOP_N lowest-cosine items whose outcome flipped, with their texts.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from hteb_contract.common.escape import md_text
from hteb_score.evaluators.pairs import SentencePairEvaluator
from hteb_score.evaluators.trec import doc_text
from hteb_score.scoring.statistics import MIN_QUALITY_ITEMS, drift_row
from hteb_score.stats.ranking import spearman_rho

if TYPE_CHECKING:  # annotations only
    from hteb_contract.sources import SourceDataset
    from hteb_score.encoding.encoder import EmbeddingTable
    from hteb_score.evaluators.base import Evaluator
    from hteb_score.scoring.data import Variant

#: An item passes when its embedding keeps at least this cosine with its original's.
PASS_COSINE = 0.9
#: How many nearest documents a query's top list holds.
TOP_K = 10
#: The cosine quantiles the card states (percent).
QUANTILES = (5, 25, 50, 75, 95)
#: The explorer's bound: per variant, this many lowest-cosine items and this many flipped ones.
EXPLORER_TOP_N = 10
#: Similarities equal to this many decimals are ties (broken by corpus order; a pair at the median is not above it).
SIMILARITY_DECIMALS = 9
#: An item's cosine as the pass rate and the Spearman correlations read it: float32 embeddings give about
#: 7 significant digits, so cosines equal to 6 decimals are ties, not an order.
COSINE_DECIMALS = 6
QUERY_TABLES = ("queries",)
#: Queries searched at once (their similarities to the whole corpus held in memory together).
QUERY_CHUNK = 64
#: The per-item measures a part keeps beside each drift row.
MEASURE_COLUMNS = ("top10_changed", "order_flipped")
METHOD = {
    "item": "one transformed text; seeds pooled per (transformation, dataset)",
    "cosine": "cos(emb(original), emb(transformed)); queries with the query prompt",
    "pass": f"cosine (to {COSINE_DECIMALS} decimals) >= {PASS_COSINE}",
    "top10_changed": f"Retrieval query items: the set of the {TOP_K} nearest corpus documents (cosine, exact) "
                     "of the original query differs from the transformed query's",
    "order_flipped": "STS, STR and pair-classification items: the pair's cos(sentence1, sentence2) is above the median "
                     "over the dataset's original pairs on one side of the transformation and not on the other",
    "quality_spearman": f"Spearman of each measure with the judge's quality over rated items "
                        f"(None under {MIN_QUALITY_ITEMS} or when either is constant)",
}


@dataclass
class VariantItems:
    """One variant's items: a drift row with its measures each, and the explorer's rows (with texts)."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    explorer: list[dict[str, Any]] = field(default_factory=list)


def prompt_of(table: str) -> str | None:
    return "query" if table in QUERY_TABLES else None


def _cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.einsum("ij,ij->i", a, b) / np.where(norms == 0, 1.0, norms)


def _unit(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms == 0, 1.0, norms)


def top_k(queries: np.ndarray, documents: np.ndarray, k: int = TOP_K) -> list[frozenset[int]]:
    """The indices of the k documents of highest cosine with each query (ties: the earlier document)."""
    docs = _unit(documents.astype(np.float64)).T
    found: list[frozenset[int]] = []
    for start in range(0, len(queries), QUERY_CHUNK):  # a chunk's similarities at a time, however large the corpus
        chunk = _unit(queries[start:start + QUERY_CHUNK].astype(np.float64))
        order = np.argsort(-np.round(chunk @ docs, SIMILARITY_DECIMALS), axis=1, kind="stable")[:, :k]
        found.extend(frozenset(row.tolist()) for row in order)
    return found


def measure_variant(variant: Variant, original: SourceDataset | None, table: EmbeddingTable,
                    evaluator: Evaluator, documents: dict[str, np.ndarray] | None = None) -> VariantItems:
    """Every item of `variant` measured (`original`: the dataset's original data, for the pair order;
    `documents`: the corpus embeddings by dataset, kept by the caller so each variant of a retrieval
    dataset reuses them)."""
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
        cosine[rows] = _cosines(a, b)
        if info.task_type == "Retrieval" and prompt == "query":
            documents = {} if documents is None else documents
            if info.name not in documents:
                documents[info.name] = np.asarray(embed([doc_text(d) for d in variant.dataset.tables["corpus"]],
                                                        "document"))
            docs = documents[info.name]
            for at, before, after in zip(rows, top_k(a, docs), top_k(b, docs)):
                top10[at] = before != after
    flipped = _order_flips(variant, original, embed) if isinstance(evaluator, SentencePairEvaluator) else {}
    order = [flipped.get((split, item_id)) for split, item_id in zip(items.split, items.item_id)]
    out = VariantItems()
    for at in range(n):
        out.rows.append({"dataset": items.dataset,
                         **drift_row(items.transformation, items.quality[at], items.original_text[at],
                                     items.transformed_text[at], float(1.0 - cosine[at])),
                         "top10_changed": top10[at], "order_flipped": order[at]})
    out.explorer = _explorer(variant, cosine, top10, order)
    return out


def _order_flips(variant: Variant, original: SourceDataset | None, embed: Any) -> dict[tuple[str, str], bool]:
    """(split, item id) -> whether its pair changed sides of the original pairs' median similarity."""
    if original is None:
        return {}
    split = variant.dataset.info.eval_split
    before = dict(zip(original.ids[split], original.tables[split]))
    after = [(item_id, row) for item_id, row in zip(variant.dataset.ids[split], variant.dataset.tables[split])
             if item_id in before]
    if not after:
        return {}

    def similarity(rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
        return np.round(_cosines(np.asarray(embed([r["sentence1"] for r in rows], None), dtype=np.float64),
                                 np.asarray(embed([r["sentence2"] for r in rows], None), dtype=np.float64)),
                        SIMILARITY_DECIMALS)

    s_before = similarity([before[item_id] for item_id, _ in after])
    s_after = similarity([row for _, row in after])
    median = float(np.median(similarity(list(before.values()))))
    return {(split, item_id): bool((x > median) != (y > median))
            for (item_id, _), x, y in zip(after, s_before, s_after)}


def _explorer(variant: Variant, cosine: np.ndarray, top10: Sequence[bool | None],
              order: Sequence[bool | None]) -> list[dict[str, Any]]:
    """The EXPLORER_TOP_N lowest-cosine items and the EXPLORER_TOP_N lowest-cosine flipped ones."""
    items = variant.items
    assert items is not None
    ranked = np.argsort(cosine, kind="stable").tolist()
    moved = ranked[:EXPLORER_TOP_N]
    flips = [at for at in ranked if top10[at] or order[at]][:EXPLORER_TOP_N]
    rows = []
    for at in sorted(set(moved) | set(flips), key=ranked.index):
        rows.append({"dataset": items.dataset, "transformation": items.transformation, "seed": items.seed,
                     "split": items.split[at], "item_id": items.item_id[at], "field": items.field[at],
                     "original_text": items.original_text[at], "transformed_text": items.transformed_text[at],
                     "cosine": float(cosine[at]), "top10_changed": top10[at], "order_flipped": order[at],
                     "moved_most": at in moved, "outcome_flipped": bool(top10[at] or order[at]),
                     "quality": items.quality[at], "fluency": items.fluency[at],
                     "with_errors": bool(items.with_errors[at])})
    return rows


def _share(values: Sequence[bool | None]) -> tuple[int, float | None]:
    defined = [v for v in values if v is not None]
    return len(defined), (float(np.mean(defined)) if defined else None)


def _quality_rho(values: Sequence[float | bool | None], quality: Sequence[float | None]) -> float | None:
    pairs = [(float(v), float(q)) for v, q in zip(values, quality) if v is not None and q is not None]
    if len(pairs) < MIN_QUALITY_ITEMS:
        return None
    x, y = (np.array(v) for v in zip(*pairs))
    return spearman_rho(x, y)


def summary(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """One (transformation, dataset)'s measures from its items' rows."""
    cosine = np.array([1.0 - r["drift"] for r in rows], dtype=float)
    rounded = np.round(cosine, COSINE_DECIMALS)
    passed = (rounded >= PASS_COSINE).tolist()
    quality = [r.get("quality") for r in rows]
    n_queries, top10 = _share([r.get("top10_changed") for r in rows])
    n_pairs, flips = _share([r.get("order_flipped") for r in rows])
    quantiles = np.percentile(cosine, QUANTILES)
    return {
        "n_items": len(rows), "cosine_mean": float(cosine.mean()),
        **{f"cosine_p{q}": float(v) for q, v in zip(QUANTILES, quantiles)},
        "pass_rate": float(np.mean(passed)),
        "n_query_items": n_queries, "top10_changed_share": top10,
        "n_pair_items": n_pairs, "order_flipped_share": flips,
        "n_rated": sum(q is not None for q in quality),
        "quality_spearman": {"cosine": _quality_rho(rounded.tolist(), quality), "pass": _quality_rho(passed, quality),
                             "top10_changed": _quality_rho([r.get("top10_changed") for r in rows], quality),
                             "order_flipped": _quality_rho([r.get("order_flipped") for r in rows], quality)},
    }


def item_measures_block(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The card's `item_measures`: per transformation and dataset, `summary`. None without a transformed
    item. What they cost is the card's `timings.item_measures_s` (one process's, like every timing)."""
    grouped: dict[str, dict[str, list[Mapping[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for row in rows:
        grouped[row["transformation"]][row["dataset"]].append(row)
    if not grouped:
        return None
    return {"method": dict(METHOD), "pass_cosine": PASS_COSINE, "top_k": TOP_K, "quantiles": list(QUANTILES),
            "explorer_top_n": EXPLORER_TOP_N,
            "per_transformation": {t: {d: summary(by_d[d]) for d in sorted(by_d)}
                                   for t, by_d in sorted(grouped.items())}}


def _cell(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def markdown_lines(block: Mapping[str, Any] | None) -> list[str]:
    """The card's section: one row per transformation and dataset."""
    if not block:
        return []
    lines = ["", "## Per-item measures (label-free; not in the HTEB total)", "",
             f"Per transformed text: cosine of its embedding with its original's; pass = cosine >= "
             f"{block['pass_cosine']}; top-{block['top_k']} changed (retrieval queries); pair order flipped "
             "(STS, STR, pair classification); rho = Spearman with the judge's quality (their cost: the last line).",
             "",
             "| transformation | dataset | items | cosine mean | p5 | p50 | p95 | pass | top-10 changed "
             "| order flipped | rho cosine |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for transformation, by_dataset in block["per_transformation"].items():
        for dataset, s in by_dataset.items():
            lines.append(f"| {md_text(transformation)} | {md_text(dataset)} | {s['n_items']} "
                         f"| {_cell(s['cosine_mean'])} "
                         f"| {_cell(s['cosine_p5'])} | {_cell(s['cosine_p50'])} | {_cell(s['cosine_p95'])} "
                         f"| {_cell(s['pass_rate'])} | {_cell(s['top10_changed_share'])} "
                         f"| {_cell(s['order_flipped_share'])} | {_cell(s['quality_spearman']['cosine'])} |")
    return lines
