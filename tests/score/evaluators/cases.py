"""Small real datasets for the evaluator tests, cut from ../shared/data, each with the mteb task
class that scores it in the differential tests."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from reranking_cases import scifact_reranking
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_generate.sources.source_loading import sample_dataset


def _with(dataset: SourceDataset, *, mteb_task: str | None = None, **tables: list) -> SourceDataset:
    info = replace(dataset.info, mteb_task=mteb_task or dataset.info.mteb_task)
    return SourceDataset(info, {**dataset.tables, **tables}, origin=dataset.origin)


def banking77(data: Path) -> SourceDataset:
    """12 intents: 20 training and 10 test rows each (few-shot takes 8 of the 20)."""
    full = read_source_dir(data / "Banking77")
    labels = sorted({r["label"] for r in full.tables["train"]})[:12]

    def first(rows: list, n: int) -> list:
        out, seen = [], {}
        for row in rows:
            if row["label"] in labels and seen.get(row["label"], 0) < n:
                out.append(row)
                seen[row["label"]] = seen.get(row["label"], 0) + 1
        return out

    return _with(full, train=first(full.tables["train"], 20), test=first(full.tables["test"], 10))


def masakhanews(data: Path) -> SourceDataset:
    """Four languages, every 16th headline (the files are sorted by category), plus one
    single-category language subset, which mteb scores 1.0 without clustering. Flat rows: mteb's
    protocol cuts each language into 5 contiguous cluster sets."""
    full = read_source_dir(data / "MasakhaNEWS")
    rows = []
    for lang in ("amh", "eng", "hau", "swa"):
        rows += [r for r in full.tables["test"] if r["lang"] == lang][::16]
    rows += [r for r in full.tables["test"] if r["lang"] == "yor"][:5]
    return _with(full, test=rows)


def masakhanews_cluster_sets(data: Path) -> SourceDataset:
    """The rows of `masakhanews` in the Hub layout's terms: each carries `cluster_set`, the Hub row
    it came from, here every third row of a language in one set (not contiguous, unlike the 5
    sets a flat copy is cut into)."""
    base = masakhanews(data)
    position: dict[str, int] = {}
    rows = []
    for row in base.tables["test"]:
        n = position[row["lang"]] = position.get(row["lang"], -1) + 1
        rows.append({**row, "cluster_set": n % 3})
    return _with(base, test=rows)


def biorxiv_like(data: Path) -> SourceDataset:
    """English MasakhaNEWS headlines in 4 cluster sets of mixed categories, scored as mteb's
    BiorxivClusteringS2S (legacy, one "default" subset, sets only from `cluster_set`)."""
    full = read_source_dir(data / "MasakhaNEWS")
    english = [r for r in full.tables["test"] if r["lang"] == "eng"][::6]
    rows = [{"text": r["text"], "label": r["label"], "cluster_set": i % 4} for i, r in enumerate(english)]
    info = replace(
        full.info,
        name="BiorxivLike",
        mteb_task="BiorxivClusteringS2S",
        languages=("eng",),
        subsets={"default": ("eng",)},
    )
    return SourceDataset(info, {"test": rows}, origin=full.origin)


def scifact(data: Path, queries: int = 8) -> SourceDataset:
    return sample_dataset(read_source_dir(data / "SciFact"), queries)


def scifact_self_hits(data: Path) -> SourceDataset:
    """SciFact whose first 10 queries carry the id of one of their relevant documents, scored as
    ArguAna (ignore_identical_ids=True): the self-hit removal then drops a relevant document."""
    base = scifact(data)
    renamed = {}
    for row in base.tables["qrels"]:
        if len(renamed) < 10 and row["query_id"] not in renamed and row["doc_id"] not in renamed.values():
            renamed[row["query_id"]] = row["doc_id"]
    queries = [{**q, "id": renamed.get(q["id"], q["id"])} for q in base.tables["queries"]]
    qrels = [{**r, "query_id": renamed.get(r["query_id"], r["query_id"])} for r in base.tables["qrels"]]
    return _with(base, mteb_task="ArguAna", queries=queries, qrels=qrels)


CASES: dict[str, tuple[Callable[[Path], SourceDataset], str]] = {
    "STSBenchmark": (lambda d: sample_dataset(read_source_dir(d / "STSBenchmark"), 150), "STSBenchmark"),
    "SemRel2024": (lambda d: sample_dataset(read_source_dir(d / "SemRel2024"), 10), "SemRel24STS"),
    "TwitterSemEval2015": (
        lambda d: sample_dataset(read_source_dir(d / "TwitterSemEval2015"), 200),
        "TwitterSemEval2015",
    ),
    "Banking77": (banking77, "Banking77Classification"),
    "IsiZuluNews": (lambda d: read_source_dir(d / "IsiZuluNews"), "IsiZuluNewsClassification"),
    "TwentyNewsgroups": (
        lambda d: sample_dataset(read_source_dir(d / "TwentyNewsgroups"), 1500),
        "TwentyNewsgroupsClustering.v2",
    ),
    "MasakhaNEWS": (masakhanews, "MasakhaNEWSClusteringS2S"),
    "MasakhaNEWSClusterSets": (masakhanews_cluster_sets, "MasakhaNEWSClusteringS2S"),
    "BiorxivLike": (biorxiv_like, "BiorxivClusteringS2S"),
    "SciFact": (scifact, "SciFact"),
    "SciFactSelfHits": (scifact_self_hits, "ArguAna"),
    "SciFactReranking": (lambda d: scifact_reranking(scifact(d)), "SciDocsRR"),
    "SummEval": (lambda d: sample_dataset(read_source_dir(d / "SummEval"), 4), "SummEval"),
    "SummEval.v2": (
        lambda d: _with(sample_dataset(read_source_dir(d / "SummEval"), 4), mteb_task="SummEvalSummarization.v2"),
        "SummEvalSummarization.v2",
    ),
}
