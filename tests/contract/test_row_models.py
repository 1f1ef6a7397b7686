"""Each table's row model against what is written from it: the committed JSON Schema file and the
column table of its docs page are what the columns give (`make specs` writes both), and the typed
row holds exactly the columns (a column added to the model and not to `DatasetSpec`, or the other
way round, fails here)."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from hteb_contract.errors import ContractError
from hteb_contract.sources import DatasetInfo
from hteb_contract.specs import datasets, write_specs as table
from hteb_contract.specs.datasets import ROW_MODEL, DatasetSpec, load_dataset_specs

ROOT = Path(__file__).resolve().parents[2]
PAGES = {datasets.SCHEMA: ROOT / "docs" / "extending" / "adding-a-dataset.md"}


@pytest.mark.parametrize("schema", list(table.models()), ids=lambda p: p.name)
def test_the_committed_schema_and_docs_table_are_the_models(schema):
    model = table.models()[schema]
    assert schema.read_text(encoding="utf-8") == model.schema_text(), "run `make specs`"
    assert table.docs_table(PAGES[schema].read_text(encoding="utf-8"), model) == model.markdown() + "\n", (
        "run `make specs`"
    )


def test_make_specs_writes_the_committed_files(tmp_path, monkeypatch):
    """The writer on copies whose table and schema were emptied gives the committed text back."""
    page = tmp_path / "page.md"
    committed = PAGES[datasets.SCHEMA].read_text(encoding="utf-8")
    page.write_text(table.marked(ROW_MODEL).sub(lambda m: m.group(1) + m.group(3), committed), encoding="utf-8")
    assert table.docs_table(page.read_text(encoding="utf-8"), ROW_MODEL) == ""
    schema = tmp_path / datasets.SCHEMA.name
    schema.write_text("{}\n", encoding="utf-8")
    monkeypatch.setattr(table, "models", lambda: {schema: ROW_MODEL})
    assert table.main(["--write", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == committed
    assert schema.read_text(encoding="utf-8") == datasets.SCHEMA.read_text(encoding="utf-8")


def test_the_typed_row_holds_exactly_the_columns():
    """DatasetSpec holds a DatasetInfo (every field but `languages`, which its subsets give) and the rest."""
    info_columns = {f.name for f in fields(DatasetInfo)} - {"languages"}
    own_columns = {f.name for f in fields(DatasetSpec)} - {"info"}
    assert not info_columns & own_columns
    assert set(ROW_MODEL.names) == info_columns | own_columns
    assert len(ROW_MODEL.names) == len(set(ROW_MODEL.names))
    for name in info_columns:  # read through the spec as before
        assert isinstance(getattr(DatasetSpec, name), property)


def test_a_row_reads_every_column_into_the_spec(tmp_path):
    """A row stating every column (the table's AmazonCounterfactual row and the columns it leaves out):
    each value reaches the spec, the info's and the table's own."""
    (row,) = [
        r
        for r in yaml.safe_load(datasets.TABLE.read_text(encoding="utf-8"))
        if r["name"].startswith("AmazonCounterfactual")
    ]
    row |= {"name": "Every", "local": "STS12", "english": False, "registry": False, "paper_languages": ["eng"]}
    row |= {"fast_loading": True, "renames": {"a": "b"}, "main_score": "f1", "release_citation": "@misc{x}"}
    row |= {"release_license": {"id": "mit", "name": "MIT", "link": "https://example.org"}, "hub_task_ids": ["x-y"]}
    assert set(row) == set(ROW_MODEL.names), set(ROW_MODEL.names) ^ set(row)
    path = tmp_path / "datasets.yaml"
    path.write_text(yaml.safe_dump([row]), encoding="utf-8")
    (spec,) = load_dataset_specs(path)
    assert (spec.name, spec.train_split, spec.local, spec.english, spec.registry) == (
        "Every",
        "train",
        "STS12",
        False,
        False,
    )
    assert (spec.fast_loading, dict(spec.renames), spec.main_score, spec.hub_task_ids) == (
        True,
        {"a": "b"},
        "f1",
        ("x-y",),
    )
    assert spec.info.name == "Every" and spec.info.languages == spec.languages and spec.source_citation == "@misc{x}"
    assert spec.evaluation.samples_per_label == 32 and spec.hf_revision == row["hf_revision"]
    assert spec.release_license is not None and spec.release_license.license == "mit" and spec.stats is not None


@pytest.mark.parametrize(
    ("column", "value", "said"),
    [
        ("hub_task_ids", "[Bad]", "hub_task_ids/0"),
        ("stats", "{default: [[1, 2, 3]]}", "stats/default/0"),
        ("nope", "1", "(row)"),
    ],
)
def test_a_bad_column_is_one_line_naming_row_and_column(tmp_path, column, value, said):
    path = tmp_path / "datasets.yaml"
    path.write_text(
        f"- {{name: Bad, task_type: STS, eval_split: test, subsets: {{default: [eng]}}, {column}: {value}}}\n"
    )
    with pytest.raises(ContractError) as err:
        load_dataset_specs(path)
    assert str(err.value).startswith(f"datasets.yaml: row 1 (Bad): {said}: ") and "\n" not in str(err.value)
