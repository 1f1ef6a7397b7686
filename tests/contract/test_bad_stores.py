"""Stores facing bad labels and bad addresses (issue 10): a corrupt label file is listed as corrupt and
refused in one line when asked for, never a traceback for the other labels; a label pointing outside
the store is refused before anything there is read; a missing or empty store address is one line."""

from __future__ import annotations

import json
import os
import pwd
import shutil

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hteb_contract.errors import HtebError, StoreError
from hteb_contract.stores import open_store
from hteb_contract.stores.local import LocalStore
from hteb_score.cli import main
from deadline import deadline
from fuzz import examples
from revision_factory import build_revision

PUBLISHED = "2026-11-22T00:00:00+00:00"


@pytest.fixture(scope="module")
def staged(tmp_path_factory, shared_data):
    root = tmp_path_factory.mktemp("staged") / "rev"
    build_revision(root, shared_data, ["STSBenchmark"], label="good", rows=2)
    return root


@pytest.fixture
def store(tmp_path, staged):
    LocalStore(tmp_path / "store").publish(staged)
    return tmp_path / "store"


def _record(**changes) -> bytes:
    return json.dumps({"label": "bad", "content_hash": "a" * 64, "published": PUBLISHED, **changes}).encode()


FIFO = object()

# id -> (what labels/bad.json is: its bytes, None for a folder, FIFO, a str for a link to that path; what the
# line says)
CORRUPT = {
    "not-json": (b"{", "labels/bad.json is not valid JSON"),
    "empty-file": (b"", "labels/bad.json is not valid JSON"),
    "not-utf8": (b"\xff\xfe{}", "labels/bad.json is not valid JSON"),
    "nan-literal": (b'{"label": "bad", "content_hash": NaN}', "labels/bad.json is not valid JSON"),
    "key-twice": (b'{"label": "bad", "label": "good"}', "labels/bad.json is not valid JSON"),
    "json-list": (b"[]", "labels/bad.json is not a JSON object"),
    "deeply-nested": (b"[" * 100000, "labels/bad.json is not valid JSON"),
    "another-label-name": (_record(label="good"), "labels/bad.json names the label 'good'"),
    "hash-escaping-the-store": (
        _record(content_hash="../../x"),
        "labels/bad.json gives the content hash '../../x', not a hex sha256",
    ),
    "hash-absolute-path": (_record(content_hash="/etc"), "gives the content hash '/etc', not a hex sha256"),
    "hash-upper-case": (_record(content_hash="A" * 64), "not a hex sha256"),
    "hash-short": (_record(content_hash="abc"), "gives the content hash 'abc', not a hex sha256"),
    "hash-missing": (json.dumps({"label": "bad", "published": PUBLISHED}).encode(), "gives the content hash None"),
    "published-missing": (json.dumps({"label": "bad", "content_hash": "a" * 64}).encode(), "has no publication time"),
    "a-folder": (None, "labels/bad.json is not a regular file (a folder)"),
    "a-fifo": (FIFO, "labels/bad.json is not a regular file (a FIFO)"),  # opening it to read would block
    "a-link-out-of-the-store": ("/etc/hostname", "labels/bad.json is a symbolic link"),
}


def _corrupt(store, case):
    content, _ = CORRUPT[case]
    path = store / "labels" / "bad.json"
    if content is None:
        path.mkdir()
    elif content is FIFO:
        os.mkfifo(path)
    elif isinstance(content, str):
        path.symlink_to(content)
    else:
        path.write_bytes(content)


def _one_line(text: str) -> str:
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text


@pytest.mark.parametrize("case", CORRUPT)
def test_flagged_corrupt_label_in_revisions(store, capsys, case):
    """`revisions` lists the good labels and flags the corrupt one; the good ones still verify."""
    _corrupt(store, case)
    with deadline():
        assert main(["revisions", "--store", str(store)]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    good, flagged = out.out.splitlines()
    label, content_hash, published = good.split("  ")  # each label with its revision and date
    assert (label, content_hash) == ("good", open_store(str(store)).resolve("good")) and published[:4].isdigit()
    assert flagged.startswith("bad (corrupt: ") and CORRUPT[case][1].split(" ", 1)[1] in flagged
    assert main(["verify", "--store", str(store), "--revision", "good"]) == 0
    with deadline():
        assert main(["verify", "--store", str(store), "--revision", "nope"]) == 2  # the error lists the labels
    assert "(labels: good)" in _one_line(capsys.readouterr().err)


@pytest.mark.parametrize("case", CORRUPT)
def test_refused_corrupt_label(store, capsys, case):
    _corrupt(store, case)
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    with deadline():
        assert main(["verify", "--store", str(store), "--revision", "bad"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert err.startswith(f"hteb-score: error: store {store}: label 'bad' is corrupt: ") and CORRUPT[case][1] in err
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before


def test_refused_label_pointing_outside_the_store(tmp_path, store, staged, capsys):
    """A label whose content hash is `../../x` where a valid revision lies: it used to be verified (and
    scored) from outside the store; now the label is refused before anything there is opened."""
    shutil.copytree(staged, tmp_path / "x")
    assert (store / "objects" / ".." / ".." / "x").resolve() == (tmp_path / "x").resolve()
    (store / "labels" / "evil.json").write_text(
        json.dumps({"label": "evil", "content_hash": "../../x", "published": PUBLISHED})
    )
    assert main(["verify", "--store", str(store), "--revision", "evil"]) == 2
    assert "label 'evil' is corrupt: labels/evil.json gives the content hash '../../x'" in _one_line(
        capsys.readouterr().err
    )
    with pytest.raises(StoreError, match="is corrupt"):
        LocalStore(store).fetch("evil")


def test_refused_publish_over_a_corrupt_label(tmp_path, staged):
    (tmp_path / "store" / "labels").mkdir(parents=True)
    (tmp_path / "store" / "labels" / "good.json").write_text("{")
    with pytest.raises(StoreError, match=r"label 'good' is corrupt: labels/good.json is not valid JSON$"):
        LocalStore(tmp_path / "store").publish(staged)


# id -> (arguments after the command, what the one line says); {tmp} is the test's folder
ADDRESSES = {
    "revisions-missing-store": (["revisions", "--store", "{tmp}/none"], "no revision store at file://{tmp}/none"),
    "revisions-store-is-a-file": (["revisions", "--store", "{tmp}/file"], "no revision store at file://{tmp}/file"),
    "revisions-empty-file-uri": (["revisions", "--store", "file://"], "names no folder"),
    "revisions-empty-path": (["revisions", "--store", ""], "names no folder"),
    "revisions-hub-unreachable": (
        ["revisions", "--store", "hf://owner/name"],  # the tests run with HF_HUB_OFFLINE=1
        "hf://owner/name: cannot tell whether the repository exists (OfflineModeIsEnabled",
    ),
    "verify-missing-store": (
        ["verify", "--store", "{tmp}/none", "--revision", "v1"],
        "no revision 'v1' in store {tmp}/none: there is no store there",
    ),
    "verify-empty-file-uri": (["verify", "--store", "file://", "--revision", "v1"], "names no folder"),
    "verify-blank-file-uri": (["verify", "--store", "file://  ", "--revision", "v1"], "names no folder"),
    "verify-ref-with-a-path": (
        ["verify", "--store", "{tmp}/store", "--revision", "../labels/good"],
        "no revision '../labels/good' in store {tmp}/store (labels: good)",
    ),
    "verify-ref-empty": (["verify", "--store", "{tmp}/store", "--revision", ""], "no revision '' in store"),
    "verify-hub-ref-with-a-path": (
        ["verify", "--store", "hf://owner/name", "--revision", "../../x"],
        "hf://owner/name: '../../x' is not a tag, branch or commit name",
    ),
}


@pytest.mark.parametrize("case", ADDRESSES)
def test_refused_store_address(tmp_path, store, capsys, case):
    (tmp_path / "file").write_text("not a store")
    args, expected = ADDRESSES[case]
    before = sorted(p.name for p in tmp_path.rglob("*"))
    assert main([a.replace("{tmp}", str(tmp_path)) for a in args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert expected.replace("{tmp}", str(tmp_path)) in _one_line(captured.err)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # no store made, nothing written


def test_an_empty_store_lists_nothing(tmp_path, capsys):
    (tmp_path / "store" / "labels").mkdir(parents=True)
    assert main(["revisions", "--store", str(tmp_path / "store")]) == 0
    assert capsys.readouterr().out == ""
    assert open_store(str(tmp_path / "none")).labels() == []  # a first publish creates the store


#: this machine's users: `~USER` of one of them is an ordinary folder
USERS = frozenset(entry.pw_name for entry in pwd.getpwall())


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    user=st.text("abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=20),
    rest=st.sampled_from(["", "/store", "/a/b"]),
    scheme=st.sampled_from(["", "file://"]),
    command=st.sampled_from([["revisions"], ["verify", "--revision", "v1"]]),
)
def test_a_store_in_the_home_of_a_user_this_machine_lacks_is_one_line(tmp_path, capsys, user, rest, scheme, command):
    """`~USER` is a shell's home of USER; pathlib raises a bare RuntimeError for a user with none here, which
    reached users as a traceback (found by the generator's store fuzzer): one line naming the user instead."""
    assume(user not in USERS)  # a real user's home is a folder like any other
    given = f"{scheme}~{user}{rest}"
    assert main([*command, "--store", given]) == 2
    captured = capsys.readouterr()
    line = _one_line(captured.err)
    assert captured.out == "" and f"names the home folder of user {user!r}, who has none on this machine" in line
    with pytest.raises(HtebError, match="who has none on this machine"):
        open_store(given)
