"""Reading the source datasets a run transforms: local copies (CPU profile) or the Hub (GPU).

The CPU profile keeps a run short (about half an hour on 2 cores): `sample` rows per language subset
(`sample_dataset`, deterministic, dealt out label by label), at most `max_list` elements per list
field (SummEval's summaries), then at most `max_texts` transformed texts per dataset (whole rows,
at least one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hteb_contract.errors import SourceError
from hteb_contract.source_values import subset_of
from hteb_contract.sources import SourceDataset, read_source_dir
from hteb_contract.specs.datasets import DatasetSpec
from hteb_contract.tasks import iter_field_texts, task_type


def sample_dataset(dataset: SourceDataset, rows_per_subset: int) -> SourceDataset:
    """A deterministic sample: `rows_per_subset` evaluation rows of each language subset, dealt out
    label by label when rows carry a `label` (sources are often sorted by label, and the first rows
    alone would hold one class: an AP or V-measure of nothing), kept in dataset order.

    Retrieval and reranking keep the first `rows_per_subset` judged queries of each subset and their
    relevant and candidate documents (so every sampled query still has its positives); the rest of
    the corpus is cut to the first `10 * rows_per_subset` other documents, as distractors.
    """
    info, tables = dataset.info, dict(dataset.tables)
    if task_type(info.task_type).has_corpus:
        relevant: dict[str, set[str]] = {}
        for row in tables["qrels"]:
            relevant.setdefault(str(row["query_id"]), set()).add(str(row["doc_id"]))
        judged: dict[str, list[str]] = {}
        for query in tables["queries"]:
            if str(query["id"]) in relevant:
                judged.setdefault(subset_of(query), []).append(str(query["id"]))
        keep_q = {q for ids in judged.values() for q in ids[:rows_per_subset]}
        queries = [q for q in tables["queries"] if str(q["id"]) in keep_q]
        keep_docs = set().union(*(relevant[q] for q in keep_q)) if keep_q else set()
        if "top_ranked" in tables:
            tables["top_ranked"] = [r for r in tables["top_ranked"] if str(r["query_id"]) in keep_q]
            for row in tables["top_ranked"]:
                keep_docs.update(str(d) for d in row["doc_ids"])
        distractors = [d for d in tables["corpus"] if str(d["id"]) not in keep_docs][: 10 * rows_per_subset]
        keep_docs.update(str(d["id"]) for d in distractors)
        tables["queries"] = queries
        tables["qrels"] = [r for r in tables["qrels"] if str(r["query_id"]) in keep_q]
        tables["corpus"] = [d for d in tables["corpus"] if str(d["id"]) in keep_docs]
        return SourceDataset(info, tables, origin=dataset.origin)
    rows = tables[info.eval_split]
    by_subset: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_subset.setdefault(subset_of(row), []).append(index)
    keep = sorted(i for indices in by_subset.values() for i in _dealt_by_label(rows, indices)[:rows_per_subset])
    tables[info.eval_split] = [rows[i] for i in keep]
    ids = {table: dataset.ids[table] for table in tables if table != info.eval_split}
    ids[info.eval_split] = [dataset.ids[info.eval_split][i] for i in keep]  # item ids stay those of the full dataset
    return SourceDataset(info, tables, origin=dataset.origin, ids=ids)


def _dealt_by_label(rows: list[dict], indices: list[int]) -> list[int]:
    """`indices` reordered round-robin over their rows' labels (labels in order of first appearance):
    the first n then span min(n, #labels) classes. Rows without a label keep their order."""
    by_label: dict[str, list[int]] = {}
    for i in indices:
        by_label.setdefault(str(rows[i].get("label")), []).append(i)
    groups = list(by_label.values())
    return [group[rank] for rank in range(max(map(len, groups), default=0)) for group in groups if rank < len(group)]


def cap_lists(dataset: SourceDataset, max_list: int) -> SourceDataset:
    """Evaluation rows with at most `max_list` elements in each transformed list field (SummEval's
    summaries), and the columns parallel to it (same length: relevance, systems, ...) cut alike.

    Only for the CPU sample, where one SummEval row would otherwise be 27 texts.
    """
    info = dataset.info
    spec = task_type(info.task_type)
    if not spec.list_fields:
        return dataset
    rows = []
    for row in dataset.eval_rows():
        new = dict(row)
        for fld in spec.list_fields:
            length = len(row[fld])
            for column, value in row.items():
                if (
                    isinstance(value, list)
                    and len(value) == length
                    and (column == fld or column not in spec.list_fields)
                ):
                    new[column] = value[:max_list]
        rows.append(new)
    tables = {**dataset.tables, info.eval_split: rows}
    return SourceDataset(info, tables, origin=dataset.origin, ids=dict(dataset.ids))


def cap_texts(dataset: SourceDataset, max_texts: int) -> SourceDataset:
    """The first evaluation rows holding at most `max_texts` transformed texts (at least one row).

    Retrieval and reranking are left as sampled: their transformed texts are the queries, which
    `sample` already counts.
    """
    info = dataset.info
    if task_type(info.task_type).has_corpus:
        return dataset
    spec = task_type(info.task_type)
    fields = [f for _, f in spec.text_fields]
    rows: list[dict[str, Any]] = []
    ids: list[str] = []
    count = 0
    for item_id, row in zip(dataset.ids[info.eval_split], dataset.eval_rows()):
        n = sum(1 for f in fields for _ in iter_field_texts(row, f, spec.list_fields))
        if rows and count + n > max_texts:
            break
        rows.append(row)
        ids.append(item_id)
        count += n
    tables = dict(dataset.tables)
    tables[info.eval_split] = rows
    all_ids = {t: dataset.ids[t] for t in tables if t != info.eval_split}
    all_ids[info.eval_split] = ids
    return SourceDataset(info, tables, origin=dataset.origin, ids=all_ids)


def load_source(
    entry: DatasetSpec,
    *,
    source: str,
    data_dir: Path,
    sample: int | None,
    max_texts: int | None,
    max_list: int | None = None,
) -> SourceDataset:
    """One registered dataset, sampled as configured."""
    if source == "local":
        dataset = local_dataset(entry, Path(data_dir))
    else:
        from hteb_generate.sources.hub_sources import load_hub_dataset

        dataset = load_hub_dataset(entry)
    if sample is not None:
        dataset = sample_dataset(dataset, sample)
    if max_list is not None:
        dataset = cap_lists(dataset, max_list)
    if max_texts is not None:
        dataset = cap_texts(dataset, max_texts)
    return dataset


def local_dataset(entry: DatasetSpec, data_dir: Path) -> SourceDataset:
    """An entry's local copy: its subsets only, under its name (SemRel2024-eng reads the `eng` rows of
    shared/data's SemRel2024); each subset must have the languages the entry gives it."""
    dataset = read_source_dir(data_dir / str(entry.local))
    for subset, codes in entry.subsets.items():
        found = dataset.info.subsets.get(subset)
        if found is not None and found != tuple(codes):
            raise SourceError(
                f"{dataset.origin}: subset {subset!r} has languages {list(found)}; {entry.name} expects {list(codes)}"
            )
    return dataset.select_subsets(entry.subsets, name=entry.name)
