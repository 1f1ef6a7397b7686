"""The unit-times table reads a round's work units wherever they are: in the tree, and for each model whose parts
left it, at the commit the round's `parts-at` names (report/site/parts_at.py). Made on a small git repository
of real committed parts: the table is the same before and after they leave, a number typed by hand into a left
model's column fails the check, and a clone without that commit is a one-line error, never a table with models
missing."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest
from findings_parts import part as round_part

from hteb_score.report.site.findings import parts_of, unit_times

ROUND = "noise2-1339-heldout"
MODELS = ("all-MiniLM-L6-v2", "random")
DATASETS = ("STS12", "STS13", "TwitterSemEval2015")
MARKER = "<!-- hteb:table unit-times findings/r/parts -->\n<!-- /hteb:table -->\n"


def git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    return subprocess.run(command, cwd=repo, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose round `findings/r` holds two models' committed parts, and its page."""
    repo = tmp_path / "repo"
    for model in MODELS:
        (repo / "findings" / "r" / "parts" / model).mkdir(parents=True)
        for dataset in DATASETS:
            shutil.copy(round_part(ROUND, model, dataset), repo / "findings" / "r" / "parts" / model)
    (repo / "findings.md").write_text(MARKER, encoding="utf-8")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the round's parts")
    return repo


def leave(repo: Path, *models: str) -> str:
    """`models`' parts leave the tree, the round's parts-at naming the commit that held them; that commit."""
    held = git(repo, "rev-parse", "HEAD")
    (repo / "findings" / "r" / "parts-at").write_text(held + "\n", encoding="utf-8")
    for model in models:
        git(repo, "rm", "-r", "-q", f"findings/r/parts/{model}")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "the parts leave the tree")
    return held


def _refused(code: int, out: str, err: str, *needles: str) -> None:
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("hteb-score: error: "), err
    assert "Traceback" not in err and all(n in err for n in needles), err


@pytest.mark.parametrize("gone", [MODELS[:1], MODELS[1:], MODELS])
def test_the_table_is_the_same_whichever_models_parts_left_the_tree(repo, run_cli, gone):
    parts = repo / "findings" / "r" / "parts"
    before = parts_of(parts)
    assert run_cli("tables", repo / "findings.md")[0] == 0
    page = (repo / "findings.md").read_text(encoding="utf-8")
    leave(repo, *gone)
    assert sorted(p.name for p in parts.glob("*/")) == sorted(set(MODELS) - set(gone))
    after = parts_of(parts)
    assert list(after) == list(before) == list(MODELS)
    assert unit_times(after) == unit_times(before)
    assert all(len(after[m]) == len(DATASETS) for m in MODELS)
    assert run_cli("tables", repo / "findings.md", "--check")[0] == 0
    assert (repo / "findings.md").read_text(encoding="utf-8") == page


def test_a_number_typed_into_a_left_models_column_fails_the_check(repo, run_cli):
    assert run_cli("tables", repo / "findings.md")[0] == 0
    leave(repo, MODELS[0])
    page = (repo / "findings.md").read_text(encoding="utf-8")
    row = next(line for line in page.splitlines() if line.startswith("| STS13 |"))
    typed = row.replace(row.split(" | ")[1], "0.0", 1)
    assert typed != row
    (repo / "findings.md").write_text(page.replace(row, typed), encoding="utf-8")
    code, _, err = run_cli("tables", repo / "findings.md", "--check")
    assert code == 1 and "tables differ from their cards" in err
    assert run_cli("tables", repo / "findings.md")[0] == 0
    assert (repo / "findings.md").read_text(encoding="utf-8") == page


def test_a_shallow_clone_without_the_commit_is_a_one_line_error(repo, run_cli, tmp_path):
    held = leave(repo, MODELS[0])
    shallow = tmp_path / "shallow"
    subprocess.run(["git", "clone", "-q", "--depth", "1", repo.as_uri(), str(shallow)], check=True)
    _refused(*run_cli("tables", shallow / "findings.md"), f"commit {held[:12]}", "is not in this clone")
    assert (shallow / "findings.md").read_text(encoding="utf-8") == MARKER  # nothing half-written


def _commit_like(seed: int) -> str:
    return f"{random.Random(seed).getrandbits(160):040x}"


@pytest.mark.parametrize(
    ("written", "needle"),
    [
        *((_commit_like(seed), "is not in this clone") for seed in range(3)),  # no such commit here
        ("HEAD", "is not a commit (40 hex digits)"),
        ("", "is not a commit (40 hex digits)"),
        (_commit_like(9)[:12], "is not a commit (40 hex digits)"),
        (_commit_like(10).upper(), "is not a commit (40 hex digits)"),
    ],
)
def test_a_parts_at_that_names_no_commit_here_is_refused_in_one_line(repo, run_cli, written, needle):
    leave(repo, MODELS[0])
    (repo / "findings" / "r" / "parts-at").write_text(written + "\n", encoding="utf-8")
    _refused(*run_cli("tables", repo / "findings.md"), str(Path("findings") / "r" / "parts-at"), needle)


def test_a_round_copied_out_of_its_repository_is_refused_in_one_line(repo, run_cli, tmp_path):
    leave(repo, MODELS[0])
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"))
    _refused(*run_cli("tables", copy / "findings.md"), "parts-at: git rev-parse failed")


def test_a_damaged_part_at_the_commit_is_named_by_commit_and_path(repo, run_cli):
    path = repo / "findings" / "r" / "parts" / MODELS[0] / "STS13.hteb_part.json.gz"
    path.write_bytes(path.read_bytes()[:-40])  # a truncated gzip
    git(repo, "commit", "-q", "-am", "a damaged part")
    held = leave(repo, MODELS[0])
    _refused(
        *run_cli("tables", repo / "findings.md"),
        f"{held[:12]}:findings/r/parts/{MODELS[0]}/STS13.hteb_part.json.gz: not JSON",
    )


def _odd_name(seed: int) -> str:
    """A folder name git stores but no part of ours has: a line break, an escape sequence, a carriage return or a
    bidi override put into a model name at a random place."""
    rng = random.Random(seed)
    name = rng.choice(MODELS)
    at = rng.randrange(len(name) + 1)
    return name[:at] + rng.choice(["\n", "\x1b]0;owned\x07", "\r", "\u202e", "\n\n"]) + name[at:]


@pytest.mark.parametrize("seed", range(6))
def test_a_name_git_holds_with_a_control_character_is_refused_in_one_line_never_sent(repo, run_cli, seed):
    odd = _odd_name(seed)
    parts = repo / "findings" / "r" / "parts"
    shutil.copytree(parts / MODELS[0], parts / odd)
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "a folder with an odd name")
    leave(repo, MODELS[0], odd)
    code, out, err = run_cli("tables", repo / "findings.md")
    _refused(code, out, err, "has a control character or line break in its name")
    assert not any(c in err[:-1] for c in "\n\r\x1b\u202e"), err
    assert (repo / "findings.md").read_text(encoding="utf-8") == MARKER
