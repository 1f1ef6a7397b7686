"""The committed sample revision is what today's writer would write for its configuration.

Why: the README's `make generate SEED=1339 PROFILE=cpu` regenerates the bundled sample and must find
that it reproduces the committed one (`reproduce` likewise for the older sample, card 1's). A content field or value that a later writer adds (a manifest
field, a record field, another prompt hash) once made that 31-minute run end in "does not
reproduce". These tests rebuild, without loading a model, everything the writer derives from the
configuration and the sources — the manifest's description of the content and every record but the
model's own outputs and judge numbers — and compare it with the committed bytes, so such a change
fails here in seconds: either the field gets a stated default (`revision.MANIFEST_DEFAULTS`) or the
sample is regenerated in the same change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from hteb_contract.arrow import arrow_schema
from hteb_contract.records import ItemRecord
from hteb_contract.reproduction import described
from hteb_contract.revision import Revision
from hteb_contract.stores import open_store
from hteb_contract.validation import READABLE, SCHEMA_VERSIONS
from hteb_generate.run import pipeline
from hteb_generate.engine import CallCache
from hteb_generate.setup.engine_plan import engine_slots
from hteb_generate.checks.judge import JudgeScores
from hteb_generate.setup.machine import probe
from hteb_generate.revision.manifest_fields import content_description
from hteb_generate.revision.reproduce import rebuild_config
from hteb_generate.run.units import plan_units

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_STORE = ROOT / "score" / "hteb_score" / "sample" / "store"
#: both bundled samples: card 1's (sample-1339) and the default, card 2's (sample-card2-1339)
LABELS = ("sample-1339", "sample-card2-1339")


@pytest.fixture(scope="module", params=LABELS)
def sample(request: pytest.FixtureRequest) -> Revision:
    return open_store(f"file://{SAMPLE_STORE}").fetch(request.param)


@pytest.fixture(scope="module")
def rebuilt(sample, tmp_path_factory):
    """The run that made the sample, its sources loaded and its engines made (none loaded)."""
    tmp = tmp_path_factory.mktemp("rebuilt")
    cfg = rebuild_config(
        sample.manifest,
        store=f"file://{tmp / 'store'}",
        machine={"cache_dir": str(tmp / "cache"), "data_dir": str(ROOT.parent / "shared" / "data")},
    )
    facts = probe()
    slots = engine_slots(cfg, facts)
    engines = pipeline.build_engines(cfg, CallCache(tmp / "calls.sqlite"), facts, slots)
    return cfg, pipeline.load_datasets(cfg), engines


def test_the_manifest_describes_the_content_as_the_writer_would(sample, rebuilt):
    cfg, datasets, engines = rebuilt
    ours = described(json.loads(json.dumps(content_description(cfg, datasets, engines))))  # as written
    theirs = described(sample.manifest)
    assert ours.keys() == theirs.keys(), (
        f"fields the writer adds that the committed sample lacks: {sorted(ours.keys() - theirs.keys())}; "
        f"that it has and the writer does not: {sorted(theirs.keys() - ours.keys())} "
        "(give a new field a default in hteb_contract.revision.MANIFEST_DEFAULTS, or regenerate the sample)"
    )
    for key in ours:
        assert ours[key] == theirs[key], f"manifest {key}: the writer would write {ours[key]!r}"


def test_every_record_is_what_the_writer_would_write_given_the_model_outputs(sample, rebuilt):
    """Each planned item's record, its unit given the committed attempts and judge numbers (all that
    the model decides), equals the committed row field for field: prompts, hashes, languages,
    sampling, model identities, the kept text and the fallback rule come from today's code."""
    cfg, datasets, engines = rebuilt
    _, items = plan_units(cfg, datasets)
    committed = {}
    for name in sample.dataset_names():
        for transformation, seed in sample.variants(name):
            for record in sample.items(name, transformation, seed):
                committed[
                    (
                        record.dataset,
                        record.transformation,
                        record.seed,
                        record.split,
                        record.item_id,
                        record.field,
                        record.subset,
                    )
                ] = record
    llm_items = [i for i in items if i.transformation in cfg.llm_transformations]
    keys = {
        (i.dataset, i.transformation, i.seed, i.ref.table, i.ref.item_id, i.ref.field, i.ref.subset) for i in llm_items
    }
    assert keys == committed.keys(), "the planned items are not the committed records"
    for item in llm_items:
        key = (
            item.dataset,
            item.transformation,
            item.seed,
            item.ref.table,
            item.ref.item_id,
            item.ref.field,
            item.ref.subset,
        )
        theirs = committed[key]
        item.unit.attempts = list(theirs.attempts)
        judged = theirs.judge
        item.unit.judge = (
            None
            if judged.quality is None and judged.fluency is None and judged.parapluie is None
            else JudgeScores(judged.quality, judged.fluency, judged.parapluie)
        )
        ours = pipeline.item_record(cfg, engines, item).to_row()
        for field, value in theirs.to_row().items():
            assert ours[field] == value, f"{'/'.join(map(str, key))}: {field}: the writer would write {ours[field]!r}"
        assert ours.keys() == theirs.to_row().keys()


def test_the_item_files_have_the_columns_the_writer_writes(sample):
    """The columns are the writer's and a row reads back to itself; only `schema_version` may differ:
    the sample's records are of an item schema the reader still accepts (hteb.item/2, upgraded on read)."""
    folder = Path(sample.root)
    files = sorted((folder / "data").rglob("*.parquet"))
    assert files
    readable = {SCHEMA_VERSIONS["item"], *READABLE["item"]}
    for path in files:
        assert pq.read_schema(path).remove_metadata() == arrow_schema("item").remove_metadata(), path
        row = pq.read_table(path).slice(0, 1).to_pylist()[0]
        assert row["schema_version"] in readable, path
        written = ItemRecord.from_row(row, what=str(path)).to_row()
        assert written.pop("schema_version") == SCHEMA_VERSIONS["item"]
        assert written == {k: v for k, v in row.items() if k != "schema_version"}, path
