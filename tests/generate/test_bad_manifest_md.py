"""--manifest-md pointed at a file of one's own (issue 24): a Markdown file without a revisions table
keeps every byte of its text and gets the table appended; text around an existing table is kept;
the file keeps its mode; a label the table cites never moves to other content, even where the store
(a clone's own folder) no longer holds it. Through the real command, on a real noise-rule run."""

from __future__ import annotations

import os
from pathlib import Path
from subprocess import CompletedProcess

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract.stores.local import LocalStore
from hteb_generate.revision import manifest_md
from hteb_generate.cli import main
from cli_run import generate
from not_utf8 import not_utf8

README = "# My project\n\nSome notes that took a day to write.\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"


def _args(tmp_path: Path, data: Path, manifest: Path, label: str = "n1", *more: str) -> list[str]:
    return [
        "--seed",
        "1339",
        "--profile",
        "noise",
        "--datasets",
        "STSBenchmark",
        "--transformations",
        "numerisation",
        "--sample",
        "2",
        "--store",
        str(tmp_path / "store"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--data-dir",
        str(data),
        "--label",
        label,
        "--manifest-md",
        str(manifest),
        *more,
    ]


def _run(tmp_path: Path, data: Path, manifest: Path, label: str = "n1", *more: str) -> None:
    try:
        main(_args(tmp_path, data, manifest, label, *more))
    except SystemExit as done:
        assert done.code in (0, None)


def test_a_file_without_a_table_keeps_its_text(tmp_path, shared_data):
    path = tmp_path / "README.md"
    path.write_text(README)
    _run(tmp_path, shared_data, path)
    text = path.read_text()
    assert text.startswith(README) and manifest_md.START in text
    assert [r["label"] for r in manifest_md.parse(text)] == ["n1"]
    _run(tmp_path, shared_data, path, label="n2")  # a second label: a row of the same table
    text = path.read_text()
    assert text.startswith(README) and text.count(manifest_md.START) == 1
    assert [r["label"] for r in manifest_md.parse(text)] == ["n1", "n2"]


def test_the_label_asked_is_the_label_published(tmp_path, shared_data):
    """The same rules on the same sources under another label: the revision staged for n1 (its
    manifest says n1) must not be published again as the run of n2."""
    path = tmp_path / "MANIFEST.md"
    _run(tmp_path, shared_data, path)
    _run(tmp_path, shared_data, path, label="n2")
    store = LocalStore(tmp_path / "store")
    assert store.labels() == ["n1", "n2"] and store.fetch("n2").label == "n2"


def test_text_around_the_table_is_kept(tmp_path, shared_data):
    path = tmp_path / "README.md"
    before, after = "# Intro\n\nCite these:\n\n", "\n\n## After the table\n\nMore text.\n"
    path.write_text(before + manifest_md.START + "\n" + manifest_md.END + after)
    _run(tmp_path, shared_data, path)
    text = path.read_text()
    assert text.startswith(before + manifest_md.START) and text.endswith(manifest_md.END + after)
    assert [r["label"] for r in manifest_md.parse(text)] == ["n1"]


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o640], ids=oct)
def test_the_file_keeps_its_mode(tmp_path, shared_data, mode):
    path = tmp_path / "MANIFEST.md"
    path.write_text(manifest_md.render([]))
    path.chmod(mode)
    _run(tmp_path, shared_data, path)
    assert os.stat(path).st_mode & 0o777 == mode and manifest_md.parse(path.read_text())


@pytest.mark.parametrize("option", ["--manifest-md", "--cache-dir"])
@pytest.mark.parametrize("where", ["the-store", "another-store"])
def test_refused_output_inside_a_store(tmp_path, shared_data, capsys, option, where):
    """An output inside the store published to (made or not yet), or inside any other local store."""
    _run(tmp_path / "other", shared_data, tmp_path / "other" / "MANIFEST.md")  # another-store: a real one
    store = tmp_path / ("store" if where == "the-store" else "other/store")
    inside = store / "objects" / ("MANIFEST.md" if option == "--manifest-md" else "cache")
    paths = {"--manifest-md": str(tmp_path / "MANIFEST.md"), "--cache-dir": str(tmp_path / "cache")}
    paths[option] = str(inside)
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main(
            [
                "--seed",
                "1339",
                "--profile",
                "noise",
                "--datasets",
                "STSBenchmark",
                "--transformations",
                "numerisation",
                "--sample",
                "2",
                "--store",
                str(tmp_path / "store"),
                "--data-dir",
                str(shared_data),
                "--label",
                "n1",
                "--cache-dir",
                paths["--cache-dir"],
                "--manifest-md",
                paths["--manifest-md"],
            ]
        )
    assert refused.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"error: {option} {inside} is inside the store {store.resolve()}" in err, err
    assert not (store / "objects" / "MANIFEST.md").exists() and not (store / "objects" / "cache").exists()


#: Runs that make other content than `_run`'s under the same label (later options win over `_args`' own).
OTHER_CONTENT = {
    "more rows": ["--sample", "3"],
    "another rule": ["--transformations", "keyboard_typos"],
    "another seed": ["--seed", "1340"],
    "another dataset": ["--datasets", "SciFact"],
}


@pytest.mark.parametrize("change", OTHER_CONTENT)
def test_a_cited_label_never_moves_though_the_store_no_longer_holds_it(tmp_path, shared_data, capsys, change):
    """A fresh clone's `.hteb/store` lacks the label MANIFEST.md cites: other content under it is refused in one
    line before it is published, the table keeps every byte; the same content made again is published."""
    import shutil

    path = tmp_path / "MANIFEST.md"
    _run(tmp_path, shared_data, path)
    cited = path.read_bytes()
    shutil.rmtree(tmp_path / "store")  # a clone without the maintainer's local store
    capsys.readouterr()
    with pytest.raises(SystemExit) as refused:
        main(_args(tmp_path, shared_data, path, "n1", *OTHER_CONTENT[change]))
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("error:")]  # beside the stages' progress lines
    assert refused.value.code == 2 and len(errors) == 1 and "Traceback" not in err, err
    assert "a cited label never moves" in errors[0] and "publish under a new label" in errors[0]
    assert "revision is kept at" in errors[0]
    assert path.read_bytes() == cited
    assert not (tmp_path / "store").exists() or LocalStore(tmp_path / "store").labels() == []  # nothing published
    _run(tmp_path, shared_data, path, "n1-other", *OTHER_CONTENT[change])  # under a new label: a row of its own
    _run(tmp_path, shared_data, path)  # the cited content made again: published, its row as it was
    rows = manifest_md.parse(path.read_text())
    assert [r["label"] for r in rows] == ["n1", "n1-other"] and rows[0] == manifest_md.parse(cited.decode())[0]
    assert sorted(LocalStore(tmp_path / "store").labels()) == ["n1", "n1-other"]


# -- supersede: a table that is not UTF-8 text, a name the OS refuses --------------------------------

FUZZ = settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _supersede(cwd: Path, table: Path, store: Path) -> CompletedProcess:
    """`hteb-generate supersede n1 --by n2` on `table`."""
    return generate(
        "supersede", "n1", "--by", "n2", "--because", "x", "--store", str(store), "--manifest-md", str(table), cwd=cwd
    )


def _one_line(done: CompletedProcess, names: str) -> None:
    assert done.returncode == 2 and "Traceback" not in done.stderr, (done.returncode, done.stderr)
    assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, done.stderr
    assert names in done.stderr, done.stderr


def test_supersede_refuses_a_table_that_isnot_utf8(tmp_path, shared_data):
    """The audit's case: two labels published, the table given is not UTF-8 (before: a UnicodeDecodeError
    traceback); the same table as UTF-8 is marked."""
    path = tmp_path / "MANIFEST.md"
    _run(tmp_path, shared_data, path)
    _run(tmp_path, shared_data, path, "n2", "--seed", "1340")
    bad = tmp_path / "Mbad.md"
    bad.write_bytes(b"\xff\xfe" + path.read_bytes())
    _one_line(_supersede(tmp_path, bad, tmp_path / "store"), f"--manifest-md {bad} is not readable UTF-8 text")
    assert bad.read_bytes()[:2] == b"\xff\xfe"
    assert _supersede(tmp_path, path, tmp_path / "store").returncode == 0
    assert manifest_md.parse(path.read_text())[0][manifest_md.SUPERSEDED] == "n2: x"


@FUZZ
@given(
    before=st.sampled_from(["", README, manifest_md.render([])]),
    data=st.binary(min_size=1, max_size=40).filter(not_utf8),
)
def test_fuzz_supersede_refuses_any_table_that_isnot_utf8(tmp_path, before, data):
    """Text, then bytes UTF-8 does not decode: one line naming the file, the file as it was."""
    path = tmp_path / "table.md"
    path.write_bytes(before.encode() + data)
    _one_line(_supersede(tmp_path, path, tmp_path / "store"), f"--manifest-md {path} is not readable UTF-8 text")
    assert path.read_bytes() == before.encode() + data


@FUZZ
@given(length=st.integers(256, 600), where=st.sampled_from(["table", "folder"]))
def test_fuzz_supersede_refuses_a_name_the_os_refuses(tmp_path, length, where):
    """A name too long for the filesystem: the OS's own error, in one line naming the path as hteb-score's
    main words it (before: an OSError traceback)."""
    path = tmp_path / ("x" * length) / "M.md" if where == "folder" else tmp_path / ("x" * length)
    _one_line(_supersede(tmp_path, path, tmp_path / "store"), f"error: File name too long: {path}")
    assert not any(tmp_path.iterdir())
