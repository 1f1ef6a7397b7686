"""A run of work units (several MODEL_IDs, or --ray-address) refuses bad input in one line before
anything is written: Ray missing, a cluster that does not answer, options that apply to one model,
an output folder of something else; and its run folder resumes only a run of the same settings,
keeping only whole parts of this hteb-score. No model loads here."""

from __future__ import annotations

import json
import random
import sys

import pytest

from hteb_contract.errors import HtebError
from hteb_score.scoring.parts import PART_FILE
from hteb_score.scoring.run_folder import PARTS, RUN_FILE, RunFolder
from hteb_score.scoring.unit_scorer import WorkUnit
from models import minilm_path
from ray_cluster import free_ports
from refusal import assert_one_line, copy_model, run, snapshot
from scored_parts import another_release, scored_part, with_identity

PLAN = ("--datasets", "STSBenchmark", "--quiet")


def test_ray_missing_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as without the extra
    code, _, err = run(*PLAN, "--out", tmp_path / "out", "--ray-address", "local")
    assert_one_line(code, err, "--ray-address needs Ray: pip install 'hteb-score[ray]'")
    assert snapshot(tmp_path / "out") == {}


@pytest.mark.parametrize(
    "address, needle",
    [
        ("127.0.0.1:{port}", "cannot reach the Ray cluster at '127.0.0.1:{port}': Connection refused"),
        ("no-port-here", "--ray-address 'no-port-here': expected local, auto or HOST:PORT"),
    ],
)
def test_a_cluster_that_does_not_answer_is_one_line(tmp_path, address, needle):
    pytest.importorskip("ray")
    port = free_ports(1)[0]
    code, _, err = run(*PLAN, "--out", tmp_path / "out", "--ray-address", address.format(port=port))
    assert_one_line(code, err, needle.format(port=port))
    assert snapshot(tmp_path / "out") == {}


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> list[str]:
    return [minilm_path(), str(copy_model(tmp_path_factory.mktemp("models") / "minilm-b"))]


@pytest.mark.parametrize(
    "extra, needle",
    [
        (("--ray-workers", "2"), "--ray-workers and --ray-threads size the workers of --ray-address"),
        (("--part", "STSBenchmark"), "--part scores one work unit of one model"),
        (("--model-name", "m"), "--model-revision and --model-name apply to one model"),
    ],
)
def test_options_of_one_model_or_of_ray_are_refused(two_models, tmp_path, extra, needle):
    code, _, err = run(*two_models, *PLAN, "--out", tmp_path / "out", *extra)
    assert_one_line(code, err, needle)
    assert snapshot(tmp_path / "out") == {}


def test_a_model_given_twice_is_refused(two_models, tmp_path):
    code, _, err = run(two_models[0], two_models[0], *PLAN, "--out", tmp_path / "out")
    assert_one_line(code, err, f"MODEL_ID {two_models[0]} is given twice")


def test_a_folder_of_something_else_is_refused(two_models, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    code, _, err = run(*two_models, *PLAN, "--out", tmp_path / "out")
    assert_one_line(code, err, f"--out {tmp_path / 'out'} is a non-empty folder without {RUN_FILE}")
    assert snapshot(tmp_path / "out") == {"notes.txt": b"mine"}


def test_a_run_folder_resumes_only_a_run_of_the_same_settings(tmp_path):
    with RunFolder.held(tmp_path, {"models": ["a"], "batch_size": 32}, overwrite=False) as folder:
        (folder.path / PARTS / "a").mkdir(parents=True)
    with RunFolder.held(tmp_path, {"models": ["a"], "batch_size": 32}, overwrite=False):
        assert (tmp_path / PARTS / "a").is_dir()  # the same command: resumed
    with pytest.raises(
        HtebError,
        match=r"holds a run of other settings \(settings.batch_size: 32 vs 64\); run "
        "the same command to resume it, pass --overwrite",
    ):
        with RunFolder.held(tmp_path, {"models": ["a"], "batch_size": 64}, overwrite=False):
            pass
    (tmp_path / PARTS / "a").mkdir(parents=True, exist_ok=True)
    with RunFolder.held(tmp_path, {"models": ["a"], "batch_size": 64}, overwrite=True):
        assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [RUN_FILE]  # started again
    assert json.loads((tmp_path / RUN_FILE).read_text())["settings"]["batch_size"] == 64
    (tmp_path / "a").mkdir()  # a model's card folder
    with RunFolder.held(tmp_path, {"models": ["a"], "batch_size": 64}, overwrite=True):
        assert not (tmp_path / "a").exists()  # the same settings, --overwrite: started again all the same


def test_only_a_whole_part_of_this_hteb_score_and_its_unit_is_kept(tmp_path):
    unit = WorkUnit("hashed-bow", "STSBenchmark", None)
    other = WorkUnit("hashed-bow", "SciFact", None)
    part = scored_part(["STSBenchmark"])
    with RunFolder.held(tmp_path, {}, overwrite=False) as folder:
        assert folder.kept(unit) is None
        folder.keep(unit, part)
        assert folder.kept(unit).to_json() == part.to_json()
        folder.keep(other, part)  # a part of another dataset where SciFact's belongs
        assert folder.kept(other) is None
        folder.keep(unit, with_identity(part, hteb_score_version="0.0.0"))
        assert folder.kept(unit) is None
        path = folder.part_folder(unit) / PART_FILE
        path.write_text(path.read_text()[:100])  # cut short
        assert folder.kept(unit) is None


@pytest.mark.parametrize("swap", ["part files", "folders"])
def test_parts_swapped_between_models_are_refused_on_resume(tmp_path, swap):
    """Each model's card must come from its own results: a part moved to another model's place is refused."""
    a, b = WorkUnit("model-a", "STSBenchmark", None), WorkUnit("model-b", "STSBenchmark", None)
    part = scored_part(["STSBenchmark"])
    other = with_identity(part, model={**part.identity.model, "identity": "sha256:" + "b" * 64})
    with RunFolder.held(tmp_path, {}, overwrite=False) as folder:
        folder.keep(a, part)
        folder.keep(b, other)
        first, second = folder.part_folder(a), folder.part_folder(b)
        if swap == "part files":
            first, second = first / PART_FILE, second / PART_FILE
        first.rename(tmp_path / "moved")
        second.rename(first)
        (tmp_path / "moved").rename(second)
        for unit in (a, b):
            with pytest.raises(
                HtebError,
                match=f"holds a part this run did not keep for {unit.model} on "
                r"STSBenchmark \((model|part_sha256): .*\): swapped or edited",
            ):
                folder.kept(unit)


def _other_packages(seed: int) -> tuple[str, str]:
    """An installed package of the run's list and a generated release of it that is not the installed one."""
    from hteb_score.scoring.parts import package_versions

    rng = random.Random(seed)
    here = package_versions()
    name = rng.choice(sorted(here))
    return name, another_release(rng, here[name])


@pytest.mark.parametrize("seed", range(3))
def test_a_part_kept_under_other_package_versions_is_scored_again_and_the_run_ends_as_before(tmp_path, seed):
    """A run resumed on a machine whose install took another release: the parts kept under the old versions would
    not merge with the units scored now (merge refuses them, at the end), so they are scored again, and the
    cards are the ones the run made before."""
    command = ("hteb:random", "hteb:constant?dim=8", "--datasets", "STSBenchmark,SciFact", "--quiet")
    out = tmp_path / "out"
    code, _, err = run(*command, "--out", out)
    assert code == 0, err
    cards = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/result_card.json")}
    name, version = _other_packages(seed)
    with RunFolder.held(out, json.loads((out / RUN_FILE).read_text())["settings"], overwrite=False) as folder:
        model = sorted(p.name for p in (out / PARTS).iterdir())[seed % 2]
        unit = WorkUnit(model, "SciFact", None)
        part = folder.kept(unit)
        older = {**part.identity.package_versions, name: version}
        folder.keep(unit, with_identity(part, package_versions=older))
    code, _, err = run(*command, "--out", out)
    assert code == 0, err
    assert "1 kept from an earlier run" not in err and "(1 kept under other package versions: scored again)" in err
    again = {p.parent.name: json.loads(p.read_text()) for p in out.glob("*/result_card.json")}
    for card in (*cards.values(), *again.values()):
        card.pop("created", None), card.pop("timings", None)
    assert again == cards
