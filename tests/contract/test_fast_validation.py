"""jsonschema-rs accepts only what jsonschema accepts: the fast path may skip work, never a refusal.

`validate` trusts jsonschema-rs's "valid" alone; these tests hold it to jsonschema's verdict on
real records and manifests, edited at random where the schemas' rules are easiest to get subtly
wrong (regex dialects, `$` before a newline, Unicode classes, integer and number edges, formats).
"""

from __future__ import annotations

import pytest
from json_paths import edited, value_paths
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples
from jsonschema import Draft202012Validator

from hteb_contract.errors import ContractError
from hteb_contract.sources import read_source_dir
from hteb_contract.validation import _fast_valid, schema, validate
from hteb_generate.sources.source_loading import sample_dataset
from revision_factory import build_revision, item_record

# Values that regex dialects and number rules disagree on: a trailing newline ($ in Python's re
# matches before it), non-ASCII word characters, look-alike digits, big and fractional numbers.
EDGE_VALUES = [
    "eng\n",
    "éng",
    "ENG",
    "ｅｎｇ",
    "a" * 64 + "\n",
    "0" * 64,
    "٣",
    "test\n",
    "tést",
    "x/../y",
    "a//b",
    "/abs",
    "sentence1[0]\n",
    "sentence1[٣]",
    "",
    " ",
    "\u2028",
    1,
    1.0,
    1.5,
    -1,
    2**63,
    2**70,
    True,
    None,
    [],
    {},
    ["a", "a"],
    [1, True],
    "2026-11-24T19:00:00Z",
    "2026-13-40T99:00:00Z",
    "yesterday",
]


@pytest.fixture(scope="module")
def objects(shared_data, tmp_path_factory):
    records = []
    for name in ("SemRel2024", "SummEval", "SciFact", "STS12"):
        dataset = sample_dataset(read_source_dir(shared_data / name), 2)
        for ref in list(dataset.iter_texts())[:2]:
            records.append(item_record(dataset, ref, "translation", 1337, ref.text.upper()).to_row())
    manifest = build_revision(tmp_path_factory.mktemp("rev") / "rev", shared_data, ["STSBenchmark", "SciFact"])
    return {"item": records, "manifest": [manifest]}


@pytest.mark.parametrize("kind", ["item", "manifest"])
def test_real_objects_take_the_fast_path(objects, kind):
    for obj in objects[kind]:
        assert _fast_valid(kind, None, obj)
        validate(kind, obj, what=kind)


@pytest.mark.parametrize("kind", ["item", "manifest"])
def test_fuzz_fast_validator_never_accepts_what_jsonschema_refuses(objects, kind):
    reference = Draft202012Validator(schema(kind), format_checker=Draft202012Validator.FORMAT_CHECKER)

    @settings(max_examples=examples(300), deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.data())
    def check(data):
        obj = data.draw(st.sampled_from(objects[kind]))
        for _ in range(data.draw(st.integers(1, 3))):
            path = data.draw(st.sampled_from(list(value_paths(obj))))
            value = data.draw(st.sampled_from(EDGE_VALUES) | st.text(max_size=8) | st.integers())
            obj = edited(obj, path, value)
        if _fast_valid(kind, None, obj):
            assert reference.is_valid(obj), list(reference.iter_errors(obj))[0].message

    check()


@pytest.mark.parametrize("value", ["eng\n", "en", "ENG", "éng"])
def test_refused_source_language_the_reference_refuses_is_refused_in_one_line(objects, value):
    record = edited(objects["item"][0], ("source_language",), value)
    reference = Draft202012Validator(schema("item"))
    if reference.is_valid(record):  # Python's `$` matches before a final newline: jsonschema's verdict stands
        validate("item", record, what="item")
        return
    with pytest.raises(ContractError) as err:
        validate("item", record, what="item")
    assert "\n" not in str(err.value) and "source_language" in str(err.value)
