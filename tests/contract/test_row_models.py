"""Each table's row model against what is written from it: the committed JSON Schema files and the
column tables of the docs pages are what the columns give (`make specs` writes them), and each
typed row holds exactly its columns; a row read with every column reaches its spec, and a bad one
is one line."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from hteb_contract.errors import ContractError
from hteb_contract.sources import DatasetInfo
from hteb_contract.specs import datasets, transformations, write_specs
from hteb_contract.specs.datasets import ROW_MODEL, DatasetSpec, load_dataset_specs

ROOT = Path(__file__).resolve().parents[2]
EXTENDING = ROOT / "docs" / "extending"
PAGES = {
    datasets.SCHEMA: EXTENDING / "adding-a-dataset.md",
    transformations.SCHEMA_PATH: EXTENDING / "adding-a-transformation.md",
}
FILES = write_specs.files()


@pytest.mark.parametrize("schema", list(FILES), ids=lambda p: p.name)
def test_the_committed_schema_and_docs_tables_are_the_models(schema):
    file = FILES[schema]
    assert schema.read_text(encoding="utf-8") == file.schema_text(), "run `make specs`"
    page = PAGES[schema].read_text(encoding="utf-8")
    for model in file.models():
        assert write_specs.docs_table(page, file, model) == model.markdown() + "\n", f"{model.name}: run `make specs`"


def test_make_specs_writes_the_committed_files(tmp_path, monkeypatch):
    """The writer on copies whose column tables and schemas were emptied gives the committed text back."""
    copies = {}
    for schema, file in FILES.items():
        page = tmp_path / PAGES[schema].name
        text = PAGES[schema].read_text(encoding="utf-8")
        for model in file.models():
            text = write_specs.marked(file, model).sub(lambda m: m.group(1) + m.group(3), text)
            assert write_specs.docs_table(text, file, model) == ""
        page.write_text(text, encoding="utf-8")
        copies[tmp_path / schema.name] = file
        (tmp_path / schema.name).write_text("{}\n", encoding="utf-8")
    monkeypatch.setattr(write_specs, "files", lambda: copies)
    assert write_specs.main(["--write", *(str(tmp_path / p.name) for p in PAGES.values())]) == 0
    for schema, page in PAGES.items():
        assert (tmp_path / page.name).read_text(encoding="utf-8") == page.read_text(encoding="utf-8")
        assert (tmp_path / schema.name).read_text(encoding="utf-8") == schema.read_text(encoding="utf-8")


def _init_fields(cls: type, *resolved: str) -> set[str]:
    """A typed row's fields set from its row (`resolved`: those filled from other rows or tables after reading)."""
    return {f.name for f in fields(cls) if f.init} - set(resolved)


def test_each_typed_row_holds_exactly_its_columns():
    """A column added to a model and not to its typed row, or the other way round, fails here. DatasetSpec
    holds a DatasetInfo (every field but `languages`, which its subsets give) and the rest."""
    info_columns = _init_fields(DatasetInfo, "languages")
    own_columns = _init_fields(DatasetSpec, "info")
    assert not info_columns & own_columns
    assert set(ROW_MODEL.names) == info_columns | own_columns
    for name in info_columns:  # read through the spec as before
        assert isinstance(getattr(DatasetSpec, name), property)
    typed = [
        (transformations.ROWS, _init_fields(transformations.TransformationSpec)),
        (transformations.STEPS, _init_fields(transformations.StepSpec, "budget", "check")),
        (transformations.TEMPLATES, _init_fields(transformations.TemplateSpec)),
        (transformations.AXES, _init_fields(transformations.Axis, "transformations")),
        (transformations.PRESETS, _init_fields(transformations.PresetSpec)),
    ]
    assert sorted(m.name for m, _ in typed) == sorted(m.name for m in transformations.TABLE_FILE.models())
    for model, columns in typed:
        assert set(model.names) == columns, model.name
    for file in FILES.values():
        for model in file.models():
            assert len(model.names) == len(set(model.names)), model.name


def test_a_rule_row_states_only_the_rule_columns():
    """The schema's rule branch and the columns agree: every column a rule row may state is a column,
    and each column an LLM row needs is one a rule row may not state."""
    rows = transformations.ROWS
    assert set(transformations.RULE_COLUMNS) <= set(rows.names)
    needed = {c.name for c in rows.columns if c.needed == transformations.LLM_ROWS}
    assert needed and not needed & set(transformations.RULE_COLUMNS)


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
    row |= {"sample": 3}
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
    assert (spec.fast_loading, dict(spec.renames), spec.main_score, spec.hub_task_ids, spec.sample) == (
        True,
        {"a": "b"},
        "f1",
        ("x-y",),
        3,
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


def test_make_specs_refuses_a_page_that_is_not_there_before_writing(tmp_path, monkeypatch, capsys):
    schema = tmp_path / "datasets.schema.json"
    monkeypatch.setattr(write_specs, "files", lambda: {schema: datasets.TABLE_FILE})
    assert write_specs.main(["--write", str(tmp_path / "absent.md")]) == 2
    assert capsys.readouterr().err == f"write_specs: {tmp_path / 'absent.md'}: no such docs page\n"
    assert not schema.exists()
