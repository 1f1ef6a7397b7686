"""The documentation stays true to the repository: a README a newcomer reads in five minutes, an
architecture table that lists every module of the three packages (and no module that is gone),
paths and module names in the pages that exist, and a site that builds with `mkdocs build --strict`
(a broken link or anchor, or a page missing from the nav, fails it)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
README = REPO / "README.md"
ARCHITECTURE = DOCS / "architecture.md"
README_MAX_LINES = 200

#: Each package's import name -> the folder it lives in.
PACKAGES = {"hteb_contract": REPO / "schemas", "hteb_score": REPO / "score", "hteb_generate": REPO / "generate"}
#: A table row whose first cell names a module: | `hteb_score/aggregate.py` | its job |
MODULE_ROW = re.compile(r"^\|\s*`((?:hteb_contract|hteb_score|hteb_generate)/[\w/]+\.py)`\s*\|([^|]*)\|", re.M)
#: A repository path in backticks: `score/hteb_score/backends.py`, `tests/**/test_bad_*.py`.
REPO_PATH = re.compile(r"`((?:schemas|score|generate|tests|bench|docs)/[\w./*-]*)`")
#: A dotted name under one of the packages: hteb_score.mteb_tasks, hteb_contract.reproduction.
DOTTED = re.compile(r"\b((?:hteb_contract|hteb_score|hteb_generate)(?:\.\w+)+)")


def pages() -> list[Path]:
    """The site's pages and the README; committed data under docs/ (cards, dataset cards) is not prose."""
    return [README, *sorted(p for p in [*DOCS.glob("*.md"), *DOCS.glob("extending/*.md")])]


def modules_on_disk() -> set[str]:
    return {
        path.relative_to(root).as_posix()
        for package, root in PACKAGES.items()
        for path in (root / package).rglob("*.py")
        if "__pycache__" not in path.parts
    }


def modules_in_table() -> list[tuple[str, str]]:
    return [(module, job.strip()) for module, job in MODULE_ROW.findall(ARCHITECTURE.read_text(encoding="utf-8"))]


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail to docs/"


def test_readme_links_resolve() -> None:
    """The README is not part of the site, so mkdocs does not check its links: every relative one
    must name a file of the repository (an anchor after it is not checked here)."""
    text = README.read_text(encoding="utf-8")
    targets = [t.split("#")[0] for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t]
    missing = [t for t in targets if t and not (REPO / t).exists()]
    assert targets and not missing, f"README.md links to missing files: {missing}"


def table_problems(rows: list[tuple[str, str]], on_disk: set[str]) -> list[str]:
    """What is wrong with a "where things are" table: modules it misses, lists that do not exist,
    lists twice, or lists without a job."""
    listed = [module for module, _ in rows]
    problems = [f"not listed: {m}" for m in sorted(on_disk - set(listed))]
    problems += [f"listed but not on disk: {m}" for m in sorted(set(listed) - on_disk)]
    problems += [f"listed twice: {m}" for m in sorted({m for m in listed if listed.count(m) > 1})]
    return problems + [f"no job given: {m}" for m, job in rows if not job]


def test_architecture_table_lists_every_module() -> None:
    rows = modules_in_table()
    assert len(rows) > 50
    assert not (problems := table_problems(rows, modules_on_disk())), f"docs/architecture.md: {problems}"


def test_table_problems_are_found() -> None:
    """A module added without a row, a row left for a module moved away, a row twice, a row without a job."""
    on_disk = {"hteb_score/a.py", "hteb_score/b.py"}
    assert table_problems([("hteb_score/a.py", "its job"), ("hteb_score/b.py", "its job")], on_disk) == []
    assert table_problems([("hteb_score/a.py", "its job")], on_disk) == ["not listed: hteb_score/b.py"]
    assert table_problems([("hteb_score/a.py", "x"), ("hteb_score/b.py", "x"), ("hteb_score/c.py", "x")], on_disk) == [
        "listed but not on disk: hteb_score/c.py"
    ]
    assert table_problems([("hteb_score/a.py", "x"), ("hteb_score/a.py", "x"), ("hteb_score/b.py", "")], on_disk) == [
        "listed twice: hteb_score/a.py",
        "no job given: hteb_score/b.py",
    ]


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_named_paths_exist(page: Path) -> None:
    """A repository path a page names in backticks exists (a glob matches at least one file)."""
    missing = []
    for name in REPO_PATH.findall(page.read_text(encoding="utf-8")):
        found = any(REPO.glob(name)) if "*" in name else (REPO / name).exists()
        if not found:
            missing.append(name)
    assert not missing, f"{page.name} names paths that do not exist: {sorted(set(missing))}"


def test_code_cites_existing_pages() -> None:
    """Docstrings and comments of the three packages cite the repository's own pages, which exist."""
    cited = {
        (path.relative_to(REPO).as_posix(), page)
        for package, root in PACKAGES.items()
        for path in (root / package).rglob("*.py")
        for page in re.findall(r"\bdocs/([\w-]+\.md)", path.read_text(encoding="utf-8"))
    }
    assert cited
    assert not (missing := sorted(c for c in cited if not (DOCS / c[1]).exists())), f"cited pages missing: {missing}"


def _resolves(dotted: str) -> bool:
    """hteb_score.mteb_tasks (a module) or hteb_score.scoring.DatasetGroups (a name a module defines),
    found by reading files, not by importing them."""
    package, *parts = dotted.split(".")
    root = PACKAGES[package] / package
    for cut in range(len(parts), -1, -1):
        base = root.joinpath(*parts[:cut])
        module = base.with_suffix(".py") if cut else root / "__init__.py"
        if base.is_dir() and (base / "__init__.py").exists() and cut == len(parts):
            return True
        if module.exists():
            rest = parts[cut:]
            if not rest:
                return True
            pattern = rf"^(?:def|class)\s+{rest[0]}\b|^{rest[0]}\s*[:=]|import .*\b{rest[0]}\b"
            return re.search(pattern, module.read_text(encoding="utf-8"), re.M) is not None
    return False


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_named_modules_exist(page: Path) -> None:
    names = set(DOTTED.findall(page.read_text(encoding="utf-8")))
    assert not (missing := sorted(n for n in names if not _resolves(n))), f"{page.name} names: {missing}"


def card_excerpt(page: Path) -> list[str]:
    """The lines of the fenced block that quotes make demo's result_card.md (it opens on its title)."""
    block = re.search(r"^```\n(# HTEB result card: .*?)^```", page.read_text(encoding="utf-8"), re.M | re.S)
    assert block, f"{page.name} quotes no result card"
    return block.group(1).splitlines()


def quoted(line: str, card: list[str]) -> bool:
    """A quoted line is a line of the card, where `…` stands for what was left out of it."""
    if "…" not in line:
        return line in card
    pattern = re.compile(".*".join(map(re.escape, line.split("…"))))
    return line == "…" or any(pattern.fullmatch(c) for c in card)


#: A figure in points as the card prints it (two decimals, signed or not).
FIGURE = re.compile(r"(?<![\w.])-?\d+\.\d\d(?![\d%])")


def card_prose(page: Path) -> str:
    """The README's reading of the quoted card: from the excerpt's end to the next heading."""
    text = page.read_text(encoding="utf-8")
    start = re.search(r"^```\n# HTEB result card: .*?^```\n", text, re.M | re.S)
    assert start, f"{page.name} quotes no result card"
    return text[start.end() :].split("\n## ", 1)[0]


@pytest.mark.slow
@pytest.mark.xdist_group("demo")
def test_scoring_pages_min_judge_figures_are_the_demo_cards(demo_run: Path, demo_min_judge_run: Path) -> None:
    """The sentence on what `--min-judge 3` does to the bundled sample quotes both cards' aggregates."""
    unfiltered, filtered = (
        json.loads((run / "result_card.json").read_text())["aggregates"] for run in (demo_run, demo_min_judge_run)
    )
    text = " ".join((DOCS / "scoring.md").read_text(encoding="utf-8").split())
    assert (
        f"HTEB {unfiltered['hteb_total']:.2f} ({unfiltered['delta']:+.2f} from its Original, "
        f"{unfiltered['original']:.2f}) unfiltered, and with `--min-judge 3` HTEB {filtered['hteb_total']:.2f} "
        f"({filtered['delta']:+.2f} from {filtered['original']:.2f}, the Original of the "
        f"{filtered['hteb_datasets']} of {filtered['datasets']} datasets left with a transformed item)"
    ) in text


@pytest.mark.xdist_group("demo")
def test_quoted_card_is_the_demo_card(demo_run: Path) -> None:
    """The README's and docs/result-card.md's excerpts are what `make demo` writes today, and every figure
    the README's reading of it names is one the card prints."""
    text = (demo_run / "result_card.md").read_text(encoding="utf-8")
    card = text.splitlines()
    for page in (README, DOCS / "result-card.md"):
        excerpt = card_excerpt(page)
        assert len(excerpt) > 10
        assert not (stale := [line for line in excerpt if not quoted(line, card)]), f"{page.name}: {stale}"
    figures = FIGURE.findall(card_prose(README))
    printed = set(FIGURE.findall(text))
    assert len(figures) > 5 and not (stale := [f for f in figures if f not in printed]), f"README.md: {stale}"


def test_site_builds_strict(tmp_path: Path) -> None:
    """mkdocs.yml turns omitted pages, broken links and broken anchors into warnings; --strict fails on them."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(tmp_path / "site")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    built = {p.relative_to(tmp_path / "site").as_posix() for p in (tmp_path / "site").rglob("index.html")}
    assert {"index.html", "architecture/index.html", "result-card/index.html"} <= built
    assert (tmp_path / "site" / "findings" / "noise-1339" / "comparison" / "comparison.json").exists()


# --- code examples that run ---------------------------------------------------------------------

#: Marks the line before a fenced python/bash block: it runs against the bundled sample in the test below.
RUNNABLE = "<!-- runnable -->"
#: Or: it cannot run here, and says what it needs; the need must be one of NEEDS.
NOT_RUNNABLE = re.compile(r"<!-- not runnable: needs (.+?) -->")
NEEDS = (
    "a GPU",
    "the network",
    "a model download",
    "a Ray cluster",
    "the full-size revision",
    "make",
    "placeholders",
    "minutes",
    "an edit of the repository",
)
FENCE = re.compile(r"^```(python|bash)\n(.*?)^```", re.M | re.S)


def code_blocks(page: Path) -> list[tuple[str, str, str | None]]:
    """(language, code, marker line) of each fenced python/bash block; the marker is the line before."""
    text = page.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
        blocks.append((match.group(1), match.group(2), before if before.startswith("<!--") else None))
    return blocks


def marker_problem(marker: str | None) -> str | None:
    """Why a block's marker is not one the test reads (None: it is)."""
    if marker == RUNNABLE:
        return None
    found = NOT_RUNNABLE.fullmatch(marker or "")
    if found is None:
        return f"no marker ({RUNNABLE} or <!-- not runnable: needs ... -->) before it"
    unknown = [need for need in re.split(r",\s*|\s+and\s+", found.group(1)) if need not in NEEDS]
    return f"needs what the test does not know: {unknown} (one of {NEEDS})" if unknown else None


def test_marker_problems_are_found() -> None:
    assert marker_problem(RUNNABLE) is None
    assert marker_problem("<!-- not runnable: needs a GPU and the network -->") is None
    assert "no marker" in marker_problem(None)
    assert "does not know: ['coffee']" in marker_problem("<!-- not runnable: needs coffee -->")


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_code_block_is_runnable_or_says_what_it_needs(page: Path) -> None:
    problems = [
        f"block {i} ({language}: {code.splitlines()[0][:50]!r}): {problem}"
        for i, (language, code, marker) in enumerate(code_blocks(page), 1)
        if (problem := marker_problem(marker)) is not None
    ]
    assert not problems, f"{page.name}: {problems}"


def runnable_blocks() -> list[tuple[str, int, str, str]]:
    return [
        (page.relative_to(REPO).as_posix(), i, language, code)
        for page in pages()
        for i, (language, code, marker) in enumerate(code_blocks(page), 1)
        if marker == RUNNABLE
    ]


def test_there_are_runnable_examples() -> None:
    assert {page for page, *_ in runnable_blocks()} >= {"docs/formats.md", "docs/comparing.md", "docs/scoring.md"}


@pytest.mark.parametrize(
    ("page", "index", "language", "code"),
    runnable_blocks(),
    ids=[f"{page}#{index}" for page, index, *_ in runnable_blocks()],
)
def test_runnable_example_runs(page: str, index: int, language: str, code: str, tmp_path: Path) -> None:
    """The block runs as a reader would paste it, from a folder that holds the repository's tracked
    folders (paths in it are repository paths) and takes what it writes; the `hteb-score` it calls is
    this checkout's."""
    for name in ("docs", "score", "schemas", "tests"):
        (tmp_path / name).symlink_to(REPO / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "hteb-score"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hteb_score.cli "$@"\n', encoding="utf-8")
    launcher.chmod(0o755)
    paths = os.pathsep.join(str(REPO / p) for p in ("schemas", "score", "generate"))
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HF_HUB_OFFLINE": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [paths, os.environ.get("PYTHONPATH")])),
    }
    command = [sys.executable, "-c", code] if language == "python" else ["bash", "-euo", "pipefail", "-c", code]
    done = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{page} block {index}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"


def test_importing_the_cli_main_module_runs_nothing() -> None:
    """`python -m hteb_score.cli` runs the CLI; importing hteb_score.cli.__main__ (a doc tool, a test
    collector) does not."""
    code = "import hteb_score.cli.__main__; print('imported')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (0, "imported\n"), done.stderr
