"""What a researcher cites (issue 44): CITATION.cff valid against the Citation File Format 1.2.0 schema (the
one cffconvert ships, from PyPI) and in step with the paper's BibTeX and the version; `hteb-score cite` prints
BibTeX for HTEB, the revision (label and content hash) and every source dataset, from the rows the revision
records, else this release's table: on the 15 real datasets of ../shared/data, none left uncited."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hteb_contract.errors import HtebError
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator
from findings_parts import models, parts_folder
from revision_factory import build_revision, install, reseal

from hteb_contract.card import HTEB_CITATION
from hteb_contract.citations import bibliography, revision_bibtex, source_citations
from hteb_contract.sources import list_source_dirs
from hteb_contract.specs.resolved import specs_block
from hteb_score.cli import main

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def cff_schema(tmp_path_factory) -> dict:
    """The CFF 1.2.0 JSON Schema from the cffconvert wheel on PyPI."""
    wheels = tmp_path_factory.mktemp("cffconvert")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(wheels), "cffconvert==2.0.0"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    with zipfile.ZipFile(next(wheels.glob("*.whl"))) as wheel:
        return json.load(io.TextIOWrapper(wheel.open("cffconvert/schemas/1.2.0/schema.json"), encoding="utf-8"))


def test_citation_cff_is_valid_and_says_what_the_paper_and_the_packages_say(cff_schema):
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text(encoding="utf-8"))
    errors = [e.message for e in Draft7Validator(cff_schema).iter_errors(cff)]
    assert not errors, errors
    assert cff["version"] == (REPO / "VERSION").read_text(encoding="utf-8").strip()
    paper = cff["preferred-citation"]
    assert f"title = {{{paper['title'].replace('HTEB', '{HTEB}')}}}" in HTEB_CITATION
    assert paper["url"] in HTEB_CITATION and str(paper["year"]) in HTEB_CITATION
    assert [a["family-names"] for a in paper["authors"]] == re.findall(
        r"(\w+), \w+", HTEB_CITATION.split("author = ")[1].split("\n")[0]
    )


def _entries(text: str) -> list[str]:
    return [block.strip() for block in text.split("\n\n") if block.startswith("@")]


@pytest.mark.parametrize("with_specs", [True, False], ids=["rows-recorded", "rows-installed"])
def test_cite_prints_hteb_the_revision_and_every_source_of_the_real_datasets(tmp_path, shared_data, capsys, with_specs):
    names = list_source_dirs(shared_data)
    assert len(names) == 15
    build_revision(tmp_path / "rev", shared_data, names, label="cite-1", rows=2, transformations=("keyboard_typos",))
    if with_specs:
        reseal(
            tmp_path / "rev", specs=specs_block(names, ["keyboard_typos"], noise_scripts=True, language_detector=None)
        )
    digest = install(tmp_path / "store", tmp_path / "rev")
    assert main(["cite", "cite-1", "--store", str(tmp_path / "store")]) == 0
    out = capsys.readouterr().out
    manifest = json.loads((tmp_path / "store" / "objects" / digest / "manifest.json").read_text())
    assert out == bibliography(manifest, str(tmp_path / "store"))
    entries = _entries(out)
    assert entries[0] == HTEB_CITATION and f"content hash {digest}" in entries[1] and "cite-1" in entries[1]
    cited = source_citations(manifest)
    assert all(entry.bibtex is not None for entry in cited), [e.datasets for e in cited if e.bibtex is None]
    assert sorted(n for entry in cited for n in entry.datasets) == sorted(names)
    assert len(entries) == 2 + len(cited)
    assert all(e.count("{") == e.count("}") for e in entries)
    assert {"STS12", "STS13", "STS14", "STS15", "STS16"} <= {n for e in cited for n in e.datasets}
    # a revision recording its rows cites SciFact by its own paper (Wadden et al. 2020), not by the work mteb's
    # metadata names (SPECTER); one made before them is cited as it was then (mteb's)
    (scifact,) = [e.bibtex or "" for e in cited if "SciFact" in e.datasets]
    assert ("Fact or Fiction: Verifying Scientific Claims" in scifact) == with_specs
    assert ("SPECTER" in out) != with_specs


def test_cite_of_an_unknown_revision_is_one_line(tmp_path, capsys):
    assert main(["cite", "no-such-label"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no revision 'no-such-label'" in err


def test_the_readme_cites_hteb_as_every_card_does():
    block = re.search(
        r"^## Citing HTEB\n.*?```bibtex\n(.*?)\n```", (REPO / "README.md").read_text(encoding="utf-8"), re.M | re.S
    )
    assert block and block.group(1) == HTEB_CITATION


def _unescaped(text: str, char: str) -> int:
    """How many times `char` stands in `text` not escaped by a backslash."""
    return len(re.findall(rf"(?<!\\){re.escape(char)}", text))


@settings(max_examples=300, deadline=None)
@given(store=st.text(), label=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,20}", fullmatch=True))
def test_any_store_or_label_stays_inside_its_bibtex_field(store, label):
    """A store path is the user's and may hold any character: the revision's entry keeps its five lines, its
    braces balanced, and none of LaTeX's special characters unescaped."""
    entry = revision_bibtex({"label": label, "content_hash": "0" * 64, "created": "2026-11-29"}, store)
    lines = entry.split("\n")
    assert len(lines) == 5 and lines[0].startswith("@misc{hteb_") and lines[-1] == "}"
    for line in lines[1:-1]:
        field = line.split(" = ", 1)[1]
        assert field.startswith("{") and field.endswith("},")
        inner = field[1:-2]
        assert _unescaped(inner.replace("\\textbackslash{}", ""), "{") == _unescaped(
            inner.replace("\\textbackslash{}", ""), "}"
        )
        assert not any(_unescaped(inner, c) for c in "%$&#_")


@pytest.mark.slow
def test_every_card_comparison_and_page_carries_what_cite_prints(tmp_path, capsys):
    """A card scored on a revision records what `hteb-score cite LABEL` prints and its Markdown shows it; a comparison
    (Markdown and page) and the leaderboard show every entry of their cards once; a card scored before the citation
    was recorded is cited by HTEB and its revision's hash."""
    from hteb_contract.citations import card_bibliography, joined_bibliography
    from hteb_score.report.site.leaderboard_data import leaderboard_data
    from hteb_score.report.site.leaderboard_page import render

    assert main(["cite"]) == 0
    printed = capsys.readouterr().out
    cards = tmp_path / "cards"
    assert main(["--datasets", "STSBenchmark", "--out", str(cards / "a"), "--quiet"]) == 0
    card = json.loads((cards / "a" / "result_card.json").read_text(encoding="utf-8"))
    assert card["dataset"]["citation"] == printed == card_bibliography(card)
    assert card["dataset"]["languages"] == {"STSBenchmark": ["eng"]}  # as the sample's manifest records its source
    markdown = (cards / "a" / "result_card.md").read_text(encoding="utf-8")
    assert "## How to cite\n" in markdown and printed.rstrip("\n") in markdown
    old = json.loads(next((REPO / "docs" / "findings" / "noise2-1339").glob("*/result_card.json")).read_text())
    assert "citation" not in old["dataset"]
    assert _entries(card_bibliography(old)) == [
        HTEB_CITATION,
        revision_bibtex(
            {"label": "noise2-1339", "content_hash": old["dataset"]["revision"]}, old["dataset"]["repo_id"]
        ),
    ]
    (cards / "old").mkdir()
    (cards / "old" / "result_card.json").write_text(json.dumps(old), encoding="utf-8")
    joined = joined_bibliography([card, old])
    assert _entries(joined) == _entries(printed) + _entries(card_bibliography(old))[1:]  # HTEB's once
    assert main(["compare", str(cards / "a" / "result_card.json"), "--out", str(tmp_path / "cmp")]) == 0
    compared = (tmp_path / "cmp" / "comparison.md").read_text(encoding="utf-8")
    assert compared.count(HTEB_CITATION) == 1 and printed.rstrip("\n") in compared
    page = (tmp_path / "cmp" / "report.html").read_text(encoding="utf-8")
    assert '<h2 id="cite">How to cite</h2>' in page and page.count("@misc{frank2026hteb,") == 1
    with pytest.raises(HtebError, match="different dataset revisions"):  # a board is of one revision (issue 46)
        leaderboard_data(cards, {})
    (cards / "old" / "result_card.json").unlink()
    (cards / "old").rmdir()
    other = {**card, "model": {**card["model"], "model_id": "org/another-model"}}
    (cards / "b").mkdir()
    (cards / "b" / "result_card.json").write_text(json.dumps(other), encoding="utf-8")
    board = render(leaderboard_data(cards, {}))
    assert board.count("@misc{frank2026hteb,") == 1 and "hteb_sample_card2_1339" in board  # the default sample's key


def test_a_revision_made_before_its_rows_is_cited_as_its_committed_parts_were():
    """A card's citation is part of its identity: a unit of noise2-1339 (made before revisions recorded their rows)
    scored today must cite as the committed units do, or `merge` refuses them as parts of one run."""
    from hteb_score.scoring.parts import read_part

    manifest = json.loads((REPO / "docs" / "revisions" / "noise2-1339" / "manifest.json").read_text(encoding="utf-8"))
    label = "noise2-1339-heldout"
    parts = sorted(path for model in models(label) for path in parts_folder(label, model).glob("*.hteb_part.json.gz"))
    cited = [(path, read_part(path).identity.dataset) for path in parts]
    cited = [(path, dataset) for path, dataset in cited if "citation" in dataset]  # parts scored since it is recorded
    assert cited
    for path, dataset in cited:
        assert dataset["citation"] == bibliography(manifest, dataset["repo_id"]), path
