"""Corpus robustness (`hteb-score --corpus-robustness`): SAGE's retrieval robustness (the SAGE
paper, Task 5 and App. A.6; docs/noise.md) on a revision made with `hteb-generate --corpus-noise`.

For each retrieval dataset with a perturbed corpus, the ORIGINAL queries are searched in the
corpus under one noise rule and seed at a time (every title and text perturbed, the documents
replacing the clean ones), scored as the original is (same evaluator, same protocol):

- retention of a perturbation = nDCG@10(perturbed corpus) / nDCG@10(original corpus), with
  nDCG@10 the mean over the dataset's subsets; over several seeds, the mean of their retentions;
  undefined (null) when the original nDCG@10 is 0 or undefined;
- the dataset's robustness = the harmonic mean of its perturbations' retentions (scipy.stats.hmean;
  SAGE: it penalises a poor perturbation more than the arithmetic mean would); null when one is.

Each perturbed corpus replaces the clean one (one corpus per perturbation, as SAGE's per-perturbation
ratio reads) rather than joining it. The section stands on its own: it is never part of the HTEB
total or the Noise axis, whose noise is on the queries.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import TYPE_CHECKING, Any

from scipy.stats import hmean
from tqdm.auto import tqdm

from hteb_contract.errors import HtebError, IntegrityError
from hteb_contract.records import ItemRecord
from hteb_contract.revision import CORPUS_TASK_TYPES, Revision
from hteb_contract.sources import SourceDataset
from hteb_contract.tasks import TextRef
from hteb_score.evaluators import EVALUATORS, EvaluationContext, TaskScore

if TYPE_CHECKING:  # the card imports this module for its section; neither is needed to render it
    from hteb_score.encoding.encoder import EmbeddingTable, Request
    from hteb_score.evaluators.protocol import Protocol

METRIC = "ndcg_at_10"
OPTION = "--corpus-robustness"


@dataclass(frozen=True)
class CorpusVariant:
    """A retrieval dataset with its original queries and its corpus under one (transformation, seed)."""

    dataset: SourceDataset
    transformation: str
    seed: int


def corpus_variants(
    revision: Revision, names: Sequence[str], *, transformations: Sequence[str] | None, seeds: Sequence[int] | None
) -> list[CorpusVariant]:
    """The selected perturbed corpora of the retrieval datasets `names`; none at all is a one-line error."""
    variants = []
    for name in names:
        source = revision.source(name)
        if source.info.task_type not in CORPUS_TASK_TYPES:
            continue
        for transformation, seed in revision.corpus_variants(name):
            if (transformations is None or transformation in transformations) and (seeds is None or seed in seeds):
                records = revision.corpus_items(name, transformation, seed)
                perturbed = source.with_corpus_texts(
                    _lookup(records, f"revision {revision.label}: {name} corpus {transformation}_{seed}")
                )
                variants.append(CorpusVariant(perturbed, transformation, seed))
    if not variants:
        selected = "" if transformations is None and seeds is None else " for the selected transformations/seeds"
        raise HtebError(
            f"{OPTION}: revision {revision.label} has no perturbed corpus of a retrieval dataset"
            f"{selected}; make one with hteb-generate --corpus-noise"
        )
    return variants


def _lookup(records: Sequence[ItemRecord], where: str) -> Callable[[TextRef], str]:
    """The perturbed text of each corpus title and text; one without a record is an IntegrityError."""
    by_ref = {r.ref: r.transformed_text for r in records}

    def lookup(ref: TextRef) -> str:
        text = by_ref.get((ref.table, ref.item_id, ref.field))
        if text is None:
            raise IntegrityError(f"{where}: no record for {ref.table}/{ref.item_id}/{ref.field}")
        return text

    return lookup


def ndcg_at_10(result: TaskScore) -> float | None:
    """A retrieval score's nDCG@10: the mean over its subsets (mteb's unweighted mean), whatever its main metric."""
    values = [details.get(METRIC) for details in result.details.values()]
    defined = [v for v in values if v is not None]
    return float(mean(defined)) if defined and len(defined) == len(values) else None


def retention(original: float | None, perturbed: float | None) -> float | None:
    """nDCG@10 kept under a perturbation: perturbed / original; undefined without a positive original."""
    if original is None or perturbed is None or original <= 0:
        return None
    return perturbed / original


def summarise(original: float | None, perturbed: Mapping[str, Mapping[int, float | None]]) -> dict[str, Any]:
    """One dataset's block: `perturbed` is transformation -> seed -> nDCG@10 of the perturbed corpus.

    Per transformation, the mean of its seeds' retentions; the harmonic mean over transformations."""
    per_seed = {t: {s: retention(original, v) for s, v in seeds.items()} for t, seeds in perturbed.items()}
    retentions = {
        t: float(mean(kept)) if len(kept := [r for r in rs.values() if r is not None]) == len(rs) else None
        for t, rs in per_seed.items()
    }
    values = list(retentions.values())
    robustness = None if not values or any(r is None for r in values) else float(hmean(values))
    return {
        "original": original,
        "perturbed": {t: {str(s): v for s, v in seeds.items()} for t, seeds in perturbed.items()},
        "retention": retentions,
        "harmonic_mean": robustness,
    }


def score_corpus_robustness(
    variants: Sequence[CorpusVariant],
    originals: Mapping[str, TaskScore],
    table: EmbeddingTable,
    *,
    protocol: Protocol,
    progress: bool = True,
) -> dict[str, Any]:
    """The card section: each perturbed corpus scored with the original queries, beside `originals`
    (dataset -> its original score of this run). Each unique document is embedded once (`table`)."""
    texts: list[Request] = []
    for variant in variants:
        task = variant.dataset.info
        texts.extend((task, text, prompt) for text, prompt in EVALUATORS.get(task.task_type).texts(variant.dataset))
    table.fill(texts, progress=progress)
    context = EvaluationContext(protocol)
    perturbed: dict[str, dict[str, dict[int, float | None]]] = {}
    for variant in tqdm(variants, desc="perturbed corpora", unit="corpus", disable=not progress):
        evaluator, task = EVALUATORS.get(variant.dataset.info.task_type), variant.dataset.info
        result = evaluator.evaluate(variant.dataset, table.view(task), context)
        by_seed = perturbed.setdefault(variant.dataset.name, {}).setdefault(variant.transformation, {})
        by_seed[variant.seed] = ndcg_at_10(result)
    return section({name: summarise(ndcg_at_10(originals[name]), by_t) for name, by_t in perturbed.items()})


def section(datasets: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The card section of these datasets' blocks (`summarise`), a run's or merged work units'."""
    return {"metric": METRIC, "queries": "original", "datasets": dict(datasets)}
