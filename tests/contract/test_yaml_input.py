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
