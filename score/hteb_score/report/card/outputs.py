"""The files a run writes into its output folder, one registered writer per output: `OUTPUTS`.

A writer renders a run's `RunFiles` (its result card and its mteb-format results) into
{path inside the output folder: text}. `write_outputs` renders every registered output first and
writes them afterwards, each atomically, so an output that cannot be rendered (a non-finite number
is not strict JSON) writes nothing at all. A new output is one function here registered with
`@OUTPUTS.register(name)`, plus its test (docs/extending/adding-an-output.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from hteb_contract.common import json_input
from hteb_contract.common.atomic import atomic_write_bytes
from hteb_contract.common.registry import Registry, RegistryError
from hteb_contract.parquet_io import table_bytes

from hteb_score import CARD_FILE
from hteb_score.evaluators.outcomes import LABEL_MEASURES, Outcomes
from hteb_score.mteb_interop.layout import model_meta, result_folder
from hteb_score.report.card.card import render_markdown
from hteb_score.strict_json import dumps


@dataclass(frozen=True)
class RunFiles:
    """What a run's outputs are rendered from: the result card (valid against result_card.v1), the
    mteb-format result of every scored variant by its task name (report/card/card.py `mteb_result_files`)
    and the explorer's items (scoring/item_measures.py, each with its `model`)."""

    card: Mapping[str, Any]
    mteb: Mapping[str, Mapping[str, Any]]
    items: Sequence[Mapping[str, Any]] = ()
    outcomes: Mapping[tuple[str, str, int | None], Outcomes] = field(default_factory=dict)  # per variant


#: A writer: the run -> {path relative to the output folder: text, or bytes for a binary file}.
Writer = Callable[[RunFiles], dict[str, str | bytes]]

ITEMS_FILE = "items.parquet"
#: The explorer's columns (scoring/item_measures.py `_explorer`), typed, so an empty file has them too.
ITEMS_SCHEMA = pa.schema(
    [
        ("model", pa.string()),
        ("dataset", pa.string()),
        ("transformation", pa.string()),
        ("seed", pa.int64()),
        ("split", pa.string()),
        ("item_id", pa.string()),
        ("field", pa.string()),
        ("original_text", pa.string()),
        ("transformed_text", pa.string()),
        ("cosine", pa.float64()),
        ("top10_changed", pa.bool_()),
        ("order_flipped", pa.bool_()),
        ("moved_most", pa.bool_()),
        ("outcome_flipped", pa.bool_()),
        ("quality", pa.float64()),
        ("fluency", pa.float64()),
        ("with_errors", pa.bool_()),
    ]
)

OUTCOMES_FILE = "outcomes.parquet"
#: Per item of every variant, what its main score is computed from (evaluators/outcomes.py): numbers in
#: `gold`/`predicted`, labels and clusters in `gold_label`/`predicted_label` (the measure says which).
OUTCOMES_SCHEMA = pa.schema(
    [
        ("dataset", pa.string()),
        ("transformation", pa.string()),
        ("seed", pa.int64()),
        ("subset", pa.string()),
        ("item_id", pa.string()),
        ("measure", pa.string()),
        ("gold", pa.float64()),
        ("predicted", pa.float64()),
        ("gold_label", pa.string()),
        ("predicted_label", pa.string()),
    ]
)

#: Every output of a run, written in registration order.
OUTPUTS: Registry[Writer] = Registry("output")


@OUTPUTS.register(CARD_FILE)
def card_json(run: RunFiles) -> dict[str, str | bytes]:
    """The result card itself, strict JSON."""
    return {CARD_FILE: dumps(run.card, what="result card")}


@OUTPUTS.register("result_card.md")
def card_markdown(run: RunFiles) -> dict[str, str | bytes]:
    """The card for a reader: every figure rendered from the JSON as result_card.json holds it (its key order
    too), so rendering the file again gives the same page."""
    return {"result_card.md": render_markdown(json_input.loads(dumps(run.card, what="result card"), "the result card"))}


@OUTPUTS.register("mteb")
def mteb_files(run: RunFiles) -> dict[str, str | bytes]:
    """The model's folder of mteb results (`mteb/results/<model>/<revision>/`, mteb's layout:
    hteb_score.mteb_interop.layout): model_meta.json and one TaskResult file per variant."""
    model_id, revision = run.card["model"]["model_id"], run.card["model"]["revision"]
    folder = result_folder(Path("mteb"), model_id, revision).as_posix()
    meta = model_meta(model_id, revision, embed_dim=run.card["model"].get("embedding_dim"))
    files: dict[str, str | bytes] = {f"{folder}/model_meta.json": dumps(meta, what="mteb model_meta")}
    files.update(
        {f"{folder}/{name}.json": dumps(result, what=f"mteb result {name}") for name, result in run.mteb.items()}
    )
    return files


@OUTPUTS.register(ITEMS_FILE)
def items_parquet(run: RunFiles) -> dict[str, str | bytes]:
    """The item explorer: per variant, the items that moved most and those whose outcome flipped, with
    their texts, judge scores and error flag (at most 2 x EXPLORER_TOP_N a variant); pandas and
    `datasets.load_dataset("parquet", ...)` read it."""
    table = pa.Table.from_pylist([dict(row) for row in run.items], schema=ITEMS_SCHEMA)
    return {ITEMS_FILE: table_bytes(table)}


@OUTPUTS.register(OUTCOMES_FILE)
def outcomes_parquet(run: RunFiles) -> dict[str, str | bytes]:
    """Every variant's per-item outcomes, the items `hteb-score compare` tests two models on, dataset by dataset;
    no file for a run that has none (parts scored before outcomes, or mteb's protocol on task types whose main
    score is no function of single items): compare then says why it tests no item."""
    if not run.outcomes:
        return {}
    columns: dict[str, list[Any]] = {name: [] for name in OUTCOMES_SCHEMA.names}
    for (dataset, transformation, seed), outcomes in sorted(run.outcomes.items(), key=lambda kv: _variant_order(kv[0])):
        n = len(outcomes.item)
        labels = outcomes.measure in LABEL_MEASURES
        for name, values in (
            ("dataset", [dataset] * n),
            ("transformation", [transformation] * n),
            ("seed", [seed] * n),
            ("subset", outcomes.subset),
            ("item_id", outcomes.item),
            ("measure", [outcomes.measure] * n),
            ("gold", [None] * n if labels else outcomes.gold),
            ("predicted", [None] * n if labels else outcomes.predicted),
            ("gold_label", outcomes.gold if labels else [None] * n),
            ("predicted_label", outcomes.predicted if labels else [None] * n),
        ):
            columns[name].extend(values)
    return {OUTCOMES_FILE: table_bytes(pa.table(columns, schema=OUTCOMES_SCHEMA))}


def _variant_order(variant: tuple[str, str, int | None]) -> tuple[str, bool, str, int]:
    dataset, transformation, seed = variant
    return dataset, transformation != "original", transformation, -1 if seed is None else seed


def write_outputs(
    out: Path,
    card: Mapping[str, Any],
    mteb: Mapping[str, Mapping[str, Any]],
    items: Sequence[Mapping[str, Any]] = (),
    outcomes: Mapping[tuple[str, str, int | None], Outcomes] | None = None,
) -> list[Path]:
    """Every registered output of the run, rendered before the first is written; returns the paths written."""
    run = RunFiles(card, mteb, items, dict(outcomes or {}))
    files: dict[Path, str | bytes] = {}
    for name, writer in OUTPUTS.items():
        for relative, text in writer(run).items():
            path = Path(out) / relative
            if path in files:
                raise RegistryError(f"output {name!r} writes {relative}, which another output writes too")
            files[path] = text
    for path, data in files.items():
        atomic_write_bytes(path, data.encode("utf-8") if isinstance(data, str) else data)
    return list(files)
