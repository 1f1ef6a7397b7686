"""The one-file write door (hteb_contract/common/atomic.py) on generated names, contents and failure points: any
bytes, text or JSON under any file name (255 bytes long included) reads back exactly and the file keeps its
mode; a write that fails or is interrupted at any step before its rename leaves the old file as it was and
no temporary file, one that fails after the rename leaves the new one; a writer killed mid-write leaves the
old file, and the next write of that name removes the killed writer's temporary file."""

from __future__ import annotations

import errno
import os

import pytest
from fuzz import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.common import json_input
from hteb_contract.common.atomic import atomic_write_bytes, atomic_write_json, atomic_write_text

#: A file name: any characters but '/' and NUL, at most 255 bytes (NAME_MAX), not '.' or '..'.
NAMES = st.one_of(
    st.text(st.characters(blacklist_characters="/\0", blacklist_categories=["Cs"]), min_size=1, max_size=40),
    st.integers(200, 255).map(lambda n: "n" * n),
    st.integers(60, 127).map(lambda n: "é" * n),  # two bytes each: 120 to 254 bytes
).filter(lambda name: name not in (".", "..") and len(os.fsencode(name)) <= 255)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
MODES = st.sampled_from([0o600, 0o640, 0o644, 0o664])
#: The steps of a write, in order, that a failure may hit; the rename is the fourth.
STEPS = ["fchmod", "fsync", "replace", "fsync of the folder"]
FAILURES = st.sampled_from([KeyboardInterrupt(), OSError(errno.ENOSPC, "No space left on device")])


@settings(max_examples=examples(150), deadline=None)
@given(NAMES, st.binary(max_size=3000), st.text(max_size=300), JSON, st.none() | st.tuples(st.binary(), MODES))
def test_any_content_under_any_name_reads_back_exactly(tmp_path_factory, name, data, text, obj, old):
    folder = tmp_path_factory.mktemp("w")
    path = folder / name
    if old is not None:
        path.write_bytes(old[0])
        path.chmod(old[1])
    atomic_write_bytes(path, data)
    assert path.read_bytes() == data
    atomic_write_text(path, text)
    assert path.read_bytes() == text.encode("utf-8")  # no newline translation
    atomic_write_json(path, obj)
    assert json_input.read(path) == obj
    assert os.listdir(folder) == [name]  # no temporary file
    if old is not None:
        assert path.stat().st_mode & 0o777 == old[1]


def _failing(monkeypatch: pytest.MonkeyPatch, step: str, failure: BaseException, then=None) -> None:
    """Make `step` of the next write raise `failure` (or call `then`, a kill)."""
    fsyncs = []

    def fail(*_args: object) -> None:
        if then is not None:
            then()
        raise failure

    def fsync(fd: int) -> None:
        fsyncs.append(fd)
        if (step == "fsync" and len(fsyncs) == 1) or (step == "fsync of the folder" and len(fsyncs) == 2):
            fail()
        real_fsync(fd)

    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", fsync)
    if step in ("fchmod", "replace"):
        monkeypatch.setattr(os, step, fail)


@settings(max_examples=examples(150), deadline=None)
@given(
    NAMES,
    st.binary(max_size=2000),
    st.none() | st.tuples(st.binary(max_size=2000), MODES),
    st.sampled_from(STEPS),
    FAILURES,
)
def test_a_write_that_fails_at_any_step_leaves_the_old_file_or_the_new_and_no_temporary(
    tmp_path_factory, name, new, old, step, failure
):
    folder = tmp_path_factory.mktemp("w")
    path = folder / name
    if old is not None:
        path.write_bytes(old[0])
        path.chmod(old[1])
    with pytest.MonkeyPatch.context() as patch:
        _failing(patch, step, failure)
        with pytest.raises(type(failure)):
            atomic_write_bytes(path, new)
    if step == "fsync of the folder":  # renamed already: the new file, whole
        assert path.read_bytes() == new
    elif old is None:
        assert not path.exists()
    else:
        assert path.read_bytes() == old[0] and path.stat().st_mode & 0o777 == old[1]
    assert os.listdir(folder) == ([name] if path.exists() else [])


@settings(max_examples=examples(40), deadline=None)
@given(NAMES, st.binary(min_size=1, max_size=2000), st.binary(max_size=2000), st.sampled_from(STEPS[:3]))
def test_a_writer_killed_mid_write_leaves_the_old_file_and_the_next_write_removes_its_temporary(
    tmp_path_factory, name, old, new, step
):
    folder = tmp_path_factory.mktemp("w")
    path = folder / name
    path.write_bytes(old)
    child = os.fork()
    if child == 0:  # the killed writer: gone at `step`, as by SIGKILL
        try:
            _failing(pytest.MonkeyPatch(), step, KeyboardInterrupt(), then=lambda: os._exit(9))
            atomic_write_bytes(path, new)
        finally:
            os._exit(0)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 9
    assert path.read_bytes() == old
    (left,) = set(os.listdir(folder)) - {name}  # what the kill left behind
    atomic_write_bytes(path, new)
    assert path.read_bytes() == new and os.listdir(folder) == [name], left
