"""The JSON door (hteb_contract/common/json_input.py) on generated documents: what is strict JSON
reads exactly as `json.loads` reads it; one key named twice in any object at any depth, NaN and
Infinity, a number beyond a float, nesting past the stack and bytes that are not UTF-8 are each one
line of the caller's error kind naming where the JSON came from."""

from __future__ import annotations

import json
import math
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.common import json_input
from hteb_contract.errors import ContractError, HtebError, StoreError

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)
KINDS = st.sampled_from([ContractError, HtebError, StoreError, ValueError])


@settings(max_examples=200, deadline=None)
@given(VALUES)
def test_strict_json_reads_as_json_reads_it(value):
    text = json.dumps(value)
    assert json_input.loads(text, "x.json") == json.loads(text)
    assert json_input.loads(text.encode("utf-8"), "x.json") == json.loads(text)


def _one_line(err: BaseException, where: str) -> str:
    message = str(err)
    assert message.startswith(f"{where}: not valid JSON (") and "\n" not in message
    return message


def _nest(document: str, depth: int, path: list[int]) -> str:
    """`document` inside `depth` arrays and objects, the way `path` says (even: an array, odd: an object)."""
    for step in path[:depth]:
        document = f"[1, {document}]" if step % 2 == 0 else f'{{"k": {document}}}'
    return document


@settings(max_examples=150, deadline=None)
@given(
    key=st.text(max_size=8),
    first=VALUES,
    second=VALUES,
    path=st.lists(st.integers(0, 1), max_size=6),
    kind=KINDS,
)
def test_a_key_named_twice_at_any_depth_is_refused(key, first, second, path, kind):
    inner = f"{{{json.dumps(key)}: {json.dumps(first)}, {json.dumps(key)}: {json.dumps(second)}}}"
    with pytest.raises(kind) as err:
        json_input.loads(_nest(inner, len(path), path), "card.json", kind)
    assert f"the key {key!r} is given twice in one object" in _one_line(err.value, "card.json")


@settings(max_examples=100, deadline=None)
@given(
    constant=st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-2.5E+999", "123456789e999"]),
    path=st.lists(st.integers(0, 1), max_size=6),
    kind=KINDS,
)
def test_what_is_no_json_number_is_refused(constant, path, kind):
    assert not math.isfinite(json.loads(constant))  # what Python's json would have read
    with pytest.raises(kind) as err:
        json_input.loads(_nest(constant, len(path), path), "part.json", kind)
    _one_line(err.value, "part.json")


@settings(max_examples=30, deadline=None)
@given(
    digits=st.integers(sys.get_int_max_str_digits() + 1, 3 * sys.get_int_max_str_digits()),
    sign=st.sampled_from(["", "-"]),
    path=st.lists(st.integers(0, 1), max_size=6),
    kind=KINDS,
)
def test_an_integer_of_more_digits_than_python_reads_is_refused(digits, sign, path, kind):
    """json.loads raises a bare ValueError for it, which no caller's error handling named."""
    with pytest.raises(kind) as err:
        json_input.loads(_nest(sign + "9" * digits, len(path), path), "manifest.json", kind)
    assert f"has {digits} digits, more than are read" in _one_line(err.value, "manifest.json")
    big = sign + "9" * sys.get_int_max_str_digits()  # the most digits read: read as json reads it
    assert json_input.loads(big, "manifest.json") == json.loads(big)


@pytest.mark.parametrize("raw", [b"[" * 200_000 + b"]" * 200_000, b'{"a": "\xff"}', b"\xfe\xff{}", b"", b"{"])
def test_unreadable_documents_are_one_line(raw):
    with pytest.raises(ContractError) as err:
        json_input.loads(raw, "f.json")
    _one_line(err.value, "f.json")


def test_an_object_is_asked_for_and_a_file_read(tmp_path):
    with pytest.raises(ContractError, match=r"^m\.json: expected a JSON object$"):
        json_input.load_object("[1]", "m.json")
    with pytest.raises(HtebError, match=r": no such file$"):
        json_input.read(tmp_path / "absent.json", HtebError)
    (tmp_path / "twice.json").write_text('{"model": "a", "model": "b"}', encoding="utf-8")
    with pytest.raises(HtebError, match="the key 'model' is given twice"):
        json_input.read(tmp_path / "twice.json", HtebError)


@pytest.mark.parametrize("constant", ["Infinity", "-Infinity", "1e400"])
def test_a_writer_of_nan_is_read_with_nan_and_nothing_more(constant):
    """mteb's result files hold NaN where a metric could not be computed: read with `nan=True`, NaN is a float
    NaN; infinities and a key named twice are still refused."""
    assert math.isnan(json_input.loads('{"main_score": NaN}', "r.json", nan=True)["main_score"])
    with pytest.raises(ContractError):
        json_input.loads(f'{{"main_score": {constant}}}', "r.json", nan=True)
    with pytest.raises(ContractError, match="given twice"):
        json_input.loads('{"a": NaN, "a": 1}', "r.json", nan=True)
