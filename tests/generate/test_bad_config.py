"""hteb-generate refuses a bad configuration before any work (issue 10, item 1): one line on stderr,
exit 2, no model loaded, nothing written. `validate` and the run (which validates first) refuse
alike, so a configuration that passes `validate` does not fail later for a reason it could see.

The seeds of the issue (2**70 passed `validate` and failed in pyarrow after 91 s), the store URIs
and labels that failed only after sealing, the null text that was a traceback after the model
loaded, and every numeric option out of range (hteb_generate/bounds.py).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stderr
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from fuzz import examples

from hteb_contract.revision import Revision, split_name
from hteb_contract.stores import open_store
from hteb_generate.bounds import CONFIG_BOUNDS, ENGINE_BOUNDS, INT64_MAX
from hteb_generate.setup.config import build_config
from cli_run import generate
from revision_factory import build_revision

ENTRY = "from hteb_generate.cli import main; main()"
CPU = os.cpu_count() or 1


def _generate_process(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def _tree(root: Path) -> list[tuple[str, int]]:
    """Every path under `root` with its size: what a refused command must leave as it was."""
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


def _assert_refused(done: subprocess.CompletedProcess, names: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    assert done.stderr.endswith("\n") and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: ") and names in done.stderr, done.stderr


def _bad_source(root: Path, shared: Path, name: str, table: str, row: int, edit) -> Path:
    """A copy of a real dataset of shared/data under `root`, with one row of `table` changed by `edit`."""
    target = root / "data"
    shutil.copytree(shared / name, target / name)
    path = target / name / f"{table}.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    edit(rows[row])
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return target


def _set(field: str, value):
    def edit(row: dict) -> None:
        row[field] = value

    return edit


def _set_element(field: str, index: int, value):
    def edit(row: dict) -> None:
        row[field][index] = value

    return edit


# -- options: (args, what the one line names) ---------------------------------------------------

SEEDS = {
    "seed-2**70": (["--seed", str(2**70)], f"--seed must be an integer from 0 to {INT64_MAX}, got {2**70}"),
    "seed-2**63": (["--seed", str(2**63)], f"got {2**63}"),
    "seed-negative": (["--seed=-1"], "--seed must be an integer from 0 to"),
    "seed-in-a-list": (["--seed", f"1,2,{2**64}"], f"got {2**64}"),
}

STORES = {
    "store-ftp": (["--store", "ftp://example.org/store"], "unknown store scheme 'ftp'"),
    "store-s3": (["--store", "s3://bucket/x"], "unknown store scheme 's3'"),
    "store-hf-no-owner": (["--store", "hf://bad"], "store 'hf://bad': expected hf://OWNER/NAME"),
    "store-hf-three-parts": (["--store", "hf://a/b/c"], "expected hf://OWNER/NAME"),
    "store-hf-empty": (["--store", "hf://"], "expected hf://OWNER/NAME"),
    "store-hf-double-dash": (["--store", "hf://owner/na--me"], "is not a Hugging Face repository id"),
    "store-hf-bad-char": (["--store", "hf://owner/na me"], "is not a Hugging Face repository id"),
    "store-file-empty": (["--store", "file://"], "store 'file://' names no folder"),
    "store-empty": (["--store", ""], "store '' names no folder"),
    "store-blank": (["--store", "  "], "names no folder"),
    "store-hf-without-slashes": (["--store", "hf:owner/name"], "looks like a URI without '//'"),
}

LABELS = {
    "label-parent-path": (["--label", "../../evil"], "label '../../evil' is not a revision label"),
    "label-slash": (["--label", "a/b"], "label 'a/b' is not"),
    "label-empty": (["--label", ""], "label '' is not"),
    "label-leading-dot": (["--label", ".hidden"], "label '.hidden' is not"),
    "label-space": (["--label", "my label"], "label 'my label' is not"),
    "label-tab": (["--label", "a\tb"], "label 'a\\tb' is not"),
    "label-newline": (["--label", "a\nb"], "label 'a\\nb' is not"),
    "label-double-dot": (["--label", "v1..2"], "label 'v1..2' is not"),
    "label-dot-lock": (["--label", "v1.lock"], "label 'v1.lock' is not"),
    "label-trailing-dot": (["--label", "v1."], "label 'v1.' is not"),
    "label-129-chars": (["--label", "a" * 129], "is not a revision label"),
    "label-non-ascii": (["--label", "révision"], "label 'révision' is not"),
}

NUMBERS = {
    "max-texts-0": (["--max-texts", "0"], "--max-texts must be an integer from 1 to"),
    "max-texts-negative": (["--max-texts", "-3"], "--max-texts must be an integer from 1 to"),
    "max-list-0": (["--max-list", "0"], "--max-list must be an integer from 1"),
    "sample-0": (["--sample", "0"], "--sample must be an integer from 1"),
    "max-tokens-0": (["--max-tokens", "0"], "--max-tokens must be an integer from 1"),
    "max-tokens-over-int64": (["--max-tokens", str(2**63)], "--max-tokens must be an integer from 1"),
    "max-tokens-ceiling-0": (["--max-tokens-ceiling", "0"], "--max-tokens-ceiling must be an integer from 1"),
    "max-attempts-0": (["--max-attempts", "0"], "--max-attempts must be an integer from 1"),
    "batch-size-0": (["--batch-size", "0"], "--batch-size must be an integer from 1"),
    "temperature-inf": (["--temperature", "inf"], "--temperature must be 0 or a number from 0.01 to 100, got inf"),
    "temperature-nan": (["--temperature", "nan"], "--temperature must be 0 or a number from 0.01 to 100, got nan"),
    "temperature-negative": (["--temperature", "-0.5"], "--temperature must be 0 or"),
    "temperature-below-0.01": (["--temperature", "1e-40"], "--temperature must be 0 or"),
    "temperature-above-100": (["--temperature", "1000"], "--temperature must be 0 or"),
    "retry-temperature-nan": (["--retry-temperature", "nan"], "--retry-temperature must be 0 or"),
    "retry-temperature-inf": (["--retry-temperature", "-inf"], "--retry-temperature must be 0 or"),
    "top-p-nan": (["--top-p", "nan"], "--top-p must be in (0, 1], got nan"),
    "top-p-0": (["--top-p", "0"], "--top-p must be in (0, 1], got 0.0"),
    "top-p-above-1": (["--top-p", "1.5"], "--top-p must be in (0, 1]"),
    "threads-0": (["--threads", "0"], f"--threads must be an integer from 1 to {CPU}, got 0"),
    "threads-negative": (["--threads", "-1"], "--threads must be an integer from 1"),
    "threads-above-cpus": (["--threads", str(CPU + 1)], f"--threads must be an integer from 1 to {CPU}"),
    "gpu-memory-nan": (
        ["--engine", "vllm", "--gpu-memory-utilization", "nan"],
        "--gpu-memory-utilization must be in (0, 1]",
    ),
    "gpu-memory-0": (
        ["--engine", "vllm", "--gpu-memory-utilization", "0"],
        "--gpu-memory-utilization must be in (0, 1]",
    ),
    "gpu-memory-above-1": (
        ["--engine", "vllm", "--gpu-memory-utilization", "1.01"],
        "--gpu-memory-utilization must be",
    ),
    "tensor-parallel-0": (
        ["--engine", "vllm", "--tensor-parallel-size", "0"],
        "--tensor-parallel-size must be an integer",
    ),
    "max-model-len-0": (["--engine", "vllm", "--max-model-len", "0"], "--max-model-len must be an integer from 1"),
    "max-tokens-over-the-context": (
        ["--engine", "vllm", "--max-tokens", "2048"],
        "--max-tokens (2048) leaves no room for a prompt in the 2048-token context",
    ),
    "max-tokens-over-max-model-len": (
        ["--engine", "vllm", "--max-model-len", "512", "--max-tokens", "600"],
        "--max-tokens (600) leaves no room for a prompt in the 512-token context",
    ),
}

OTHERS = {
    "datasets-only-commas": (["--datasets", ","], "--datasets ',' names nothing; leave it out for the default"),
    "transformations-only-commas": (["--transformations", ","], "--transformations ',' names nothing"),
    "cache-dir-empty": (["--cache-dir", ""], "--cache-dir '' is not a path"),
    "data-dir-blank": (["--data-dir", " "], "--data-dir ' ' is not a path"),
    "manifest-md-empty": (["--manifest-md", ""], "--manifest-md '' is not a path"),
    "default-label-too-long": (
        ["--seed", ",".join(str(2**62 + i) for i in range(8))],
        "label 'sample-card2-4611686018427387904-",
    ),
    "model-name-too-long": (["--model", "m" * 5000], "cannot use 'mmmm"),
    "dataset-name-too-long": (["--datasets", "d" * 5000], "File name too long"),
    "data-dir-name-too-long": (["--data-dir", "d" * 5000], "cannot use 'dddd"),
}

#: Lists hteb-score refuses (its options.names): the generator once ran them deduplicated or without the gap.
LISTS = {
    "seed-twice": (["--seed", "1,1"], "--seed names '1' twice"),
    "seed-gap": (["--seed", "1,,2"], "--seed '1,,2' has an empty name between commas"),
    "seed-blank": (["--seed", " "], "--seed is empty"),
    "datasets-twice": (["--datasets", "STSBenchmark, STSBenchmark"], "--datasets names 'STSBenchmark' twice"),
    "datasets-trailing-gap": (["--datasets", "STSBenchmark,,"], "--datasets 'STSBenchmark,,' has an empty name"),
    "transformations-gap": (["--transformations", "numerisation,,paraphrasing"], "has an empty name between commas"),
    "transformations-twice": (["--transformations", "numerisation,numerisation"], "names 'numerisation' twice"),
    "transformations-tab": (["--transformations", "numerisation\tparaphrasing"], "contains a control character"),
}

CASES = {**SEEDS, **STORES, **LABELS, **NUMBERS, **OTHERS, **LISTS}


@pytest.fixture
def base(tmp_path, shared_data) -> list[str]:
    """A valid cpu-profile configuration writing only under `tmp_path` (later options override)."""
    return [
        "--seed",
        "1339",
        "--profile",
        "cpu",
        "--datasets",
        "STSBenchmark",
        "--data-dir",
        str(shared_data),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--store",
        str(tmp_path / "store"),
        "--manifest-md",
        str(tmp_path / "MANIFEST.md"),
    ]


def test_the_base_configuration_passes(tmp_path, base):
    done = _generate_process("validate", *base, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("ok: "), done.stderr
    assert _tree(tmp_path) == []


@pytest.mark.parametrize("args, names", CASES.values(), ids=CASES.keys())
def test_refused_by_validate(tmp_path, base, args, names):
    done = generate("validate", *base, *args, cwd=tmp_path)
    _assert_refused(done, names)
    assert _tree(tmp_path) == []


#: The issue's cases that passed `validate` and failed only after generation: the run refuses them first.
RUN_CASES = {
    k: CASES[k]
    for k in (
        "seed-2**70",
        "store-ftp",
        "store-hf-no-owner",
        "store-file-empty",
        "label-parent-path",
        "max-texts-0",
        "temperature-inf",
        "seed-twice",
        "datasets-trailing-gap",
        "transformations-gap",
    )
}


@pytest.mark.parametrize("args, names", RUN_CASES.values(), ids=RUN_CASES.keys())
def test_refused_by_the_run_before_any_work(tmp_path, base, args, names):
    done = generate(*base, *args, cwd=tmp_path)
    _assert_refused(done, names)
    assert _tree(tmp_path) == []  # no cache, no call database, no staging folder: nothing started


# -- paths ------------------------------------------------------------------------------------------


def _blocker(tmp_path: Path) -> Path:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    return blocker


PATHS = {
    "store-under-a-file": (lambda t: ["--store", str(_blocker(t) / "store")], "store "),
    "store-is-a-file": (lambda t: ["--store", str(_blocker(t))], "store "),
    "file-store-under-a-file": (lambda t: ["--store", f"file://{_blocker(t)}/store"], "is not writable"),
    "cache-dir-under-a-file": (lambda t: ["--cache-dir", str(_blocker(t) / "cache")], "cache dir "),
    "manifest-md-a-folder": (lambda t: ["--manifest-md", str(t)], "is a folder, not a file"),
    "manifest-md-under-a-file": (lambda t: ["--manifest-md", str(_blocker(t) / "M.md")], "folder of --manifest-md"),
    "manifest-md-not-utf8": (lambda t: ["--manifest-md", str(_binary(t))], "is not readable UTF-8 text"),
    "cache-dir-name-too-long": (lambda t: ["--cache-dir", str(t / ("x" * 300))], "cache dir "),
}


def _binary(tmp_path: Path) -> Path:
    path = tmp_path / "MANIFEST.md"
    path.write_bytes(b"\xff\xfe\x00bad")
    return path


@pytest.mark.parametrize("make, names", PATHS.values(), ids=PATHS.keys())
def test_refused_path(tmp_path, base, make, names):
    args = make(tmp_path)
    before = _tree(tmp_path)
    _assert_refused(generate("validate", *base, *args, cwd=tmp_path), names)
    _assert_refused(generate(*base, *args, cwd=tmp_path), names)
    assert _tree(tmp_path) == before


def test_a_store_under_a_file_is_refused_only_when_publishing(tmp_path, base):
    """--no-publish writes nothing to the store: a store under a file is then only a name."""
    store = _blocker(tmp_path) / "store"
    refused = generate("validate", *base, "--store", str(store), cwd=tmp_path)
    assert refused.returncode == 2
    done = generate("validate", *base, "--store", str(store), "--no-publish", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# -- sources: validate reads the selected datasets as the run does ------------------------------------

SOURCES = {
    "null-sentence": (
        "STSBenchmark",
        "test",
        2,
        _set("sentence1", None),
        "test row 3: sentence1 must be a string, got None",
    ),
    "number-sentence": (
        "STSBenchmark",
        "test",
        0,
        _set("sentence2", 42),
        "test row 1: sentence2 must be a string, got 42",
    ),
    "list-sentence": (
        "STSBenchmark",
        "test",
        5,
        _set("sentence1", ["a", "b"]),
        "sentence1 must be a string, got ['a', 'b']",
    ),
    "null-summary": (
        "SummEval",
        "test",
        0,
        _set_element("machine_summaries", 1, None),
        "machine_summaries must be a list of strings",
    ),
    "summaries-not-a-list": (
        "SummEval",
        "test",
        0,
        _set("machine_summaries", "one summary"),
        "must be a list of strings, got 'one summary'",
    ),
    "null-classification-text": ("Banking77", "test", 3, _set("text", None), "text must be a string, got None"),
    "unsampled-row": (
        "STSBenchmark",
        "test",
        1000,
        _set("sentence1", None),
        "test row 1001: sentence1 must be a string",
    ),
}


@pytest.mark.parametrize("name, table, row, edit, names", SOURCES.values(), ids=SOURCES.keys())
def test_refused_source(tmp_path, shared_data, name, table, row, edit, names):
    data = _bad_source(tmp_path, shared_data, name, table, row, edit)
    before = _tree(tmp_path)
    args = [
        "--seed",
        "1",
        "--profile",
        "cpu",
        "--datasets",
        name,
        "--data-dir",
        str(data),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--store",
        str(tmp_path / "store"),
        "--manifest-md",
        str(tmp_path / "M.md"),
    ]
    for command in (["validate"], []):  # the run: before, this was a traceback after the model loaded
        done = generate(*command, *args, cwd=tmp_path)
        _assert_refused(done, names)
        assert str(data / name) in done.stderr  # the file's folder is named
    assert _tree(tmp_path) == before


# -- the other commands' numbers and paths -----------------------------------------------------------

OTHER_COMMANDS = {
    "plan-tokens-per-second-nan": (
        ["plan", "--tokens-per-second", "nan"],
        "--tokens-per-second must be a finite number above 0",
    ),
    "plan-tokens-per-second-inf": (
        ["plan", "--tokens-per-second", "inf"],
        "--tokens-per-second must be a finite number",
    ),
    "plan-tokens-per-second-0": (["plan", "--tokens-per-second", "0"], "--tokens-per-second must be a finite number"),
    "reproduce-tolerance-nan": (
        ["reproduce", "--parapluie-tolerance", "nan"],
        "--parapluie-tolerance must be a finite number of at least 0",
    ),
    "reproduce-tolerance-negative": (
        ["reproduce", "--rating-tolerance", "-1"],
        "--rating-tolerance must be a finite number of at least 0",
    ),
    "reproduce-store-ftp": (["reproduce", "--store", "ftp://x"], "unknown store scheme 'ftp'"),
    "reproduce-json-a-folder": (["reproduce", "--json", "."], "--json . is a folder, not a file"),
    "plan-seed-twice": (["plan", "--seed", "1,2,1"], "--seed names '1' twice"),
    "plan-datasets-gap": (["plan", "--datasets", "STSBenchmark,,"], "--datasets 'STSBenchmark,,' has an empty"),
}


@pytest.mark.parametrize("args, names", OTHER_COMMANDS.values(), ids=OTHER_COMMANDS.keys())
def test_refused_other_command(tmp_path, shared_data, args, names):
    command, rest = args[0], args[1:]
    if command == "plan":
        given = ["--seed", "1", "--profile", "cpu", "--data-dir", str(shared_data), *rest]
    else:
        sample = Path(__file__).resolve().parents[2] / "score" / "hteb_score" / "sample" / "store"
        given = ["--store", str(sample), "--revision", "sample-1339", "--candidate", str(tmp_path), *rest]
    _assert_refused(generate(command, *given, cwd=tmp_path), names)
    assert _tree(tmp_path) == []


# -- the seed range is the revision's -----------------------------------------------------------------


def test_the_largest_seed_is_written_and_read_back_and_the_next_is_not(tmp_path, shared_data):
    """2**63 - 1 is the largest seed an item file holds (int64); 2**63 fails in the writer, which is
    where a seed of 2**70 failed after generation before validate checked the range."""
    build_revision(tmp_path / "ok", shared_data, ["STSBenchmark"], rows=1, seeds=(INT64_MAX,))
    revision = Revision.open(tmp_path / "ok")
    assert {r.seed for r in revision.items("STSBenchmark", "paraphrasing", INT64_MAX)} == {INT64_MAX}
    with pytest.raises(OverflowError):
        build_revision(tmp_path / "over", shared_data, ["STSBenchmark"], rows=1, seeds=(INT64_MAX + 1,))


# -- fuzz: random values through the real validate entry point ----------------------------------------


def _validate(args: list[str]) -> tuple[int, str]:
    """`hteb-generate validate ARGS` in this process: (exit code, stderr). Any exception other than
    the CLI's own exit fails the test (a traceback); loading a model fails it too (conftest)."""
    done = generate("validate", *args, cwd=Path.cwd())
    return done.returncode, done.stderr


def _ok_or_one_line(code: int, stderr: str, names: str | None = None) -> bool:
    """The only outcomes allowed: exit 0 with nothing on stderr, or exit 2 with one line."""
    if code == 0:
        assert stderr == ""
        event("outcome: accepted")
        return True
    event("outcome: refused (one line, exit 2)")
    assert code == 2 and stderr.startswith("error: ") and stderr.count("\n") == 1, (code, stderr)
    if names is not None:
        assert names in stderr, stderr
    return False


FUZZ = settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture
def fuzz_base(tmp_path, shared_data) -> list[str]:
    return [
        "--profile",
        "cpu",
        "--datasets",
        "STSBenchmark",
        "--data-dir",
        str(shared_data),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--store",
        str(tmp_path / "store"),
        "--manifest-md",
        str(tmp_path / "MANIFEST.md"),
    ]


@FUZZ
@given(seeds=st.lists(st.integers(min_value=-(2**80), max_value=2**80), min_size=1, max_size=3))
def test_fuzz_seeds(tmp_path, fuzz_base, seeds):
    code, stderr = _validate([f"--seed={','.join(map(str, seeds))}", *fuzz_base])
    accepted = _ok_or_one_line(code, stderr, "--seed")
    assert accepted == (all(0 <= s <= INT64_MAX for s in seeds) and len(set(seeds)) == len(seeds))
    assert _tree(tmp_path) == []


LABEL_CHARS = st.characters(blacklist_categories=("Cs",), blacklist_characters="\0")


@FUZZ
@given(
    label=st.one_of(
        st.text(LABEL_CHARS, max_size=140), st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,130}", fullmatch=True)
    )
)
def test_fuzz_labels(tmp_path, fuzz_base, label):
    """Accepted exactly when the stated rule holds (ASCII letters, digits, '._-', first a letter or
    digit, at most 128, no '..', no trailing '.' or '.lock')."""
    code, stderr = _validate(["--seed", "1", *fuzz_base, f"--label={label}"])
    accepted = _ok_or_one_line(code, stderr, "is not a revision label")
    rule = (
        re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", label) is not None
        and ".." not in label
        and not label.endswith((".", ".lock"))
    )
    assert accepted == rule
    assert _tree(tmp_path) == []


@FUZZ
@given(
    uri=st.one_of(
        st.text(LABEL_CHARS, max_size=40),
        st.builds(
            lambda scheme, rest: f"{scheme}://{rest}",
            st.sampled_from(["file", "hf", "ftp", "s3", "HF", ""]),
            st.text(LABEL_CHARS, max_size=40),
        ),
        st.builds(
            lambda owner, name: f"hf://{owner}/{name}",
            st.from_regex(r"[A-Za-z0-9._-]{0,12}", fullmatch=True),
            st.from_regex(r"[A-Za-z0-9._-]{0,12}", fullmatch=True),
        ),
    )
)
def test_fuzz_store_uris(tmp_path, fuzz_base, uri):
    """A store only named (--no-publish: the writability of a random path is not the question here)."""
    code, stderr = _validate(["--seed", "1", *fuzz_base, f"--store={uri}", "--no-publish"])
    if not _ok_or_one_line(code, stderr, "store"):
        assert uri.split("://")[0] != "file" or not uri[len("file://") :].strip()
    assert _tree(tmp_path) == []


def _number_text(value: int | float) -> str:
    return repr(value) if isinstance(value, float) else str(value)


NUMBER_OPTIONS = {
    **{name: option for name, (option, _) in CONFIG_BOUNDS.items()},
    **{name: option for name, (option, _) in ENGINE_BOUNDS.items()},
}
VLLM_ONLY = {"tensor_parallel_size", "gpu_memory_utilization", "max_model_len"}


@FUZZ
@given(
    name=st.sampled_from(sorted(NUMBER_OPTIONS)),
    value=st.one_of(st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True, allow_infinity=True)),
)
def test_fuzz_numeric_options(tmp_path, fuzz_base, name, value):
    """Every numeric option with random integers and floats (NaN, inf): OK, or one line naming it
    (an integer option given a float is click's usage error: exit 2, one line too)."""
    option = NUMBER_OPTIONS[name]
    engine = ["--engine", "vllm"] if name in VLLM_ONLY else []
    code, stderr = _validate(["--seed", "1", *fuzz_base, *engine, f"{option}={_number_text(value)}"])
    if not _ok_or_one_line(code, stderr):
        assert option in stderr or "leaves no room" in stderr, stderr
    assert _tree(tmp_path) == []


@FUZZ
@given(
    seeds=st.lists(st.one_of(st.integers(0, INT64_MAX), st.integers(-5, 2**64)), min_size=1, max_size=3),
    label=st.one_of(
        st.none(), st.text(LABEL_CHARS, max_size=20), st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,20}", fullmatch=True)
    ),
    store=st.sampled_from(["hf://o/n", "hf://bad", "file://", "ftp://x", "store", "file://store2", "hf://o/n--x"]),
    temperature=st.one_of(st.just(0.0), st.floats(0.01, 100), st.floats(allow_nan=True, allow_infinity=True)),
    max_tokens=st.one_of(st.integers(1, 4096), st.integers(-2, 2**64)),
)
def test_fuzz_configurations(tmp_path, fuzz_base, seeds, label, store, temperature, max_tokens):
    """Options together: a configuration `validate` accepts holds everything the run needs later
    (int64 seeds and max_tokens, Hub split names, a label file inside the store's labels folder, a
    store that opens); one it refuses is one line."""
    args = [
        f"--seed={','.join(map(str, seeds))}",
        *fuzz_base,
        f"--store={store}",
        "--no-publish",
        f"--temperature={temperature!r}",
        f"--max-tokens={max_tokens}",
        "--max-tokens-ceiling=" + str(2**63 - 1),
        *([f"--label={label}"] if label is not None else []),
    ]
    code, stderr = _validate(args)
    if _ok_or_one_line(code, stderr):
        overrides = {
            "datasets": "STSBenchmark",
            "data_dir": fuzz_base[5],
            "cache_dir": fuzz_base[7],
            "store": store,
            "publish": False,
            "temperature": temperature,
            "max_tokens": max_tokens,
            "max_tokens_ceiling": 2**63 - 1,
            "label": label,
        }
        config = build_config(seed=",".join(map(str, seeds)), profile="cpu", overrides=overrides)
        pa.array([*config.seeds, config.max_tokens, config.max_tokens_ceiling], pa.int64())
        assert all(re.fullmatch(r"\w+", split_name("paraphrasing", s)) for s in config.seeds)
        labels = tmp_path / "labels"
        assert (labels / f"{config.label}.json").resolve().parent == labels.resolve()
        open_store(config.store)
    assert _tree(tmp_path) == []


# -- outputs the OS refuses though the checks' os.access allows them ----------------------------------

#: Folders that take no new file, root's included: os.access says yes to root there, so the configuration's
#: checks passed, and a run found out only when it wrote MANIFEST.md after publishing.
NO_NEW_FILES = [Path(p) for p in ("/proc", "/sys", "/sys/kernel") if Path(p).is_dir()]
UNWRITTEN = {
    "--manifest-md": lambda folder: ["--manifest-md", str(folder / "MANIFEST.md")],
    "--store": lambda folder: ["--store", str(folder / "store")],
}
SAMPLE_STORE = Path(__file__).resolve().parents[2] / "score" / "hteb_score" / "sample" / "store"


def _refused_before_writing(done: subprocess.CompletedProcess, path: Path) -> None:
    """One line naming `path`, from a check made before any work (as root, the write test; else os.access)."""
    _assert_refused(done, str(path))
    assert "cannot write there" in done.stderr or "is not writable" in done.stderr, done.stderr


@pytest.mark.skipif(not NO_NEW_FILES, reason="no /proc or /sys here")
@FUZZ
@given(
    option=st.sampled_from(sorted(UNWRITTEN)),
    root=st.sampled_from(NO_NEW_FILES),
    below=st.lists(st.from_regex(r"hteb-[a-z0-9]{1,8}", fullmatch=True), max_size=2),
)
def test_fuzz_refused_output_the_os_refuses(tmp_path, base, option, root, below):
    """A publishing run's last outputs are written to before any work: one line, no cache made, nothing
    published (before, the revision was published, then its MANIFEST.md row was a traceback)."""
    folder = root.joinpath(*below)
    noise = ["--profile", "noise", "--transformations", "numerisation", "--sample", "2"]
    _refused_before_writing(generate(*base, *noise, *UNWRITTEN[option](folder), cwd=tmp_path), folder)
    assert _tree(tmp_path) == []


@pytest.mark.skipif(not NO_NEW_FILES, reason="no /proc or /sys here")
@pytest.mark.parametrize("command", ["reproduce", "remake"])
def test_refused_output_of_another_command_the_os_refuses(tmp_path, command):
    """`reproduce --json` and `remake`'s store are written after the regeneration: refused before it
    (reproduce compares an empty candidate, remake a folder that is not there: both refused later)."""
    out = NO_NEW_FILES[0] / "hteb-out"
    args = {
        "reproduce": ["--store", str(SAMPLE_STORE), "--revision", "sample-1339", "--candidate", str(tmp_path)],
        "remake": [str(tmp_path / "published"), "--store", str(out)],
    }[command]
    json = ["--json", str(out / "r.json")] if command == "reproduce" else []
    _refused_before_writing(generate(command, *args, *json, cwd=tmp_path), out)
    assert _tree(tmp_path) == []


# -- lists: hteb-score's rules (its options.names) -----------------------------------------------------

#: Names each list option takes, well-formed, beside the gaps and blanks both CLIs refuse.
LIST_NAMES = {
    "--seed": ["1", "2", "01"],
    "--datasets": ["STSBenchmark", "NoSuchDataset"],
    "--transformations": ["numerisation", "paraphrasing"],
}
#: The scorer's command line around each list (one that refuses cheaply once the list passes).
SCORER_LISTS = {
    "--seed": lambda value: ["score", "m", "--source-dir", "/nonexistent", f"--seeds={value}"],
    "--datasets": lambda value: ["score", "m", "--preset", "minimal", f"--datasets={value}"],
    "--transformations": lambda value: ["score", "m", "--source-dir", "/nonexistent", f"--transformations={value}"],
}
LIST_REFUSALS = (
    "is empty; leave it out",
    "contains a control character",
    "names nothing",
    "empty name between",
    "twice",
)


def _list_refusal(stderr: str, prefix: str) -> str | None:
    """The one line's message when it refuses a list's shape (the scorer's --seeds read as --seed), else None."""
    message = stderr.removeprefix(prefix).rstrip("\n").replace("--seeds", "--seed")
    return message if any(r in message for r in LIST_REFUSALS) else None


@st.composite
def _lists(draw: st.DrawFn) -> tuple[str, str]:
    """(option, value): names, repeats, empty and blank names, white space around them."""
    option = draw(st.sampled_from(sorted(LIST_NAMES)))
    names = st.sampled_from([*LIST_NAMES[option], "", " ", "\t", "\u00a0"])
    space = st.sampled_from(["", " ", "  "])
    items = draw(st.lists(st.tuples(space, names, space), min_size=1, max_size=4))
    return option, ",".join("".join(item) for item in items)


@FUZZ
@given(given_list=_lists())
def test_fuzz_lists_are_refused_as_hteb_score_refuses(tmp_path, fuzz_base, given_list):
    """The same list refused by both CLIs, in the same one line, or by neither for its shape."""
    from hteb_score.cli.app import main as score

    option, value = given_list
    code, stderr = _validate(["--seed", "1", *fuzz_base, f"{option}={value}"])
    _ok_or_one_line(code, stderr)
    with redirect_stderr(io.StringIO()) as scored:
        score(SCORER_LISTS[option](value))
    ours, theirs = _list_refusal(stderr, "error: "), _list_refusal(scored.getvalue(), "hteb-score: error: ")
    assert ours == theirs, (stderr, scored.getvalue())
    event(f"list refused: {ours is not None}")
    assert _tree(tmp_path) == []
