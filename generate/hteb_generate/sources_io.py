"""Reading the source datasets a run transforms: local copies (CPU profile) or the Hub (GPU).

The CPU profile keeps a run short (about half an hour on 2 cores): `sample` rows per language subset (hteb_score's
deterministic sampler), at most `max_list` elements per list field (SummEval's summaries), then
at most `max_texts` transformed texts per dataset (whole rows, at least one).
"""

from __future__ import annotations

from pathlib import Path

from hteb_score.sources import SourceDataset, read_source_dir, sample_dataset
from hteb_score.tasks import iter_field_texts, task_type

from .registry import SourceEntry


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
                if isinstance(value, list) and len(value) == length and (column == fld or column not in spec.list_fields):
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
    if info.task_type in ("Retrieval", "Reranking"):
        return dataset
    spec = task_type(info.task_type)
    fields = [f for _, f in spec.text_fields]
    rows, ids, count = [], [], 0
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


def load_source(entry: SourceEntry, *, source: str, data_dir: Path, sample: int | None, max_texts: int | None,
                max_list: int | None = None) -> SourceDataset:
    """One registered dataset, sampled as configured."""
    if source == "local":
        dataset = read_source_dir(Path(data_dir) / str(entry.local))
    else:
        from .hub_sources import load_hub_dataset

        dataset = load_hub_dataset(entry)
    if sample is not None:
        dataset = sample_dataset(dataset, sample)
    if max_list is not None:
        dataset = cap_lists(dataset, max_list)
    if max_texts is not None:
        dataset = cap_texts(dataset, max_texts)
    return dataset
