"""Revisions resealed with bad content (issue 10 item 3): every sha256 matches, so only a check of the
content can refuse them. Each case is one corruption of a real revision; `verify` and the reader the
scorer uses must both end in one line naming the file (and the row), never accept it.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract.arrow import arrow_schema
from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision, content_hash
from hteb_score.cli import main
from hteb_score.scoring.data import revision_variants
from revision_factory import build_revision, install, reseal

ITEMS = "data/STSBenchmark/paraphrasing_1337.parquet"
PAIR_ITEMS = "data/TwitterSemEval2015/paraphrasing_1337.parquet"
STS_SOURCE = "source/STSBenchmark/test.parquet"
PAIR_SOURCE = "source/TwitterSemEval2015/test.parquet"


def _rows(root: Path, rel: str) -> list[dict]:
    return pq.read_table(root / rel).to_pylist()


def _write(root: Path, rel: str, rows: list[dict], schema: pa.Schema | None) -> None:
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), root / rel)


def items(edit: Callable[[list[dict]], None], *, rel: str = ITEMS, typed: bool = True):
    """A corruption of an items file: `edit` changes its rows; `typed=False` lets Arrow infer the column types."""

    def corrupt(root: Path) -> None:
        rows = _rows(root, rel)
        edit(rows)
        _write(root, rel, rows, arrow_schema("item") if typed else None)

    return corrupt


def source(edit: Callable[[list[dict]], None], *, rel: str = STS_SOURCE):
    def corrupt(root: Path) -> None:
        rows = _rows(root, rel)
        edit(rows)
        _write(root, rel, rows, None)

    return corrupt


def each(**changes):
    return lambda rows: [row.update(changes) for row in rows]


def at(index: int, **changes):
    return lambda rows: rows[index].update(changes)


def nested(index: int, column: str, **changes):
    return lambda rows: rows[index][column].update(changes)


def drop_column(name: str):
    return lambda rows: [row.pop(name) for row in rows]


def dataset_json(**changes):
    def corrupt(root: Path) -> None:
        path = root / "source" / "STSBenchmark" / "dataset.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))

    return corrupt


def write_bytes(rel: str, data: bytes):
    def corrupt(root: Path) -> None:
        (root / rel).write_bytes(data)

    return corrupt


SEALED = "sealed by hand"  # a corruption that rewrote the manifest itself


def forge(rel: str, data: bytes):
    """Bytes that are no parquet file, with the manifest entry and content hash rewritten by hand to
    match them (`seal` refuses to seal a parquet file it cannot read)."""

    def corrupt(root: Path) -> str:
        (root / rel).write_bytes(data)
        path = root / "manifest.json"
        manifest = json.loads(path.read_text())
        entry = next(e for e in manifest["files"] if e["path"] == rel)
        entry.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data), rows=None)
        path.write_text(json.dumps(dict(manifest, content_hash=content_hash(manifest["files"]))))
        return SEALED

    return corrupt


def move(rel: str, to: str):
    def corrupt(root: Path) -> None:
        (root / to).parent.mkdir(parents=True, exist_ok=True)
        shutil.move(root / rel, root / to)

    return corrupt


def copy(rel: str, to: str):
    def corrupt(root: Path) -> None:
        (root / to).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / rel, root / to)

    return corrupt


def delete(rel: str):
    def corrupt(root: Path) -> None:
        (root / rel).unlink()

    return corrupt


def attempts(index: int, *outputs_and_errors: tuple[str | None, list[str]], **record):
    """Row `index` given these attempts (output None: the row's kept text) and the `record` fields."""

    def edit(rows: list[dict]) -> None:
        row, first = rows[index], rows[index]["attempts"][0]
        row["attempts"] = [
            dict(first, attempt=n, output=row["transformed_text"] if out is None else out, errors=errors)
            for n, (out, errors) in enumerate(outputs_and_errors)
        ]
        row.update(record)

    return edit


def languages_and_subsets(**fields):
    """dataset.json of STSBenchmark stating other languages or subsets than the manifest's entry."""
    return dataset_json(**fields)


def listed_twice(root: Path) -> str:
    """The manifest lists one file twice (and counts it twice), its content hash recomputed."""
    path = root / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["files"].append(next(e for e in manifest["files"] if e["path"] == ITEMS))
    path.write_text(json.dumps(dict(manifest, content_hash=content_hash(manifest["files"]))))
    return SEALED


def rows_stated(rows: int):
    """The manifest gives another row count for the items file (no hash covers row counts)."""

    def corrupt(root: Path) -> str:
        path = root / "manifest.json"
        manifest = json.loads(path.read_text())
        next(e for e in manifest["files"] if e["path"] == ITEMS)["rows"] = rows
        path.write_text(json.dumps(manifest))
        return SEALED

    return corrupt


def unlisted(rel: str):
    """A file put into the folder after it was sealed: the manifest does not list it."""

    def corrupt(root: Path) -> str:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / ITEMS, root / rel)
        return SEALED

    return corrupt


def twice_declared(root: Path) -> dict:
    manifest = json.loads((root / "manifest.json").read_text())
    return {"sources": manifest["sources"] + manifest["sources"][:1]}


# id -> (corruption of the folder, what the one line must say). A corruption returns None (the folder is
# resealed), manifest fields to reseal with, or SEALED.
CASES: dict[str, tuple[Callable[[Path], None | dict | str], str]] = {
    # item records against the item schema: column types, missing and extra columns, bad values
    "seed-stored-as-text": (
        items(each(seed="1337"), typed=False),
        f"{ITEMS} row 1: does not match the item schema: seed: '1337' is not of type 'integer'",
    ),
    "seed-stored-as-float": (
        items(each(seed=1337.0), typed=False),
        f"{ITEMS}: column 'seed' is double; the item schema stores int64",
    ),
    "judge-column-dropped": (
        items(drop_column("judge"), typed=False),
        f"{ITEMS} row 1: does not match the item schema: (top level): 'judge' is a required",
    ),
    "extra-column": (
        items(each(note="x"), typed=False),
        f"{ITEMS} row 1: does not match the item schema: (top level): Additional properties",
    ),
    "transformed-text-null": (
        items(at(2, transformed_text=None)),
        f"{ITEMS} row 3: does not match the item schema: transformed_text: None is not of type",
    ),
    "unknown-error-name": (
        items(at(1, errors=["bogus"])),
        f"{ITEMS} row 2: does not match the item schema: errors/0: 'bogus' is not one of",
    ),
    "older-item-version": (
        items(each(schema_version="hteb.item/1")),
        f"{ITEMS} row 1: schema version 'hteb.item/1' is not supported",
    ),
    "nan-judge-score": (
        items(nested(0, "judge", parapluie=math.nan)),
        f"{ITEMS} row 1: judge/parapluie: nan is not a finite number",
    ),
    "infinite-temperature": (
        items(at(1, prompt_set="llm", sampling={"temperature": math.inf, "top_p": 1.0, "max_tokens": 8})),
        f"{ITEMS} row 2: sampling/temperature: inf is not a finite number",
    ),
    "negative-infinite-judge": (
        items(nested(3, "judge", quality=-math.inf)),
        f"{ITEMS} row 4: judge/quality: -inf is not a finite number",
    ),
    # item records against their file and the source
    "id-absent-from-source": (
        items(at(0, item_id="no-such-id")),
        f"{ITEMS} row 1: test/no-such-id/sentence1 is not a text of the source of STSBenchmark",
    ),
    "field-absent-from-source": (
        items(at(0, field="sentence3")),
        f"{ITEMS} row 1: test/{{id}}/sentence3 is not a text of the source of STSBenchmark",
    ),
    "duplicate-with-conflicting-text": (
        items(
            lambda rows: rows.append(
                dict(
                    rows[0],
                    transformed_text="another text",
                    attempts=[dict(rows[0]["attempts"][0], output="another text")],
                )
            )
        ),
        f"{ITEMS} row 9: a second record for test/{{id}}/sentence1 with another transformed_text (the first is row 1)",
    ),
    "duplicate-identical": (
        items(lambda rows: rows.append(dict(rows[0]))),
        f"{ITEMS} row 9: a second record for test/{{id}}/sentence1 (the first is row 1)",
    ),
    "record-of-another-transformation": (
        items(at(0, transformation="translation")),
        f"{ITEMS} row 1: a record of STSBenchmark/STS/translation/1337 in the file of "
        "STSBenchmark/STS/paraphrasing/1337",
    ),
    "record-of-another-seed": (
        items(at(5, seed=1338)),
        f"{ITEMS} row 6: a record of STSBenchmark/STS/paraphrasing/1338 in the file of",
    ),
    "record-of-another-dataset": (
        items(at(0, dataset="TwitterSemEval2015")),
        f"{ITEMS} row 1: a record of TwitterSemEval2015/STS/paraphrasing/1337 in the file",
    ),
    "record-of-another-task-type": (
        items(at(0, task_type="Clustering"), rel=PAIR_ITEMS),
        f"{PAIR_ITEMS} row 1: a record of TwitterSemEval2015/Clustering/paraphrasing/1337",
    ),
    "original-text-edited": (
        items(lambda rows: rows[0].update(original_text=rows[0]["original_text"] + "!")),
        f"{ITEMS} row 1: original_text of test/{{id}}/sentence1 is not the source's",
    ),
    "subset-changed": (
        items(at(0, subset="en-de")),
        f"{ITEMS} row 1: subset of test/{{id}}/sentence1 is not the source's",
    ),
    "language-changed": (
        items(at(0, source_language="deu")),
        f"{ITEMS} row 1: source_language of test/{{id}}/sentence1 is not the source's",
    ),
    "record-missing": (items(lambda rows: rows.pop()), f"{ITEMS}: no record for test/"),
    "items-not-parquet": (forge(ITEMS, b"PAR1 not parquet PAR1"), f"{ITEMS}: not a readable parquet file"),
    "items-empty-file": (forge(ITEMS, b""), f"{ITEMS}: not a readable parquet file"),
    # the source copy
    "dataset-renamed-in-dataset-json": (
        dataset_json(name="STSBenchmark2"),
        "source/STSBenchmark/dataset.json gives name 'STSBenchmark2'; the manifest says 'STSBenchmark'",
    ),
    "task-type-changed-in-dataset-json": (
        dataset_json(task_type="STR"),
        "source/STSBenchmark/dataset.json gives task_type 'STR'",
    ),
    "dataset-json-not-json": (
        write_bytes("source/STSBenchmark/dataset.json", b"{"),
        "source/STSBenchmark/dataset.json: not valid JSON",
    ),
    "source-score-nan": (
        source(at(1, score=math.nan)),
        "STSBenchmark: test row 2: score must be a finite number, got nan",
    ),
    "source-sentence-null": (
        source(at(0, sentence1=None)),
        "STSBenchmark: test row 1: sentence1 must be a string, got None",
    ),
    "source-pair-label-2": (
        source(at(2, label=2), rel=PAIR_SOURCE),
        "TwitterSemEval2015: test row 3: label must be 0 or 1, got 2",
    ),
    "source-ids-duplicated": (
        source(lambda rows: rows[1].update(_hteb_item_id=rows[0]["_hteb_item_id"])),
        "STSBenchmark: test row 2: duplicate id",
    ),
    "source-id-null": (source(at(0, _hteb_item_id=None)), "STSBenchmark: test row 1: item id None is not a non-empty"),
    "source-column-dropped": (source(drop_column("score")), "STSBenchmark: test row 1: missing field 'score'"),
    "source-not-parquet": (forge(STS_SOURCE, b"garbage"), f"{STS_SOURCE}: not a readable parquet file"),
    # the layout the manifest declares
    "undeclared-transformation": (
        move(ITEMS, "data/STSBenchmark/poetry_1337.parquet"),
        "file data/STSBenchmark/poetry_1337.parquet is not named <transformation>_<seed>",
    ),
    "undeclared-seed": (
        move(ITEMS, "data/STSBenchmark/paraphrasing_7.parquet"),
        "file data/STSBenchmark/paraphrasing_7.parquet is not named <transformation>_<seed>",
    ),
    "seed-spelled-twice": (
        copy(ITEMS, "data/STSBenchmark/paraphrasing_01337.parquet"),
        "file data/STSBenchmark/paraphrasing_01337.parquet is not named <transformation>_<seed>",
    ),
    "stray-file-in-data": (
        write_bytes("data/STSBenchmark/notes.txt", b"hi"),
        "file data/STSBenchmark/notes.txt is not named <transformation>_<seed>",
    ),
    "undeclared-dataset-folder": (
        copy(ITEMS, "data/Extra/paraphrasing_1337.parquet"),
        "file data/Extra/paraphrasing_1337.parquet is not in the folder of a declared dataset",
    ),
    "dataset-json-removed": (
        delete("source/STSBenchmark/dataset.json"),
        "dataset STSBenchmark has no source/STSBenchmark/dataset.json",
    ),
    "dataset-declared-twice": (twice_declared, "dataset 'STSBenchmark' is declared twice"),
    # records against their own attempts (issue 24 item 3): the kept text, its errors and `fallback`
    "every-attempt-flawed-yet-no-errors": (
        items(attempts(0, ("bad one", ["identical"]), (None, ["truncated"]))),
        f"{ITEMS} row 1: the record contradicts its own attempts: errors [] are not those of the kept attempt 1 "
        "['truncated']",
    ),
    "every-attempt-flawed-yet-no-fallback": (
        items(attempts(0, ("bad one", ["identical"]), (None, ["truncated"]), errors=["truncated"])),
        f"{ITEMS} row 1: the record contradicts its own attempts: fallback is false, but every attempt has errors",
    ),
    "fallback-with-a-clean-attempt": (
        items(attempts(2, (None, []), fallback=True)),
        f"{ITEMS} row 3: the record contradicts its own attempts: fallback is true, but attempt 0 has no error",
    ),
    "errors-no-attempt-had": (
        items(attempts(1, (None, []), errors=["wrong_language"])),
        f"{ITEMS} row 2: the record contradicts its own attempts: errors ['wrong_language'] are "
        "not those of the kept attempt 0 []",
    ),
    "kept-text-no-attempt-made": (
        items(at(3, transformed_text="a text no attempt made")),
        f"{ITEMS} row 4: the record contradicts its own attempts: transformed_text is not the output of the kept "
        "attempt 0",
    ),
    "kept-text-of-a-flawed-attempt": (
        items(attempts(0, ("flawed", ["empty"]), ("clean", []), transformed_text="flawed")),
        f"{ITEMS} row 1: the record contradicts its own attempts: transformed_text is not the output of the kept "
        "attempt 1",
    ),
    # the manifest against the source copy, the files beside it and the taxonomy
    "languages-contradict-dataset-json": (
        languages_and_subsets(languages=["deu"], subsets={"default": ["deu"]}),
        "source/STSBenchmark/dataset.json gives languages ['deu']; the manifest says ['eng']",
    ),
    "subsets-contradict-dataset-json": (
        languages_and_subsets(subsets={"default": ["eng"], "en-x": ["eng"]}),
        "source/STSBenchmark/dataset.json gives subsets {'default': ['eng'], "
        "'en-x': ['eng']}; the manifest says {'default': ['eng']}",
    ),
    "rows-overstated": (rows_stated(999), f"manifest.json gives 999 rows for {ITEMS}; the file has 8"),
    "rows-understated": (rows_stated(0), f"manifest.json gives 0 rows for {ITEMS}; the file has 8"),
    "file-listed-twice": (listed_twice, f"file {ITEMS} is listed twice"),
    "file-not-listed": (
        unlisted("data/STSBenchmark/paraphrasing_1338.parquet"),
        "file data/STSBenchmark/paraphrasing_1338.parquet is in the folder but not listed in manifest.json",
    ),
    "file-not-listed-at-the-top": (
        unlisted("extra.parquet"),
        "file extra.parquet is in the folder but not listed in manifest.json",
    ),
    "transformation-not-in-the-taxonomy": (
        lambda root: (
            move(ITEMS, "data/STSBenchmark/poetry_1337.parquet")(root),
            {"transformations": ["paraphrasing", "poetry"]},
        )[1],
        "transformation 'poetry' is not in the taxonomy",
    ),
}


def _corrupted(base: Path, tmp_path: Path, case: str) -> tuple[Path, str]:
    corrupt, expected = CASES[case]
    root = tmp_path / "rev"
    shutil.copytree(base, root)
    first_id = _rows(root, ITEMS)[0]["item_id"]
    fields = corrupt(root)
    if fields != SEALED:
        reseal(root, **(fields or {}))
    return root, expected.replace("{id}", first_id)


def _one_line(text: str) -> str:
    assert text.count("\n") == 1 and text.endswith("\n") and "Traceback" not in text, text
    return text


@pytest.mark.parametrize("case", CASES)
def test_refused_resealed_revision(bad_revision, tmp_path, capsys, case):
    root, expected = _corrupted(bad_revision, tmp_path, case)
    store = tmp_path / "store"
    install(store, root)
    before = sorted(p.relative_to(store) for p in store.rglob("*"))

    assert main(["verify", "--store", str(store), "--revision", "bad"]) == 2
    captured = capsys.readouterr()
    err = _one_line(captured.err)
    assert err.startswith("hteb-score: error: ") and expected in err
    assert captured.out == ""
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before  # verify writes nothing

    with pytest.raises(HtebError) as refused:  # the reader the scorer uses refuses it as well
        revision = Revision.open(root)
        for name in revision.dataset_names():
            revision_variants(revision, name, transformations=None, seeds=None, on_error="original")
    assert "\n" not in str(refused.value) and refused.value.exit_code == 2


def test_refused_manifest_with_nan(bad_revision, tmp_path, capsys):
    """A NaN in the manifest's free-form `config` (Python's json reads the literal NaN): not JSON, refused by
    the JSON door before the manifest's schema is read."""
    root = tmp_path / "rev"
    shutil.copytree(bad_revision, root)
    path = root / "manifest.json"
    path.write_text(path.read_text().replace('"rows": 4', '"rows": NaN'))  # config is not in the content hash
    store = tmp_path / "store"
    install(store, root)
    assert main(["verify", "--store", str(store), "--revision", "bad"]) == 2
    err = _one_line(capsys.readouterr().err)
    assert "manifest.json: not valid JSON (NaN is not a JSON number)" in err


def test_refused_manifest_nested_too_deeply(tmp_path, capsys):
    (tmp_path / "store" / "objects" / ("a" * 64)).mkdir(parents=True)
    (tmp_path / "store" / "objects" / ("a" * 64) / "manifest.json").write_text("[" * 100000)
    (tmp_path / "store" / "labels").mkdir()
    (tmp_path / "store" / "labels" / "deep.json").write_text(
        json.dumps({"label": "deep", "content_hash": "a" * 64, "published": "2026-11-22T00:00:00+00:00"})
    )
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "deep"]) == 2
    assert "manifest.json: not valid JSON (nested too deeply)" in _one_line(capsys.readouterr().err)


def test_the_base_revision_and_the_bundled_sample_pass(bad_revision, tmp_path, capsys):
    install(tmp_path / "store", bad_revision)
    assert main(["verify", "--store", str(tmp_path / "store"), "--revision", "bad"]) == 0
    assert "2 of 2 datasets verified" in capsys.readouterr().out
    sample = Path(__file__).resolve().parents[2] / "score" / "hteb_score" / "sample" / "store"
    assert main(["verify", "--store", str(sample), "--revision", "sample-1339"]) == 0
    assert "8 of 8 datasets verified" in capsys.readouterr().out


@pytest.mark.slow
def test_a_refusal_never_aborts(bad_revision, tmp_path):
    """`verify`'s refusal as the command, 30 times, four at a time (under load, a thread pool still
    running at interpreter exit aborted it now and then: SIGABRT, exit 134): exit 2 and its one line
    every time."""
    root, expected = _corrupted(bad_revision, tmp_path, "nan-judge-score")
    install(tmp_path / "store", root)
    command = [
        sys.executable,
        "-m",
        "hteb_score.cli",
        "verify",
        "--store",
        str(tmp_path / "store"),
        "--revision",
        "bad",
    ]
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda _: subprocess.run(command, capture_output=True, text=True, timeout=300), range(30)))
    assert [d.returncode for d in done] == [2] * 30, [d.stderr[-300:] for d in done if d.returncode != 2][:2]
    assert all(d.stderr.count("\n") == 1 and expected in d.stderr and d.stdout == "" for d in done)


def test_a_corrupt_dataset_leaves_the_others_readable(bad_revision, tmp_path):
    root, _ = _corrupted(bad_revision, tmp_path, "nan-judge-score")
    revision = Revision.open(root, datasets=["TwitterSemEval2015"])
    assert revision.check_content().datasets == ("TwitterSemEval2015",)
    with pytest.raises(HtebError, match="the files of STSBenchmark were not verified"):
        revision.items("STSBenchmark", "paraphrasing", 1337)


# --- fuzz: a real small revision mutated at random; `verify` is OK or one line, never another exception -------


@pytest.fixture(scope="module")
def small(tmp_path_factory, shared_data) -> Path:
    root = tmp_path_factory.mktemp("small") / "rev"
    build_revision(root, shared_data, ["STSBenchmark", "TwitterSemEval2015"], label="fz", rows=2)
    return root


def _files(root: Path, suffix: str = "") -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob(f"*{suffix}") if p.is_file())


def _rehash(root: Path, rel: str) -> None:
    """Make the manifest match a changed file again, by hand (its row count is left as it was)."""
    path = root / "manifest.json"
    manifest = json.loads(path.read_text())
    data = (root / rel).read_bytes()
    entry = next(e for e in manifest["files"] if e["path"] == rel)
    entry.update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    path.write_text(json.dumps(dict(manifest, content_hash=content_hash(manifest["files"]))))


def _verify_mutated(small: Path, mutate: Callable[[Path], None]) -> None:
    """Mutate a copy of `small`, put it in a store and verify it: exit 0, or 2 with one line. A revision
    that verifies is then read as the scorer reads it, without an error."""
    import contextlib
    import io
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "rev"
        shutil.copytree(small, root)
        mutate(root)
        try:
            digest = json.loads((root / "manifest.json").read_text())["content_hash"]
            assert isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
        except (ValueError, KeyError, TypeError, AssertionError):
            digest = "f" * 64  # a manifest too broken to name its object: the reader must say so
        store = Path(tmp) / "store"
        shutil.copytree(root, store / "objects" / digest)
        (store / "labels").mkdir()
        (store / "labels" / "fz.json").write_text(
            json.dumps({"label": "fz", "content_hash": digest, "published": "2026-11-22T00:00:00+00:00"})
        )
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["verify", "--store", str(store), "--revision", "fz"])
        if code == 0:
            revision = Revision.open(store / "objects" / digest)
            for name in revision.dataset_names():
                revision_variants(revision, name, transformations=None, seeds=None, on_error="original")
        else:
            assert code == 2 and err.getvalue().startswith("hteb-score: error: ")
            _one_line(err.getvalue())


FUZZ = settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)


def _values_of(kind: pa.DataType) -> st.SearchStrategy:
    """Any value an Arrow column of `kind` can hold (NaN, infinities, nulls and extreme integers included)."""
    if pa.types.is_struct(kind):
        inner = st.fixed_dictionaries(
            {kind.field(i).name: _values_of(kind.field(i).type) for i in range(kind.num_fields)}
        )
    elif pa.types.is_list(kind):
        inner = st.lists(_values_of(kind.value_type), max_size=3)
    elif pa.types.is_integer(kind):
        inner = st.integers(-(2**63), 2**63 - 1)
    else:
        inner = {
            pa.string(): st.text(max_size=20),
            pa.float64(): st.floats(),
            pa.bool_(): st.booleans(),
            pa.null(): st.none(),
        }[kind]
    return st.none() | inner


@FUZZ
@given(data=st.data())
def test_fuzz_random_bytes(small, data):
    """Bytes overwritten, inserted or cut off in any file (resealed by hand, or the manifest itself)."""
    rel = data.draw(st.sampled_from(_files(small)), label="file")
    size = (small / rel).stat().st_size
    at = data.draw(st.integers(0, size), label="at")
    chunk = data.draw(st.binary(min_size=1, max_size=16), label="bytes")
    how = data.draw(st.sampled_from(["overwrite", "insert", "truncate"]), label="how")

    def mutate(root: Path) -> None:
        raw = (root / rel).read_bytes()
        raw = {
            "overwrite": raw[:at] + chunk + raw[at + len(chunk) :],
            "insert": raw[:at] + chunk + raw[at:],
            "truncate": raw[:at],
        }[how]
        (root / rel).write_bytes(raw)
        if rel != "manifest.json":
            _rehash(root, rel)

    _verify_mutated(small, mutate)


@FUZZ
@given(data=st.data())
def test_fuzz_cell_values(small, data):
    """One cell of an items or source table set to any value of its column's type, then resealed."""
    rel = data.draw(st.sampled_from(_files(small, ".parquet")), label="file")
    table = pq.read_table(small / rel)
    column = data.draw(st.sampled_from(table.schema.names), label="column")
    row = data.draw(st.integers(0, table.num_rows - 1), label="row")
    value = data.draw(_values_of(table.schema.field(column).type), label="value")

    def mutate(root: Path) -> None:
        rows = table.to_pylist()
        rows[row][column] = value
        pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), root / rel)
        reseal(root)

    _verify_mutated(small, mutate)


@FUZZ
@given(data=st.data())
def test_fuzz_dropped_columns(small, data):
    """Columns dropped from an items or source table, then resealed."""
    rel = data.draw(st.sampled_from(_files(small, ".parquet")), label="file")
    names = pq.read_schema(small / rel).names
    dropped = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True), label="drop")

    def mutate(root: Path) -> None:
        pq.write_table(pq.read_table(root / rel).drop_columns(dropped), root / rel)
        reseal(root)

    _verify_mutated(small, mutate)


@FUZZ
@given(data=st.data())
def test_fuzz_json_values(small, data):
    """A key of a dataset.json or of the manifest set to any JSON value (NaN included) or deleted; a
    changed dataset.json is resealed, a changed manifest is read as it is."""
    rel = data.draw(
        st.sampled_from(
            ["manifest.json", "source/STSBenchmark/dataset.json", "source/TwitterSemEval2015/dataset.json"]
        ),
        label="file",
    )
    document = json.loads((small / rel).read_text())
    key = data.draw(st.sampled_from(sorted(document)) | st.text(max_size=6), label="key")
    delete = data.draw(st.booleans(), label="delete")
    value = None if delete else data.draw(JSON_VALUES, label="value")

    def mutate(root: Path) -> None:
        changed = {k: v for k, v in document.items() if k != key} if delete else {**document, key: value}
        (root / rel).write_text(json.dumps(changed))
        if rel != "manifest.json":
            reseal(root)

    _verify_mutated(small, mutate)
