"""Per-subset counts of the texts HTEB transforms in each mteb task, for `hteb-generate plan`
without the data: from the descriptive statistics that mteb 2.26.24 ships
(`mteb/descriptive_stats/<type>/<task>.json`, also `task.metadata.descriptive_stats`).

Why a table: the gpu profile's 31 sources are on the Hub, and a GPU-hours estimate must not need
them. For each task, eval split and hf subset: one `FieldStats` per transformed field (retrieval
and reranking: the queries; STS and pair classification: both texts; classification and
clustering: the text; summarisation: the human and the machine summaries), with the script of
that field's language (mteb's `hf_subsets_to_langscripts`). A text count that a statistics file
does not give (SciDocsRR's queries) is total characters / average characters. A test checks every
number against the installed mteb.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FieldStats:
    """One transformed field of one subset: texts (with repeats), distinct texts, characters, script."""

    texts: int
    unique: int
    chars: int
    script: str  # ISO 15924, e.g. Latn, Jpan


#: mteb task name -> eval split -> hf subset -> the stats of each transformed field, kept as data in
#: plan_stats.json (one subset a line: [texts, unique, chars, script] per field).
STATS: dict[str, dict[str, dict[str, tuple[FieldStats, ...]]]] = {
    task: {split: {subset: tuple(FieldStats(*field) for field in fields) for subset, fields in subsets.items()}
           for split, subsets in splits.items()}
    for task, splits in json.loads((Path(__file__).with_name("plan_stats.json")).read_text(encoding="utf-8")).items()
}
