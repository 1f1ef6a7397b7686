"""What the repository says of a published revision agrees with itself: the manifest committed under docs/revisions/<label>/, the MANIFEST.md row papers cite, the content hash the docs quote,
and the revision every committed finding was scored on."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hteb_contract.revision import content_hash
from hteb_contract.validation import validate
from hteb_generate.revision import manifest_md

ROOT = Path(__file__).resolve().parents[1]
LABELS = sorted(p.name for p in (ROOT / "docs" / "revisions").iterdir() if p.is_dir())


def committed(label: str) -> dict:
    return json.loads((ROOT / "docs" / "revisions" / label / "manifest.json").read_text(encoding="utf-8"))


def test_there_are_published_revisions():
    assert "noise-1339" in LABELS


@pytest.mark.parametrize("label", LABELS)
def test_committed_manifest_is_the_one_manifest_md_cites(label):
    manifest = committed(label)
    validate("manifest", manifest, what=label)
    assert manifest["label"] == label
    assert content_hash(manifest["files"]) == manifest["content_hash"]  # the hash is of the files it lists
    rows = [r for r in manifest_md.parse((ROOT / "MANIFEST.md").read_text(encoding="utf-8")) if r["label"] == label]
    assert len(rows) == 1 and rows[0]["content hash"] == manifest["content_hash"]
    assert rows[0]["date"] == manifest["created"][:10]


@pytest.mark.parametrize("label", LABELS)
def test_findings_are_scored_on_the_committed_revision(label):
    cards = sorted((ROOT / "docs" / "findings" / label).rglob("result_card.json"))
    for path in cards:
        card = json.loads(path.read_text(encoding="utf-8"))
        assert (card["dataset"]["label"], card["dataset"]["revision"]) == (label, committed(label)["content_hash"]), (
            path
        )


#: The page of each axis a rule-made revision is of, by its generator: it quotes the revision's content hash.
AXIS_PAGES = {"hteb-noise-rules": "noise.md", "hteb-sensitivity-rules": "sensitivity.md"}


@pytest.mark.parametrize("label", LABELS)
def test_docs_quote_the_committed_content_hash(label):
    """The Noise page quotes the hash each noise rules version gives on the shipped data (`make generate
    SEED=1339 PROFILE=noise`, with `--noise-rules 1` for noise-1339); the Sensitivity page its revision's
    (`make generate SEED=1339 PROFILE=sensitivity`)."""
    page = AXIS_PAGES[committed(label)["generator"]["model_id"]]
    assert f"`{committed(label)['content_hash']}`" in (ROOT / "docs" / page).read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("make") is None, reason="needs make")
@pytest.mark.parametrize("rules", ["1", "2", "3"])
def test_the_findings_build_never_moves_a_cited_label(rules):
    """`make noise-findings` builds noise-1339 again today under another content hash (its card changed since):
    every build of rules version 1 names a table of its own, never MANIFEST.md (which would refuse it); a label
    of rules 2 or 3 committed under docs/revisions is remade as published (`hteb-generate remake`); `make -n` prints
    the remake and runs nothing."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "noise-findings", f"NOISE_RULES={rules}"],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = done.stdout.replace("\\\n", " ").splitlines()
    assert done.returncode == 0 and "remade" not in done.stdout, done.stderr  # printed, not run
    if rules != "1":
        assert any(f"bin/hteb-generate remake docs/revisions/noise{rules}-1339 " in line for line in lines), done.stdout
        return
    builds = [line for line in lines if "bin/hteb-generate --seed" in line]
    assert builds, done.stdout
    for line in builds:
        table = line.split("--manifest-md", 1)[1].split()[0] if "--manifest-md" in line else "MANIFEST.md"
        assert ("--noise-rules 1" not in line) or table != "MANIFEST.md" and "rebuilt" in table, line
    assert any(f"--noise-rules {rules}" in line for line in builds)


def test_the_sensitivity_page_counts_are_its_revisions_change_shares():
    """docs/sensitivity.md's figures of sensitivity-1339 (items, texts, texts each pair edited and their share) are
    the committed manifest's counters and change_shares, a row per meaning-changing rule in the table's order."""
    manifest = committed("sensitivity-1339")
    page = (ROOT / "docs" / "sensitivity.md").read_text(encoding="utf-8")
    changed_rules = [r["name"] for r in manifest["specs"]["transformations"] if r.get("meaning") == "changed"]
    texts = sum(e["items"] for e in manifest["change_shares"] if e["transformation"] == changed_rules[0])
    assert f"{manifest['counters']['items']:,} items" in page and f"{texts:,} texts" in page
    start = page.index("| pair | texts edited | share |")
    rows = [line.split(" | ")[1:] for line in page[start:].splitlines()[2 : 2 + len(changed_rules)]]
    for rule, (edited, share) in zip(changed_rules, rows):
        count = sum(e["changed"] for e in manifest["change_shares"] if e["transformation"] == rule)
        assert (edited, share.rstrip(" |")) == (f"{count:,}", f"{count / texts:.1%}"), rule
    assert len(rows) == len(changed_rules) == 4
