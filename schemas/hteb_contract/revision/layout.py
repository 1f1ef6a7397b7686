"""The names of a revision's files and folders, and the few facts every part of the package shares."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any

from hteb_contract.errors import IntegrityError, SourceError
from hteb_contract.tasks import TASK_TYPES

#: Reports progress over an iterable (description, total) and yields its items: `tqdm`'s shape,
#: `lambda items, desc, total: tqdm(items, desc=desc, total=total)`. The contract prints nothing itself.
Progress = Callable[[Iterable[Any], str, int], Iterable[Any]]


def quiet(items: Iterable[Any], desc: str, total: int) -> Iterable[Any]:
    """The default `Progress`: no report."""
    return items


#: Manifest fields a later writer added, and what a revision made before them means by lacking one.
#: A new content field of the manifest joins this table, or the committed sample is regenerated with it
#: (tests/generate/test_sample_reproduces.py fails until one of the two is done).
MANIFEST_DEFAULTS: dict[str, Any] = {
    "corpus_perturbed": False,  # --corpus-noise: a revision made before it holds no perturbed corpus
}


def with_defaults(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """`manifest` with every absent field of `MANIFEST_DEFAULTS` set to its default."""
    return {**MANIFEST_DEFAULTS, **manifest}


MANIFEST = "manifest.json"


CARD = "README.md"


EVAL = "eval.yaml"  # the benchmark's task ids, which Hub evaluation results attach to (hteb_contract.hub_eval)


#: Task types whose corpus a revision may hold perturbed (what the scorer's corpus robustness reads).
CORPUS_TASK_TYPES = tuple(name for name, kind in TASK_TYPES.items() if kind.searches_corpus)


#: Top-level folder -> what its files hold; `data` and `corpus` files are named <transformation>_<seed>.parquet.
PARTS = {"data": "item records", "source": "source copy", "corpus": "perturbed corpus records"}


_SPLIT = re.compile(r"^(?P<transformation>[a-z][a-z_]*?)_(?P<seed>-?\d+)$")


#: (dataset, transformation, seed): what one items (or corpus) file holds.
Variant = tuple[str, str, int]


def split_name(transformation: str, seed: int) -> str:
    """The Hub split name of one (transformation, seed): `paraphrasing_1337` (matches ^\\w+$)."""
    return f"{transformation}_{seed}"


def parse_split(name: str) -> tuple[str, int]:
    """(transformation, seed) of a split name `paraphrasing_1337`; another name is a SourceError."""
    variant = variant_of(f"{name}.parquet")
    if variant is None:
        raise SourceError(f"{name!r} is not a split name <transformation>_<seed> (e.g. paraphrasing_1337)")
    return variant


def items_path(dataset: str, transformation: str, seed: int) -> str:
    return f"data/{dataset}/{split_name(transformation, seed)}.parquet"


def corpus_path(dataset: str, transformation: str, seed: int) -> str:
    return f"corpus/{dataset}/{split_name(transformation, seed)}.parquet"


def safe_relpath(path: str) -> PurePosixPath:
    """Refuse a manifest path that could escape the revision folder."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or "\\" in path or any(part in ("..", "") for part in pure.parts):
        raise IntegrityError(f"manifest lists an unsafe path {path!r} (absolute or escaping the revision)")
    return pure


def variant_of(filename: str) -> tuple[str, int] | None:
    """(transformation, seed) of an items file name `paraphrasing_1337.parquet`; None for any other name,
    `paraphrasing_01337.parquet` included (only one file may hold a variant)."""
    match = _SPLIT.match(filename[: -len(".parquet")]) if filename.endswith(".parquet") else None
    variant = (match["transformation"], int(match["seed"])) if match else None
    return variant if variant and filename == f"{split_name(*variant)}.parquet" else None


def dataset_of(path: str) -> str | None:
    parts = PurePosixPath(path).parts
    return parts[1] if len(parts) >= 3 and parts[0] in PARTS else None
