"""An output set (a page and its CSV) is written together (issue 46): the old set or the new, never a mix; an
output that is an input, or two outputs that are one file, refused before anything is written; a symbolic
link written through; what a killed writer left finished or removed by the next."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hteb_contract.common.output_set import NAME_BYTES, staged_name, write_together
from hteb_contract.errors import HtebError

NAMES = ["page.html", "page.csv", "notes.md"]
texts = st.text(max_size=200)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    new=st.lists(texts, min_size=1, max_size=3),
    old=st.lists(st.one_of(st.none(), texts), min_size=3, max_size=3),
    linked=st.lists(st.booleans(), min_size=3, max_size=3),
    modes=st.lists(st.sampled_from([0o600, 0o644, 0o664]), min_size=3, max_size=3),
)
def test_every_file_of_the_set_is_the_new_one_links_kept_modes_kept(tmp_path_factory, new, old, linked, modes):
    folder = tmp_path_factory.mktemp("set")
    real = folder / "real"
    real.mkdir()
    paths = []
    for name, before, link, mode in zip(NAMES[: len(new)], old, linked, modes):
        path = folder / name
        if before is not None:
            target = real / name if link else path
            target.write_text(before, encoding="utf-8")
            target.chmod(mode)
            if link:
                path.symlink_to(target)
        paths.append(path)
    write_together(dict(zip(paths, new)))
    for path, text, before, link, mode in zip(paths, new, old, linked, modes):
        assert path.read_bytes().decode("utf-8") == text  # as written: no newline translation
        assert path.is_symlink() == (before is not None and link)
        if before is not None:
            assert (os.stat(path).st_mode & 0o777) == mode
    assert not [p.name for p in folder.iterdir() if p.name.startswith(".")]  # no temp file, no journal


@pytest.mark.parametrize("how", ["the same path", "a link to it", "a path through ..", "two outputs, one file"])
def test_an_output_that_is_an_input_or_another_output_is_refused_and_nothing_written(tmp_path, how):
    facts, page, csv = tmp_path / "facts.json", tmp_path / "page.html", tmp_path / "page.csv"
    facts.write_text("[]", encoding="utf-8")
    csv.write_text("old", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    out = {
        "the same path": facts,
        "a link to it": tmp_path / "link.html",
        "a path through ..": tmp_path / "sub" / ".." / "facts.json",
        "two outputs, one file": tmp_path / "link.html",
    }[how]
    if how == "a link to it":
        out.symlink_to(facts)
    if how == "two outputs, one file":
        out.symlink_to(csv)
    with pytest.raises(HtebError) as refused:
        write_together({out: "new page", csv: "new csv"}, inputs=[facts])
    assert "\n" not in str(refused.value)
    assert facts.read_text(encoding="utf-8") == "[]" and csv.read_text(encoding="utf-8") == "old"
    assert not page.exists()


KILLED = """
import os, sys
from pathlib import Path
from hteb_contract.common import output_set
real = output_set.os.replace
calls = []
def replace(a, b):
    if str(a).endswith(".set.tmp"):  # the set's renames (not the writes that stage it)
        if calls:  # the second: killed as by SIGKILL, the first made
            os._exit(9)
        calls.append(a)
    real(a, b)
output_set.os.replace = replace
folder = Path(sys.argv[1])
output_set.write_together({folder / "page.html": "new page", folder / "page.csv": "new csv"})
"""


def test_a_writer_killed_between_renames_is_finished_by_the_next_write(tmp_path):
    (tmp_path / "page.html").write_text("old page", encoding="utf-8")
    (tmp_path / "page.csv").write_text("old csv", encoding="utf-8")
    run = subprocess.run([sys.executable, "-c", KILLED, str(tmp_path)], check=False)
    assert run.returncode == 9
    texts = {p.name: p.read_text(encoding="utf-8") for p in tmp_path.iterdir() if not p.name.startswith(".")}
    assert sorted(texts.values()) in (["new csv", "old page"], ["new page", "old csv"])  # mid-set, as killed
    write_together({tmp_path / "notes.md": "another set in the folder"})  # the next writer finishes it first
    assert (tmp_path / "page.html").read_text() == "new page" and (tmp_path / "page.csv").read_text() == "new csv"
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_what_a_writer_killed_before_its_journal_left_is_removed_and_the_old_set_stands(tmp_path):
    (tmp_path / "page.html").write_text("old page", encoding="utf-8")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / f".page.html.{dead.stdout.strip()}.set.tmp").write_text("half", encoding="utf-8")
    write_together({tmp_path / "notes.md": "x"})
    assert (tmp_path / "page.html").read_text() == "old page"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md", "page.html"]


#: Name characters of 1 to 4 bytes in UTF-8 (no "/" or NUL).
name_chars = st.sampled_from(["a", "Z", "-", ".", "\u00e9", "\u0915", "\u4e2d", "\U0001f600"])


def _name(chars: list[str], limit: int) -> str:
    """`chars` joined, cut to at most `limit` bytes at a character's end."""
    name = ""
    for char in chars:
        if len((name + char).encode()) > limit:
            break
        name += char
    return name


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stem=st.lists(name_chars, min_size=60, max_size=255),
    limit=st.integers(150, NAME_BYTES - 5),  # the longest end is 5 bytes
    ends=st.lists(st.sampled_from(["1.csv", "2.csv", "x.md", "y.md"]), min_size=2, max_size=3, unique=True),
    texts=st.lists(texts, min_size=3, max_size=3),
)
def test_targets_with_long_names_that_begin_alike_are_written_each_as_itself(
    tmp_path_factory, stem, limit, ends, texts
):
    """Targets whose names reach the 255 bytes a name may hold, and begin alike up to there, stage under names
    that fit and differ (a cut name alone would stage two targets as one file, losing one)."""
    folder = tmp_path_factory.mktemp("long")
    base = _name(stem, limit)
    files = {folder / (base + end): text for end, text in zip(ends, texts)}
    write_together(files)
    written = {p.name: p.read_bytes().decode("utf-8") for p in folder.iterdir()}  # no newline translation
    assert written == {p.name: t for p, t in files.items()}
    staged = [staged_name(p.name, 4_194_304) for p in files]
    assert len(set(staged)) == len(staged) and all(
        len(n.encode("utf-8", "surrogateescape")) <= NAME_BYTES for n in staged
    )
