"""What a researcher cites for a revision, as BibTeX: HTEB (the paper), the revision itself (its label,
content hash and store, the triple a paper pins) and every source dataset it holds.

Why in the contract: the citations are facts of the rows a revision was made by. A revision that records
its rows (the manifest's `specs`) is cited from them; one made before is cited from this release's
dataset table, every row of it (the paper's registry and the local STS sets alike). Sources citing one
work share one entry; a source whose row records no BibTeX is named in a comment, never left out silently.

>>> print(revision_bibtex({"label": "noise2-1339", "content_hash": "67071e0b" + "0" * 56,
...                        "created": "2026-11-27T10:00:00+00:00"}, "file://.hteb/store"))
@misc{hteb_noise2_1339,
  title = {{HTEB} dataset revision noise2-1339},
  note = {content hash 67071e0b00000000000000000000000000000000000000000000000000000000, store file://.hteb/store},
  year = {2026},
}
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hteb_contract.card import HTEB_CITATION
from hteb_contract.common.escape import bibtex_text
from hteb_contract.specs.datasets import dataset_specs


#: HTEB's own entry, with the comment that opens every bibliography of ours.
HTEB_ENTRY = ("% HTEB (the benchmark and its paper)", HTEB_CITATION)


@dataclass(frozen=True)
class SourceCitation:
    """The BibTeX of one work and the source datasets of a revision that cite it (None: their rows record none)."""

    bibtex: str | None
    datasets: tuple[str, ...]


def revision_bibtex(manifest: Mapping[str, Any], store: str) -> str:
    """A @misc entry for the revision: its label, its content hash and the store it is published in."""
    label = str(manifest["label"])
    key = "hteb_" + re.sub(r"\W+", "_", label).strip("_")
    year = str(manifest.get("created", ""))[:4]
    lines = [
        f"@misc{{{key},",
        f"  title = {{{{HTEB}} dataset revision {bibtex_text(label)}}},",
        f"  note = {{content hash {bibtex_text(manifest['content_hash'])}, store {bibtex_text(store)}}},",
    ]
    if year.isdigit():
        lines.append(f"  year = {{{year}}},")
    return "\n".join([*lines, "}"])


def source_citations(manifest: Mapping[str, Any]) -> list[SourceCitation]:
    """Each source dataset's BibTeX, one entry per work in the sources' order, then the sources whose rows record
    none: from the rows the revision records (a dataset's own paper, `release_citation`, where mteb's cites another
    work); for a revision made before it recorded them, mteb's as this release's table holds it, as such revisions
    were cited when made, so the parts of one run scored before and after a row's release_citation was added agree
    (a card's `dataset.citation` is part of its identity)."""
    specs = manifest.get("specs")
    recorded = (
        {row["name"]: row.get("release_citation") or row.get("citation") for row in specs["datasets"]}
        if specs is not None
        else None
    )
    installed = {spec.name: spec.citation for spec in dataset_specs()}
    cited: dict[str, list[str]] = {}
    uncited = []
    for source in manifest["sources"]:
        name = source["name"]
        bibtex = recorded.get(name) if recorded is not None else installed.get(name)
        if bibtex:
            cited.setdefault(bibtex.strip(), []).append(name)
        else:
            uncited.append(name)
    found = [SourceCitation(bibtex, tuple(names)) for bibtex, names in cited.items()]
    return found + ([SourceCitation(None, tuple(uncited))] if uncited else [])


def bibliography(manifest: Mapping[str, Any], store: str) -> str:
    """HTEB, the revision and its sources as one BibTeX text; each source entry says which datasets cite it."""
    parts = [
        *HTEB_ENTRY,
        "% this revision: cite it with its content hash, so a reader gets the same data",
        revision_bibtex(manifest, store),
    ]
    for entry in source_citations(manifest):
        names = ", ".join(entry.datasets)
        if entry.bibtex is None:
            parts.append(f"% no BibTeX recorded in the dataset row of: {names}")
        else:
            parts += [f"% source of: {names}", entry.bibtex]
    return "\n\n".join(parts) + "\n"


def card_bibliography(card: Mapping[str, Any]) -> str:
    """What to cite for a result card's figures: the BibTeX its scorer recorded (`dataset.citation`, what `hteb-score
    cite LABEL` prints), else HTEB's entry and the revision's from the card's `dataset` block (a card scored before
    the citation was recorded, or from a dataset folder)."""
    dataset = card["dataset"]
    if dataset.get("citation"):
        return str(dataset["citation"])
    parts = list(HTEB_ENTRY)
    if dataset.get("label"):
        parts += [
            "% the revision scored (its card predates the recorded citation: `hteb-score cite "
            f"{bibtex_text(dataset['label'])}` adds its year and its sources)",
            revision_bibtex({"label": dataset["label"], "content_hash": dataset["revision"]}, str(dataset["repo_id"])),
        ]
    return "\n\n".join(parts) + "\n"


def joined_bibliography(cards: Sequence[Mapping[str, Any]]) -> str:
    """One BibTeX text for several cards (a comparison, a leaderboard): each entry once, in the cards' order; HTEB's
    alone where there is no card (figures from a scores table or mteb's result files)."""
    seen = dict.fromkeys(HTEB_ENTRY)
    for card in cards:
        for entry in card_bibliography(card).rstrip("\n").split("\n\n"):
            seen.setdefault(entry, None)
    return "\n\n".join(seen) + "\n"
