"""The JSON Schemas accept real objects built by the code and reject broken ones."""

from __future__ import annotations

import copy
import json

import pytest
from jsonschema import Draft202012Validator

from hteb_contract.validation import READABLE, SCHEMA_DIR, SCHEMAS, schema, validate
from hteb_contract.errors import ContractError
from hteb_contract.tasks import TASK_TYPES
from hteb_contract.sources import read_source_dir
from hteb_generate.sources.source_loading import sample_dataset
from revision_factory import build_revision, item_record


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_schemas_are_valid_json_schema(kind):
    Draft202012Validator.check_schema(schema(kind))


@pytest.fixture(scope="module")
def real_items(shared_data):
    """Item records for real texts of three task types (pairs, list fields, queries)."""
    records = []
    for name in ("SemRel2024", "SummEval", "SciFact"):
        dataset = sample_dataset(read_source_dir(shared_data / name), 2)
        for ref in list(dataset.iter_texts())[:4]:
            records.append(item_record(dataset, ref, "paraphrasing", 1337, ref.text.upper()).to_row())
    return records


def test_real_item_records_validate(real_items):
    for record in real_items:
        validate("item", record, what="item")
    fields = {r["field"] for r in real_items}
    assert "machine_summaries[0]" in fields or "human_summaries[0]" in fields
    assert {r["split"] for r in real_items} >= {"test", "queries"}
    assert any(r["source_language"] == "afr" for r in real_items)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda r: r.pop("transformed_text"), "transformed_text"),
        (lambda r: r["errors"].append("made_up_error"), "made_up_error"),
        (lambda r: r.update(source_language="english"), "english"),
        (lambda r: r.update(seed="1337"), "1337"),
        (lambda r: r.update(extra_field=1), "extra_field"),
        (lambda r: r.update(attempts=[]), "attempts"),
        (lambda r: r["judge"].update(quality=7), "7"),
        (lambda r: r.update(prompt_hash="abc"), "abc"),
        (lambda r: r.update(field="../sentence1"), "field"),
    ],
)
def test_broken_item_records_are_rejected(real_items, mutate, message):
    record = copy.deepcopy(real_items[0])
    mutate(record)
    with pytest.raises(ContractError) as err:
        validate("item", record, what="item")
    text = str(err.value)
    assert "\n" not in text and message in text


def test_other_schema_version_is_named(real_items):
    record = dict(real_items[0], schema_version="hteb.item/1")
    with pytest.raises(ContractError) as err:
        validate("item", record, what="item 3")
    assert str(err.value) == (
        "item 3: schema version 'hteb.item/1' is not supported: this version of hteb reads "
        "'hteb.item/3' or 'hteb.item/2' (an older or newer release wrote it; regenerate it, "
        "or read it with that release)"
    )


def test_item_records_name_their_subset_and_the_language_of_their_own_text(real_items):
    semrel = [r for r in real_items if r["dataset"] == "SemRel2024"]
    assert {(r["subset"], r["source_language"]) for r in semrel} == {("afr", "afr"), ("amh", "amh")}
    assert {r["subset"] for r in real_items if r["dataset"] != "SemRel2024"} == {"default"}
    broken = dict(real_items[0], subset="en de")
    with pytest.raises(ContractError, match="subset"):
        validate("item", broken, what="item")


def test_manifest_of_a_real_revision_validates_and_rejects_unsafe_paths(tmp_path, shared_data):
    manifest = build_revision(tmp_path / "rev", shared_data, ["STSBenchmark", "SemRel2024"])
    validate("manifest", manifest, what="manifest")
    assert manifest["sources"][0]["subsets"] == {"default": ["eng"]}
    assert manifest["sources"][1]["subsets"]["afr"] == ["afr"] and len(manifest["sources"][1]["subsets"]) == 12
    for subsets, message in (({}, "subsets"), ({"en-de": ["english"]}, "english"), ({"en de": ["eng"]}, "en de")):
        broken = copy.deepcopy(manifest)
        broken["sources"][0]["subsets"] = subsets
        with pytest.raises(ContractError, match=message):
            validate("manifest", broken, what="manifest")
    assert json.loads((tmp_path / "rev" / "manifest.json").read_text()) == manifest
    for bad in ("/etc/passwd", "../outside.parquet", "data/../../x", "data//x"):
        broken = copy.deepcopy(manifest)
        broken["files"][0]["path"] = bad
        with pytest.raises(ContractError, match="files/0/path"):
            validate("manifest", broken, what="manifest")


@pytest.mark.parametrize("name", ["item.v3.schema.json", "item.v2.schema.json", "manifest.v2.schema.json"])
def test_the_schema_files_leave_the_task_types_to_the_task_table(name):
    """The published file says `string`; the loaded schema's enum is TASK_TYPES' names, nothing else."""
    kind, version = {
        "item.v3.schema.json": ("item", None),
        "item.v2.schema.json": ("item", "hteb.item/2"),
        "manifest.v2.schema.json": ("manifest", None),
    }[name]
    assert name in (SCHEMAS[kind], *READABLE.get(kind, {}).values())
    text = (SCHEMA_DIR / name).read_text(encoding="utf-8")
    assert 'PairClassification"' not in text and '"#/$defs/task_type"' in text
    assert json.loads(text)["$defs"]["task_type"]["type"] == "string"
    assert schema(kind, version)["$defs"]["task_type"]["enum"] == TASK_TYPES.names()


def test_an_unknown_task_type_is_refused_in_an_item_and_a_manifest(real_items, tmp_path, shared_data):
    item = dict(real_items[0], task_type="Retreival")
    with pytest.raises(
        ContractError,
        match=r"^item: does not match the item schema: task_type: 'Retreival' is not "
        r"one of \['STS', 'STR', 'PairClassification'",
    ):
        validate("item", item, what="item")
    older = schema("item", "hteb.item/2")
    task_type = Draft202012Validator({"$defs": older["$defs"], "$ref": "#/$defs/task_type"})
    assert task_type.is_valid("STS") and not task_type.is_valid("Retreival")
    manifest = build_revision(tmp_path / "rev", shared_data, ["STSBenchmark"])
    manifest["sources"][0]["task_type"] = "sts"
    with pytest.raises(ContractError, match=r"sources/0/task_type: 'sts' is not one of"):
        validate("manifest", manifest, what="manifest")


def _card() -> dict:
    return {
        "schema_version": "hteb.card/1",
        "model": {
            "model_id": "sentence-transformers/all-MiniLM-L6-v2",
            "revision": "c9745ed1d9f207416be6d2e6f8de32d1f16199bf",
        },
        "encode": {"batch_size": 32, "dtype": "float32", "normalize": False, "device": "cpu", "prompts": {}},
        "dataset": {"repo_id": "file:///store", "label": "sample-1339", "revision": "a" * 64},
        "hteb_score_version": "0.1.0",
        "protocol": "hteb",
        "evaluation": {
            "protocol": "hteb",
            "description": "the HTEB paper's evaluation",
            "mteb_version": None,
            "datasets": {},
        },
        "on_error": "original",
        "package_versions": {"numpy": "2.3.5"},
        "scores": [
            {
                "dataset": "STSBenchmark",
                "task_type": "STS",
                "subset": "all",
                "transformation": "original",
                "seed": None,
                "metric": "cosine_spearman",
                "value": 0.8203,
            }
        ],
        "aggregates": {
            "per_dataset": [],
            "per_transformation": {},
            "per_axis": {},
            "original": 82.03,
            "hteb_total": None,
            "delta": None,
        },
        "error_policy": [],
        "statistics": None,
        "timings": {"total_s": 1.5},
        "created": "2026-11-22T20:00:00+00:00",
    }


def test_result_card_accepts_a_card_and_rejects_a_wrong_protocol():
    validate("result_card", _card(), what="card")
    card = _card()
    card["protocol"] = "mine"
    with pytest.raises(ContractError, match="protocol"):
        validate("result_card", card, what="card")
    card = _card()
    card["scores"] = []
    with pytest.raises(ContractError, match="scores"):
        validate("result_card", card, what="card")
