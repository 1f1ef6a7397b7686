"""The `dataset_info` of a version-2 dataset card: each config's features and the rows of each
split, as the Hub's dataset viewer and `datasets` read them, from the parquet files the revision
writer has just written (their schemas and row counts; no data is read).

Why `datasets` writes it: the YAML form of a feature (`struct`, `list`, dtype names) is theirs, and
`DatasetInfosDict.to_dataset_card_data` is the public way to put it on a card. A split's `num_bytes`
(which `datasets` requires) is the size of its parquet file, and `download_size` and `dataset_size`
their sums per config: what a download reads. `datasets` would put its in-memory size there, which
depends on how a release lays a table out, and the card is part of the revision's content hash,
which must not move with the installed `datasets`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hteb_contract.parquet_io import read_footer


def dataset_info(root: Path, configs: Sequence[Mapping[str, Any]]) -> Any:
    """The card's `dataset_info` for `configs` (the front matter's, data files relative to `root`):
    one entry per config, with its features (of its first file: a config's files share a schema,
    which the card check's loading holds) and each split's rows and bytes."""
    import datasets
    from huggingface_hub import DatasetCardData

    infos = {}
    for config in configs:
        files = [(entry["split"], Path(root) / entry["path"]) for entry in config["data_files"]]
        splits = datasets.SplitDict()
        for split, path in files:
            rows, size = read_footer(path, str(path)).num_rows, path.stat().st_size
            splits.add(datasets.SplitInfo(name=split, num_bytes=size, num_examples=rows))
        size = sum(path.stat().st_size for _, path in files)
        infos[config["config_name"]] = datasets.DatasetInfo(
            features=datasets.Features.from_arrow_schema(
                read_footer(files[0][1], str(files[0][1])).schema.to_arrow_schema()
            ),
            splits=splits,
            download_size=size,
            dataset_size=size,
        )
    card = DatasetCardData()
    datasets.info.DatasetInfosDict(infos).to_dataset_card_data(card)
    return card.to_dict()["dataset_info"]
