"""The YAML door (hteb_contract/common/yaml_input.py) on generated documents: what a safe dumper writes
reads back as the value it wrote, and any text reads either as PyYAML's safe loader reads it or as one
line of the caller's error kind naming where it came from, never a traceback of PyYAML's. (libyaml, the C
loader the door uses where it is built, and PyYAML's pure loader disagree on some texts, `>\t` one.)"""

from __future__ import annotations

import pytest
import yaml
from fuzz import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.common import yaml_input
from hteb_contract.errors import ContractError, HtebError

LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=examples(200), deadline=None)
@given(VALUES, st.booleans())
def test_what_a_safe_dumper_writes_reads_back(value, flow):
    text = yaml.safe_dump(value, default_flow_style=flow)  # non-ASCII escaped: a raw U+0085 is a line break
    assert yaml_input.loads(text, "x.yaml") == value
    assert yaml_input.loads(text.encode("utf-8"), "x.yaml") == value


@settings(max_examples=examples(300), deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab: -[]{}&*!|>'\"#\n\t,?%@`\x00\u202e"))) | st.text())
def test_any_text_reads_as_the_safe_loader_reads_it_or_is_one_line(text):
    try:
        expected = yaml.load(text, Loader=LOADER)
    except yaml.YAMLError:
        with pytest.raises(HtebError) as refused:
            yaml_input.loads(text, "x.yaml", HtebError)
        assert str(refused.value).startswith("x.yaml: not valid YAML (") and "\n" not in str(refused.value)
    else:
        assert yaml_input.loads(text, "x.yaml") == expected


def test_a_file_that_cannot_be_read_is_one_line(tmp_path):
    with pytest.raises(ContractError, match=r"^missing.yaml: cannot be read \("):
        yaml_input.read(tmp_path / "missing.yaml")


#: a key YAML reads as text: "no", "on", "y" and the like read as true or false (YAML 1.1), "null" as nothing
TEXT_KEYS = st.from_regex(r"[a-z_]{1,8}", fullmatch=True).filter(
    lambda k: isinstance(yaml.safe_load(f"{k}: 0"), dict) and k in yaml.safe_load(f"{k}: 0")
)


@settings(max_examples=examples(100), deadline=None)
@given(st.dictionaries(TEXT_KEYS, st.integers(), min_size=1, max_size=6), st.data())
def test_a_key_given_twice_is_one_line_naming_it(row, data):
    """PyYAML keeps the last of two values silently (the row read is not the row shown); the door refuses."""
    key = data.draw(st.sampled_from(sorted(row)))
    lines = [f"{k}: {v}" for k, v in row.items()]
    at = data.draw(st.integers(0, len(lines)))
    lines.insert(at, f"{key}: 0")
    with pytest.raises(HtebError, match=rf"^x.yaml: not valid YAML \(the key '{key}' is given twice, line \d+\)$"):
        yaml_input.loads("\n".join(lines), "x.yaml", HtebError)


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(1, 12), st.integers(1, 9))
def test_aliases_read_as_shared_values_up_to_the_limit_and_a_bomb_is_one_line(width, depth):
    """Each level lists the one before `width` times: width**depth nodes once expanded, read in microseconds."""
    lines = [f"l0: &l0 [{', '.join(['x'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, depth)]
    text = "\n".join(lines)
    sizes = [1 + width]  # a list node and its scalars; each level: a list node and `width` copies of the last
    for _ in range(1, depth):
        sizes.append(1 + width * sizes[-1])
    expanded = 1 + sum(1 + size for size in sizes)  # the root mapping, each key and each level
    if expanded <= yaml_input.MAX_NODES:
        assert yaml_input.loads(text, "x.yaml") == yaml.load(text, Loader=LOADER)
    else:
        with pytest.raises(HtebError, match=r"^x.yaml: not valid YAML \(its aliases expand to more than"):
            yaml_input.loads(text, "x.yaml", HtebError)


def test_the_shared_detector_lists_and_merge_keys_still_read():
    assert yaml_input.loads("a: &x [1]\nb: *x\nc: {<<: {k: 1}, k: 2}", "x.yaml") == {"a": [1], "b": [1], "c": {"k": 2}}
