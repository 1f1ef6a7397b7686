"""Bad `hteb-score` options are refused before any work: one line naming the option, exit 2,
no output folder and no partial folder, no model weights loaded (the suite refuses weight loading
outside slow tests, so a check that came after the model would fail here)."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_score.encoding.model_files import MODEL_MARKERS
from models import minilm_path
from refusal import TOKENIZER_FILES, assert_one_line, copy_model, partials, run


def _empty_source(tmp: Path) -> list[str]:
    (tmp / "empty").mkdir()
    return ["--source-dir", str(tmp / "empty")]


def _file(tmp: Path, name: str = "a-file") -> Path:
    (tmp / name).write_text("not a folder\n")
    return tmp / name


def _folder_of(tmp: Path, names: list[str]) -> Path:
    """A folder holding a small file under each of `names` (a folder picked by mistake for a model)."""
    folder = tmp / "picked"
    folder.mkdir()
    for name in names:
        (folder / name).write_text("{}\n")
    return folder


def _broken_modules(tmp: Path) -> list[str]:
    folder = copy_model(tmp / "model")
    (folder / "modules.json").write_text('[{"type": "sentence_transformers.models.Pooling", "path": "1_Pooling"}]')
    return [str(folder)]


#: id -> (arguments given the test's folder, what the one line must name)
CASES: dict[str, tuple[Callable[[Path], list[str]], tuple[str, ...]]] = {
    "empty-revision": (lambda t: ["--revision", ""], ("--revision is empty",)),
    "blank-revision": (lambda t: ["--revision", "   "], ("--revision is empty",)),
    "revision-with-newline": (lambda t: ["--revision", "sample\n1339"], ("--revision", "control character")),
    "empty-store": (lambda t: ["--store", ""], ("--store is empty",)),
    "store-missing": (lambda t: ["--store", str(t / "nope")], ("--store", "no such folder")),
    "store-a-file": (lambda t: ["--store", f"file://{_file(t)}"], ("--store", "no such folder")),
    "ftp-store": (lambda t: ["--store", "ftp://host/x"], ("unknown store scheme 'ftp'",)),
    "datasets-comma": (lambda t: ["--datasets", ","], ("--datasets ','", "names nothing")),
    "datasets-empty": (lambda t: ["--datasets", ""], ("--datasets is empty",)),
    "datasets-gap": (lambda t: ["--datasets", "SciFact,,SummEval"], ("--datasets", "empty name")),
    "datasets-twice": (lambda t: ["--datasets", "SciFact,SciFact"], ("--datasets names 'SciFact' twice",)),
    "datasets-unknown": (lambda t: ["--datasets", "Nope"], ("no dataset 'Nope'",)),
    "transformations-comma": (lambda t: ["--transformations", ",,"], ("--transformations", "names nothing")),
    "seeds-comma": (lambda t: ["--seeds", ","], ("--seeds", "names nothing")),
    "seeds-negative": (lambda t: ["--seeds", "-1"], ("--seeds must be integers",)),
    "seeds-2**70": (lambda t: ["--seeds", str(2**70)], ("--seeds must be integers",)),
    "seeds-float": (lambda t: ["--seeds", "1337.0"], ("--seeds must be integers",)),
    "batch-size-0": (lambda t: ["--batch-size", "0"], ("'--batch-size'", "range")),
    "batch-size-huge": (lambda t: ["--batch-size", str(10**9)], ("'--batch-size'", "range")),
    "batch-size-inf": (lambda t: ["--batch-size", "inf"], ("'--batch-size'", "not a valid integer")),
    "batch-size-nan": (lambda t: ["--batch-size", "nan"], ("'--batch-size'", "not a valid integer")),
    "device-gpu": (lambda t: ["--device", "gpu"], ("--device 'gpu'",)),
    "device-cuda-99": (lambda t: ["--device", "cuda:99"], ("--device cuda:99", "CUDA device(s)")),
    "protocol-typo": (lambda t: ["--protocol", "mtbe"], ("unknown protocol 'mtbe'",)),
    "on-error-unknown": (lambda t: ["--on-error", "ignore"], ("'--on-error'",)),
    "source-dir-missing": (lambda t: ["--source-dir", str(t / "nope")], ("--source-dir", "no such folder")),
    "source-dir-a-file": (lambda t: ["--source-dir", str(_file(t))], ("'--source-dir'", "is a file")),
    "source-dir-empty": (_empty_source, ("no dataset folders",)),
    "source-dir-with-revision": (lambda t: ["--source-dir", str(t), "--revision", "v1"], ("original data only",)),
    "cache-dir-under-a-file": (lambda t: ["--cache-dir", str(_file(t) / "cache")], ("--cache-dir", "is a file")),
    "model-missing": (lambda t: ["/no/such/model"], ("cannot load model '/no/such/model'", "no such local folder")),
    "model-a-file": (lambda t: [str(_file(t, "model.bin"))], ("is a file, not a model folder",)),
    "model-an-empty-folder": (lambda t: [str(_folder_of(t, []))], ("not a model folder", "modules.json")),
    "model-weights-and-tokenizer-only": (
        lambda t: [str(copy_model(t / "model", without=MODEL_MARKERS))],
        ("not a model folder", "config.json"),
    ),
    "model-without-tokenizer": (
        lambda t: [str(copy_model(t / "model", without=TOKENIZER_FILES))],
        ("no tokenizer files", "tokenizer.json", "vocab.txt"),
    ),
    "model-without-vocab": (
        lambda t: [str(copy_model(t / "model", without=("tokenizer.json", "vocab.txt")))],
        ("no tokenizer files",),
    ),
    "model-modules-without-transformer": (_broken_modules, ("modules.json names no Transformer module",)),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_refused_score_option(case: str, tmp_path: Path) -> None:
    make_args, needles = CASES[case]
    args = make_args(tmp_path)
    model = [] if args and not args[0].startswith("-") else [minilm_path()]
    out = tmp_path / "out"
    code, stdout, err = run(*model, *args, "--out", out, "--quiet")
    assert_one_line(code, err, *needles)
    assert stdout == "" and not out.exists() and partials(tmp_path) == []


@pytest.mark.parametrize(
    "command, needle",
    [
        (["revisions"], "no revision store at file://"),
        (["verify", "--revision", "v1"], "there is no store there"),
        (["--revision", "v1"], "no such folder"),
    ],
    ids=["revisions", "verify", "score"],
)
def test_refused_missing_local_store(command: list[str], needle: str, tmp_path: Path) -> None:
    """A store folder that does not exist is not an empty store: no silent empty listing."""
    out = ["--out", tmp_path / "out"] if command[0] == "--revision" else []  # the score command
    code, stdout, err = run(*command, "--store", tmp_path / "no-store", *out)
    assert_one_line(code, err, needle, str(tmp_path / "no-store"))
    assert stdout == "" and not (tmp_path / "no-store").exists() and not (tmp_path / "out").exists()


# Hypothesis: whatever the value, the outcome is a one-line refusal (the sample has no such
# dataset / revision, so no run reaches the model) and nothing is left behind.
_TEXT = st.text(min_size=0, max_size=40)
_FUZZ = settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _refused_leaving_nothing(*args: object) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        code, _, err = run(minilm_path(), *args, "--out", out, "--quiet")
        assert_one_line(code, err)
        assert not out.exists() and partials(Path(tmp)) == []


@_FUZZ
@given(revision=_TEXT)
def test_fuzz_revision(revision: str) -> None:
    _refused_leaving_nothing("--revision", revision)


@_FUZZ
@given(datasets=st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=12), max_size=4).map(",".join))
def test_fuzz_datasets(datasets: str) -> None:
    _refused_leaving_nothing("--datasets", datasets)


@_FUZZ
@given(
    batch=st.one_of(st.integers(-(2**70), 2**70).map(str), st.floats().map(str), _TEXT),
    seeds=st.one_of(st.none(), st.lists(st.integers(-(2**70), 2**70), max_size=3).map(lambda s: ",".join(map(str, s)))),
    device=st.one_of(st.sampled_from(["auto", "cpu", "cuda", "cuda:1", "mps"]), _TEXT),
)
def test_fuzz_numeric_options(batch: str, seeds: str | None, device: str) -> None:
    seed_args = [] if seeds is None else ["--seeds", seeds]
    _refused_leaving_nothing("--batch-size", batch, *seed_args, "--device", device, "--datasets", "NoSuchDataset")


@_FUZZ
@given(
    parts=st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=80).filter(
            lambda p: p not in (".", "..")
        ),
        min_size=1,
        max_size=4,
    ),
    existing_file=st.integers(0, 4),
)
def test_fuzz_out(parts: list[str], existing_file: int) -> None:
    """Any --out under a fresh folder, some parts of it an existing file: one line, nothing left."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if existing_file < len(parts):
            spot = root.joinpath(*parts[: existing_file + 1])
            try:
                spot.parent.mkdir(parents=True, exist_ok=True)
                spot.write_text("a file\n")
            except OSError:  # a name the file system refuses: then the run must refuse it too
                pass
        before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
        code, _, err = run(minilm_path(), "--out", root.joinpath(*parts), "--datasets", "NoSuchDataset", "--quiet")
        assert_one_line(code, err)
        assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if not p.is_dir()) == [
            p for p in before if not (root / p).is_dir()
        ]
        assert not any(p.name.startswith(".hteb-partial-") for p in root.rglob("*"))


@_FUZZ
@given(
    names=st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=40).filter(
            lambda n: n not in (".", "..", *MODEL_MARKERS)
        ),
        max_size=5,
        unique=True,
    ).map(lambda names: [*names, *(["tokenizer.json", "model.safetensors"] if len(names) % 2 else [])])
)
def test_fuzz_a_folder_without_a_model_is_refused_as_one(names: list[str]) -> None:
    """Any folder that holds neither modules.json nor config.json (whatever else, tokenizer and weights
    included) is named as not a model folder, before a file of it is read."""
    with tempfile.TemporaryDirectory() as tmp:
        try:
            folder = _folder_of(Path(tmp), names)
        except OSError:  # a name the file system refuses
            return
        code, _, err = run(folder, "--out", Path(tmp) / "out", "--quiet")
        assert_one_line(code, err, f"model {folder}: not a model folder")
        assert not (Path(tmp) / "out").exists() and partials(Path(tmp)) == []


def _path_parameters() -> list[tuple[str, str]]:
    """(command, option) of every path option of every hteb-score command, read off the CLI itself."""
    import click

    from hteb_score.cli.app import cli

    found = []
    for name, command in cli.commands.items():
        for param in command.params:
            if isinstance(param.type, click.Path) and isinstance(param, click.Option):
                found.append((name, param.opts[0]))
    return found


def test_every_path_parameter_is_a_given_path():
    """Path("") is ".": a path option that took "" wrote into the current folder (a card, an embedding cache).
    Every path parameter of every command, arguments too, is read by the type that refuses it."""
    import click

    from hteb_score.cli.app import cli
    from hteb_score.cli.options import GivenPath

    typed = [
        param for command in cli.commands.values() for param in command.params if isinstance(param.type, click.Path)
    ]
    assert len(typed) >= 18 and all(isinstance(param.type, GivenPath) for param in typed), typed


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.sampled_from(_path_parameters()), blank=st.sampled_from(["", " ", "\t", "  \t "]))
def test_an_empty_path_option_is_one_line_and_writes_nothing(tmp_path, monkeypatch, at, blank):
    command, option = at
    here = Path(tempfile.mkdtemp(dir=tmp_path))
    monkeypatch.chdir(here)
    args = [] if command == "score" else [command]
    code, _, err = run(*args, option, blank)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, (at, err)
    assert f"'{option}'" in err and "is empty" in err, (at, err)
    assert list(here.iterdir()) == [], (at, list(here.iterdir()))
