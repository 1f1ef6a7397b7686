"""Hard twins (issue 45, `hteb-score --hard-twins-from`): each Sensitivity item asked again with an LLM revision's
paraphrase of the same original text as its twin.

The rule-made twin edits only the span its pair edits, so most of its tokens are the original's; an LLM paraphrase
rewrites the whole text and keeps the meaning, so a model that wins by token overlap loses here. A Sensitivity
revision holds rules only (the generator refuses mixing in LLM transformations), so the paraphrases come from a
second revision made from the same sources (a `sample-*` or `hteb-*` revision), fetched and verified as the run's
own. Its twins are the outputs of its meaning-keeping LLM transformations (`meaning_kept`) with no error left and a
text of their own; an item is matched by its original text (same dataset, table and subset), and an item whose
original the second revision did not rewrite is not counted. The figure is `sensitivity.hard_figure`, the rule
figure's own tie rule, interval and de-duplication over these items.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from hteb_contract.citations import revision_bibtex
from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision
from hteb_contract.specs.transformations import transformation_table
from hteb_contract.stores import open_store
from hteb_contract.taxonomy import minimal_pairs
from hteb_score.scoring.item_measures import Baseline, cosines
from hteb_score.scoring.sensitivity import edited, hard_row, item_key, item_row, text_language

if TYPE_CHECKING:  # annotations only
    from hteb_score.encoding.encoder import EmbeddingTable, Request
    from hteb_score.scoring.data import Variant

#: The axis whose LLM rows keep a text's meaning, length and language while rewriting its form (Lexical/Stylistic:
#: paraphrasing, backtranslation, style_change). A Length row adds or drops content and a Language row changes the
#: language: a model would be right to move for those, so they are no twin.
KEPT_AXIS = "lexical"

#: (table, subset, original text) -> the second revision's twins of it: (transformation, text), each once
Twins = dict[tuple[str, str, str], list[tuple[str, str]]]


def meaning_kept(manifest: Mapping[str, Any]) -> list[str]:
    """The revision's transformations that can be a hard twin: made by an LLM, on KEPT_AXIS, as its own `specs` rows
    state them (this release's table for a revision made before the block)."""
    specs = manifest.get("specs")
    if specs is not None:
        rows = [(r["name"], r.get("made_by"), r.get("axis")) for r in specs["transformations"]]
    else:
        rows = [(r.name, r.made_by, r.axis) for r in transformation_table().transformations]
    kept = {name for name, made_by, axis in rows if made_by == "llm" and axis == KEPT_AXIS}
    return [name for name in manifest["transformations"] if name in kept]


@dataclass(frozen=True)
class HardTwins:
    """The second revision (opened for the datasets this process scores) and the transformations its twins are."""

    store: str
    revision: Revision
    transformations: tuple[str, ...]

    def provenance(self) -> dict[str, Any]:
        """What the card's `dataset.hard_twins` states (part of the run's identity: runs of two differ)."""
        return {
            "repo_id": self.store,
            "label": self.revision.label,
            "revision": self.revision.revision_id,
            "transformations": list(self.transformations),
        }

    def citation(self) -> str:
        """The second revision's BibTeX, added to the card's citation."""
        bibtex = revision_bibtex(self.revision.manifest, self.store)
        return f"% the hard twins' revision (hteb-score --hard-twins-from)\n\n{bibtex}\n"

    def twins(self, dataset: str) -> Twins:
        """Every hard twin of `dataset`'s texts (none where the second revision lacks it)."""
        found: Twins = defaultdict(list)
        if dataset not in self.revision.selected:
            return found
        for transformation, seed in self.revision.variants(dataset):
            if transformation not in self.transformations:
                continue
            items = self.revision.item_columns(dataset, transformation, seed)
            for table, subset, original, text, flawed in zip(
                items.split, items.subset, items.original_text, items.transformed_text, items.with_errors
            ):
                twin = (transformation, text)
                if not flawed and text != original and twin not in found[(table, subset, original)]:
                    found[(table, subset, original)].append(twin)
        return found

    def check_sources(self, dataset: str, variants: Sequence[Variant]) -> None:
        """Refuse a second revision whose `dataset` shares no original text with the run's (other sources)."""
        twins = self.twins(dataset)
        if not twins:
            return
        texts = {
            key
            for v in variants
            if v.items is not None
            for key in zip(v.items.split, v.items.subset, v.items.original_text)
        }
        if not texts & twins.keys():
            raise HtebError(
                f"--hard-twins-from {self.revision.label}: none of its {dataset} texts is one of the run's "
                f"{dataset} texts; it was made from other sources"
            )


def open_hard_twins(store: str, ref: str, run: Revision, planned: Sequence[str], chosen: Sequence[str]) -> HardTwins:
    """The second revision `ref` of `store`, checked as a source of hard twins for the Sensitivity revision `run`:
    an LLM revision sharing datasets with the run, fetched and verified for the `chosen` datasets it holds."""
    where = f"--hard-twins-from {ref}"
    if not minimal_pairs(run.manifest):
        raise HtebError(f"{where}: revision {run.label} has no minimal pairs; hard twins score a Sensitivity revision")
    try:
        head = open_store(store).fetch(ref, datasets=())
    except HtebError as err:
        raise HtebError(f"{where}: {err}") from None
    if minimal_pairs(head.manifest):
        raise HtebError(
            f"{where}: revision {head.label} is a Sensitivity revision (rule twins); name an LLM revision of the "
            "same sources, e.g. sample-1339 or hteb-1339"
        )
    kept = meaning_kept(head.manifest)
    if not kept:
        raise HtebError(
            f"{where}: revision {head.label} is not an LLM revision: it holds no meaning-keeping LLM transformation "
            f"(made by an LLM on the {KEPT_AXIS} axis); it has: {', '.join(head.manifest['transformations'])}"
        )
    held = head.dataset_names()
    if not any(name in held for name in planned):
        raise HtebError(
            f"{where}: revision {head.label} holds none of the run's datasets ({', '.join(planned)}); "
            "it was made from other sources"
        )
    try:
        revision = open_store(store).fetch(ref, datasets=[name for name in chosen if name in held])
    except HtebError as err:
        raise HtebError(f"{where}: {err}") from None
    return HardTwins(store, revision, tuple(kept))


def hard_requests(variants: Sequence[Variant], twins: Twins) -> list[Request]:
    """The hard twins of the items `edited` picks, to embed with the dataset's other texts (each text once)."""
    requests: list[Request] = []
    for found in edited(variants):
        info = found.variant.dataset.info
        for (table, _, _), at, _ in found.picked:
            key = (table, found.changed.subset[at], found.changed.original_text[at])
            requests.extend((info, text, found.prompt) for _, text in twins.get(key, ()))
    return requests


def hard_rows(variants: Sequence[Variant], table: EmbeddingTable, base: Baseline, twins: Twins) -> list[dict[str, Any]]:
    """Each item `edited` picks whose original has a hard twin, once per distinct twin: cos(original, hard twin)
    against cos(original, changed), as `sensitivity.hard_row`s."""
    rows: list[dict[str, Any]] = []
    for found in edited(variants):
        matched = [
            (ref, at, twin)
            for ref, at, _ in found.picked
            for twin in twins.get((ref[0], found.changed.subset[at], found.changed.original_text[at]), ())
        ]
        if not matched:
            continue
        embed = table.view(found.variant.dataset.info)
        originals = [found.changed.original_text[at] for _, at, _ in matched]
        changed = [found.changed.transformed_text[at] for _, at, _ in matched]
        o = np.asarray(embed(originals, found.prompt))
        hard = cosines(o, np.asarray(embed([text for _, _, (_, text) in matched], found.prompt)))
        moved = cosines(o, np.asarray(embed(changed, found.prompt)))
        for (ref, _, (name, text)), original, change, kept, move in zip(matched, originals, changed, hard, moved):
            key = item_key(found.prompt, original, change, text)
            language, drift = text_language(base, ref)
            rows.append(
                hard_row(item_row(key, found.dataset, found.pair, found.seed, language, kept, move, drift), name)
            )
    return rows
