"""`hteb-generate`: bad configuration exits non-zero with one line and writes nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import generate

ENTRY = "from hteb_generate.cli import main; main()"


def test_the_console_script_runs_in_a_fresh_interpreter(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, "--seed", "1339", "--datasets", "STSBenchmrk"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("error: unknown dataset 'STSBenchmrk'"), done.stderr


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*"))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--datasets", "STSBenchmrk"], "unknown dataset 'STSBenchmrk' (did you mean 'STSBenchmark'?)"),
        (["--transformations", "paraphrase"], "unknown transformation 'paraphrase' (did you mean 'paraphrasing'?)"),
        (["--model", "gpt-17"], "unknown model 'gpt-17'"),
        (["--engine", "llamacpp"], "unknown engine 'llamacpp'"),
        (["--prompt-set", "fancy"], "unknown prompt set 'fancy'"),
        (["--top-p", "0"], "--top-p must be in (0, 1]"),
        (["--engine", "vllm", "--model", "smollm2", "--threads", "2"], "engine 'vllm' does not take option 'threads'"),
        (["--tensor-parallel-size", "2"], "engine 'transformers' does not take option 'tensor_parallel_size'"),
        (["validate", "--engine", "vllm", "--threads", "2"], "engine 'vllm' does not take option 'threads'"),
        (
            ["validate", "--engine", "transformers", "--max-model-len", "512"],
            "engine 'transformers' does not take option 'max_model_len'",
        ),
    ],
)
def test_bad_config_is_one_line_exit_2_and_writes_nothing(tmp_path, shared_data, args, message):
    cache, store = tmp_path / "cache", tmp_path / "store"
    command, args = (args[:1], args[1:]) if args[0] == "validate" else ([], args)
    done = generate(
        *command,
        "--seed",
        "1339",
        "--profile",
        "cpu",
        "--cache-dir",
        str(cache),
        "--store",
        str(store),
        "--data-dir",
        str(shared_data),
        *args,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and message in done.stderr, done.stderr
    assert _files(tmp_path) == []


def test_seed_must_be_integers(tmp_path, shared_data):
    done = generate("--seed", "13x9", "--profile", "cpu", cwd=tmp_path)
    assert done.returncode == 2 and "--seed must be an integer" in done.stderr
    assert (
        generate(
            "validate",
            "--seed",
            "1337,1338",
            "--profile",
            "cpu",
            "--cache-dir",
            str(tmp_path / "c"),
            "--data-dir",
            str(shared_data),
            cwd=tmp_path,
        ).returncode
        == 0
    )


def test_unwritable_store_is_refused_before_any_work(tmp_path, shared_data):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    done = generate(
        "--seed",
        "1339",
        "--profile",
        "cpu",
        "--store",
        str(blocker / "store"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--data-dir",
        str(shared_data),
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "is not writable" in done.stderr and done.stderr.count("\n") == 1
    assert _files(tmp_path) == [blocker]


def test_validate_reports_the_run_without_running_it(tmp_path, shared_data):
    done = generate(
        "validate",
        "--seed",
        "1339",
        "--profile",
        "cpu",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--data-dir",
        str(shared_data),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "8 datasets x 8 transformations" in done.stdout and "label sample-card2-1339" in done.stdout
    assert "store file://.hteb/store;" in done.stdout  # the default store: under the working directory
    assert _files(tmp_path) == []


def test_data_dir_defaults_to_the_environment_then_shared_data_beside_the_working_directory(tmp_path, shared_data):
    (tmp_path / "repo").mkdir()
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "data").symlink_to(shared_data)
    validate = ("validate", "--seed", "1", "--profile", "cpu", "--cache-dir", str(tmp_path / "c"))
    done = generate(*validate, cwd=tmp_path / "repo", env={"HTEB_DATA_DIR": ""})
    assert done.returncode == 0, done.stderr
    elsewhere = generate(*validate, cwd=tmp_path, env={"HTEB_DATA_DIR": ""})
    assert elsewhere.returncode == 2 and f"data folder {Path('..') / 'shared' / 'data'} lacks" in elsewhere.stderr
    from_env = generate(*validate, cwd=tmp_path, env={"HTEB_DATA_DIR": str(shared_data)})
    assert from_env.returncode == 0, from_env.stderr


def test_local_data_dir_without_the_datasets_is_refused(tmp_path):
    done = generate(
        "validate",
        "--seed",
        "1",
        "--profile",
        "cpu",
        "--data-dir",
        str(tmp_path),
        "--cache-dir",
        str(tmp_path / "c"),
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "lacks" in done.stderr


@pytest.mark.slow
def test_doctor_says_in_one_line_what_the_run_lacks(tmp_path):
    done = generate(
        "doctor", "--profile", "cpu", "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "s"), cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.startswith("ok: ")
        and done.stdout.count("\n") == 1
        and "smollm2 as generator and judge" in done.stdout
    )
    if shutil.which("nvidia-smi") is None:  # this machine: the gpu profile (doctor, validate, run) stops at once
        for command in (["doctor"], ["validate", "--seed", "1339"], ["--seed", "1339"]):
            refused = generate(
                *command, "--cache-dir", str(tmp_path / "c"), "--store", str(tmp_path / "s"), cwd=tmp_path
            )
            assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
            assert refused.stderr.startswith("error: no NVIDIA GPU (nvidia-smi not found): the gpu profile needs one")
        assert _files(tmp_path) == []


def test_a_ceiling_below_max_tokens_is_refused(tmp_path, shared_data):
    done = generate(
        "validate",
        "--seed",
        "1",
        "--profile",
        "cpu",
        "--max-tokens",
        "64",
        "--max-tokens-ceiling",
        "32",
        "--data-dir",
        str(shared_data),
        "--cache-dir",
        str(tmp_path / "c"),
        cwd=tmp_path,
    )
    assert done.returncode == 2 and "--max-tokens-ceiling (32) must be at least --max-tokens (64)" in done.stderr


def test_nothing_is_written_into_installed_packages(tmp_path, shared_data):
    """A store or MANIFEST.md inside site-packages (where a non-editable install puts the bundled sample
    store) is a one-line refusal before any work."""
    import sysconfig

    installed = Path(sysconfig.get_paths()["purelib"]) / "hteb_score" / "sample" / "store"
    for option, path, what in (
        ("--store", installed, "store"),
        ("--manifest-md", installed.parent / "MANIFEST.md", "--manifest-md"),
    ):
        done = generate(
            "validate",
            "--seed",
            "1339",
            "--profile",
            "cpu",
            "--cache-dir",
            str(tmp_path / "c"),
            "--data-dir",
            str(shared_data),
            option,
            str(path),
            cwd=tmp_path,
        )
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert f"{what} {path} is inside the installed packages" in done.stderr
    assert _files(tmp_path) == []


def test_manifest_md_is_the_repositorys_or_none_for_an_installed_package(tmp_path):
    """Run from its repository, hteb-generate updates the repository's MANIFEST.md whatever the working
    folder; the same package installed (copied into a site-packages-like folder) updates none."""
    from hteb_generate.setup.config import default_manifest_md

    repo = Path(__file__).resolve().parents[2]
    assert default_manifest_md() == str(repo / "MANIFEST.md")
    site = tmp_path / "lib" / "site-packages"
    shutil.copytree(
        repo / "generate" / "hteb_generate", site / "hteb_generate", ignore=shutil.ignore_patterns("__pycache__")
    )
    probe = "import hteb_generate.setup.config as c; print(c.__file__); print(c.default_manifest_md())"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(repo / "schemas")])},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(site / "hteb_generate" / "setup" / "config.py"), "None"]
