"""A revision folder: sealed, opened, verified; readable by `datasets.load_dataset`."""

from __future__ import annotations

import json

import pytest
import yaml

from hteb_contract.errors import ContractError, IntegrityError, SourceError
from hteb_contract.hub_eval import task_id
from hteb_contract.revision import CARD, EVAL, Revision, content_hash
from revision_factory import build_revision

NAMES = ["STSBenchmark", "SciFact", "SummEval"]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("rev") / "r"
    build_revision(root, shared_data, NAMES, transformations=("paraphrasing", "translation"), seeds=(1337, 1338))
    return root


def test_open_reads_sources_variants_and_items(sealed, shared_data):
    revision = Revision.open(sealed)
    assert revision.dataset_names() == NAMES
    assert revision.variants("SciFact") == [
        ("paraphrasing", 1337),
        ("paraphrasing", 1338),
        ("translation", 1337),
        ("translation", 1338),
    ]
    items = revision.items("SciFact", "translation", 1338)
    assert len(items) == 5 and {i.split for i in items} == {"queries"}
    source = revision.source("SciFact")
    in_source_order = sorted(items, key=lambda i: source.ids["queries"].index(i.item_id))
    assert [q["text"] for q in source.tables["queries"]] == [i.original_text for i in in_source_order]
    assert revision.revision_id == revision.manifest["content_hash"]
    with pytest.raises(SourceError, match="has no dataset 'Banking77'"):
        revision.source("Banking77")


def test_manifest_lists_every_file_with_rows(sealed):
    manifest = json.loads((sealed / "manifest.json").read_text())
    paths = {f["path"]: f for f in manifest["files"]}
    assert "README.md" in paths and "manifest.json" not in paths
    assert paths["data/STSBenchmark/paraphrasing_1337.parquet"]["rows"] == 10
    assert paths["source/SciFact/queries.parquet"]["rows"] == 5
    assert manifest["content_hash"] == content_hash(manifest["files"])


def test_load_dataset_reads_a_config_per_dataset(sealed):
    import datasets

    loaded = datasets.load_dataset(str(sealed), "SummEval")
    assert set(loaded) == {"paraphrasing_1337", "paraphrasing_1338", "translation_1337", "translation_1338"}
    assert loaded["translation_1337"].num_rows == 5 * 27
    assert loaded["translation_1337"][0]["schema_version"] == "hteb.item/3"
    assert loaded["translation_1337"][0]["subset"] == "default"


def _copy(sealed, tmp_path):
    import shutil

    target = tmp_path / "copy"
    shutil.copytree(sealed, target)
    return target


def test_corrupted_file_is_caught(sealed, tmp_path):
    root = _copy(sealed, tmp_path)
    path = root / "data" / "SciFact" / "paraphrasing_1337.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(IntegrityError, match="paraphrasing_1337.parquet is corrupted") as err:
        Revision.open(root)
    assert "\n" not in str(err.value)
    Revision.open(root, datasets=["STSBenchmark"])  # other datasets stay usable


def test_missing_file_and_missing_manifest(sealed, tmp_path):
    root = _copy(sealed, tmp_path)
    (root / "source" / "SummEval" / "test.parquet").unlink()
    with pytest.raises(IntegrityError, match="source/SummEval/test.parquet is missing"):
        Revision.open(root)
    (root / "manifest.json").unlink()
    with pytest.raises(IntegrityError, match="no manifest.json"):
        Revision.open(root)


def test_edited_manifest_is_caught(sealed, tmp_path):
    root = _copy(sealed, tmp_path)
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = manifest["files"][1:]
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(IntegrityError, match="content_hash does not match"):
        Revision.open(root)
    manifest["files"][0]["path"] = "../../etc/passwd"
    (root / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ContractError, match="path"):
        Revision.open(root)


def test_a_revision_of_an_older_format_is_refused_in_one_line_naming_both_versions(sealed, tmp_path):
    root = _copy(sealed, tmp_path)
    manifest = json.loads((root / "manifest.json").read_text())
    (root / "manifest.json").write_text(json.dumps(dict(manifest, schema_version="hteb.manifest/1")))
    with pytest.raises(ContractError) as err:
        Revision.open(root)
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"revision 'test-1' ({root / 'manifest.json'}): ")
    assert "schema version 'hteb.manifest/1' is not supported: this version of hteb reads 'hteb.manifest/2'" in message


def test_the_source_copy_states_its_subsets(tmp_path, shared_data):
    root = tmp_path / "r"
    build_revision(root, shared_data, ["SemRel2024"], rows=1)
    stored = json.loads((root / "source" / "SemRel2024" / "dataset.json").read_text())
    assert stored["subsets"]["arq"] == ["arq"] and len(stored["subsets"]) == 12
    source = Revision.open(root).source("SemRel2024")
    assert {(r.subset, r.language) for r in source.iter_texts()} == {(s, s) for s in stored["subsets"]}


def test_every_revision_carries_the_benchmarks_eval_yaml(sealed):
    """The Hub attaches `.eval_results` only to a dataset whose eval.yaml declares its task ids
    (issue 33 item 3): every revision written has one, in the Hub's documented fields only, declaring
    each dataset's and the average's figures under each protocol (no judge filter: this revision has
    no judge), each dataset's task pointing at a config of the revision's card."""
    meta = yaml.safe_load((sealed / EVAL).read_text())
    assert set(meta) == {"name", "description", "evaluation_framework", "tasks"}
    assert meta["evaluation_framework"] == "mteb"  # one of the Hub's frameworks (huggingface.js eval.ts)
    assert all(set(task) <= {"id", "config", "split"} for task in meta["tasks"])
    ids = [t["id"] for t in meta["tasks"]]
    assert len(ids) == len(set(ids))
    names = Revision.open(sealed).dataset_names()
    figures = ["original", "hteb_lexical", "hteb_lexical_delta", "hteb_language", "hteb_language_delta"]
    average = [*figures, "paraphrasing", "paraphrasing_delta", "translation", "translation_delta"]
    assert set(ids) == {
        task_id(row, c, tag)
        for tag in ("", ".mteb")
        for row, cs in [*((d, figures) for d in names), ("average", average)]
        for c in cs
    }
    card = yaml.safe_load((sealed / CARD).read_text().split("---")[1])
    configs = {c["config_name"] for c in card["configs"]}
    assert {t["config"] for t in meta["tasks"] if "config" in t} == set(names) <= configs
    assert EVAL in {f["path"] for f in Revision.open(sealed).manifest["files"]}
