"""Where hard twins come from (issue 45, `hteb-score --hard-twins-from`): the second revision, an LLM revision
of the same sources as the Sensitivity revision scored, fetched and verified as the run's own, and the
meaning-keeping rewrites it holds of each original text (scoring/hard_twins.py asks them as twins). Apart from
the figure so the data a run reads (scoring/data.py) opens it without importing what scores it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hteb_contract.citations import revision_bibtex
from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision
from hteb_contract.specs.transformations import transformation_table
from hteb_contract.stores import open_store
from hteb_contract.taxonomy import minimal_pairs

if TYPE_CHECKING:  # annotations only
    from hteb_contract.item_columns import ItemColumns

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

    def check_sources(self, dataset: str, items: Iterable[ItemColumns]) -> None:
        """Refuse a second revision whose `dataset` shares no original text with the run's `items` (other sources)."""
        twins = self.twins(dataset)
        if not twins:
            return
        texts = {key for columns in items for key in zip(columns.split, columns.subset, columns.original_text)}
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
