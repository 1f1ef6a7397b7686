"""What each transformed variant's figure rests on: per subset, how many of its texts the
transformation changed (the revision's `change_shares`, or counted from the texts the scorer reads
when an older revision records none), which subsets a Noise figure leaves out and why, and whether
the variant's texts are mostly unchanged.

Why: an unchanged text scores exactly the Original, so a variant that left its texts as they were
reads as perfect robustness. Under the `hteb` protocol a Noise rule's dataset figure leaves out each
subset the rule does not apply to (its script has no layout, no case, ...) or changed fewer than
`APPLIED_SHARE` of: the figure is the dataset's Original plus the mean change over the subsets kept,
so its difference from the Original is the mean over the subsets the rule reached, and every
aggregate stays paired with the same Original. Under `mteb` (equal to mteb, which scores every
subset) and for the LLM transformations the figure is untouched. Every variant whose texts are
mostly unchanged (changed share below `APPLIED_SHARE`) is flagged, whatever its transformation.

>>> shares = (SubsetShare("amh", 10, 0, False, "no layout"), SubsetShare("eng", 10, 9, True, None),
...           SubsetShare("hau", 10, 1, None, None))
>>> coverage = variant_coverage("D", "keyboard_typos", 1, shares, "hteb", axis="noise", recorded=True)
>>> coverage.subsets_scored, coverage.subsets_total, [(s, r) for s, r, _ in coverage.left_out]
(1, 3, [('amh', 'not_applicable'), ('hau', 'mostly_unchanged')])
>>> coverage.flagged_unchanged, round(coverage.changed_share, 3)
(True, 0.333)
>>> mteb = variant_coverage("D", "keyboard_typos", 1, shares, "mteb", axis="noise", recorded=True)  # mteb scores every subset
>>> mteb.subsets_scored, mteb.flagged_unchanged, [f.code for f in mteb.flags()]
(3, True, ['mostly_unchanged'])
>>> round(adjusted_value({"amh": 0.5, "eng": 0.6, "hau": 0.7}, {"amh": 0.5, "eng": 0.8, "hau": 0.7}, 0.66, coverage), 6)
0.46
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hteb_contract.item_columns import ItemColumns
from hteb_contract.revision.change_shares import recorded as recorded_shares
from hteb_contract.specs.noise_scripts import APPLIED_SHARE
from hteb_score.flags import Flag

#: Why a subset is left out of a Noise figure.
REASONS = {
    "not_applicable": "the rule does not apply to the subset's script",
    "mostly_unchanged": f"the rule changed fewer than {APPLIED_SHARE:.0%} of its texts",
}


@dataclass(frozen=True)
class SubsetShare:
    """One subset of a variant: its items, how many the transformation changed, and (Noise rules of
    a revision that records it) whether the rule applies to the subset's script, and why not."""

    subset: str
    items: int
    changed: int
    applicable: bool | None = None
    why_not: str | None = None

    @property
    def share(self) -> float:
        return self.changed / self.items if self.items else 0.0


@dataclass(frozen=True)
class Coverage:
    """One variant's subsets: every subset's share, and those its figure leaves out (subset, reason, detail)."""

    dataset: str
    transformation: str
    seed: int
    subsets: tuple[SubsetShare, ...]
    left_out: tuple[tuple[str, str, str], ...]
    recorded: bool  # the shares are the revision's `change_shares` (False: counted from the texts)

    @property
    def items(self) -> int:
        return sum(s.items for s in self.subsets)

    @property
    def changed(self) -> int:
        return sum(s.changed for s in self.subsets)

    @property
    def changed_share(self) -> float:
        return self.changed / self.items if self.items else 0.0

    @property
    def subsets_total(self) -> int:
        return len(self.subsets)

    @property
    def subsets_scored(self) -> int:
        return self.subsets_total - len(self.left_out)

    @property
    def flagged_unchanged(self) -> bool:
        return self.changed_share < APPLIED_SHARE

    def to_json(self) -> dict[str, Any]:
        """The card's `coverage` entry of this variant."""
        return {
            "dataset": self.dataset,
            "transformation": self.transformation,
            "seed": self.seed,
            "items": self.items,
            "changed": self.changed,
            "changed_share": self.changed_share,
            "subsets_total": self.subsets_total,
            "subsets_scored": self.subsets_scored,
            "left_out": [{"subset": s, "reason": r, "detail": d} for s, r, d in self.left_out],
            "flagged_unchanged": self.flagged_unchanged,
            "shares_from": "manifest" if self.recorded else "texts",
            "subsets": [
                {"subset": s.subset, "items": s.items, "changed": s.changed, "applicable": s.applicable}
                for s in self.subsets
            ],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Coverage:
        subsets = tuple(SubsetShare(s["subset"], s["items"], s["changed"], s["applicable"]) for s in data["subsets"])
        left = tuple((e["subset"], e["reason"], e["detail"]) for e in data["left_out"])
        return cls(
            data["dataset"], data["transformation"], data["seed"], subsets, left, data["shares_from"] == "manifest"
        )

    def flags(self) -> list[Flag]:
        """`mostly_unchanged` for a variant whose texts are mostly as they were; `subsets_left_out` for a figure
        that rests on fewer subsets than the dataset has."""
        where = (self.dataset, self.transformation, self.seed)
        found = []
        if self.flagged_unchanged:
            found.append(
                Flag(
                    "mostly_unchanged",
                    f"{self.changed} of {self.items} texts "
                    f"({self.changed_share:.0%}) differ from the original: an unchanged text scores as "
                    "the Original, so this variant says little of robustness",
                    *where,
                )
            )
        if self.left_out:
            named = ", ".join(f"{s} ({d})" for s, _, d in self.left_out)
            found.append(
                Flag(
                    "subsets_left_out",
                    f"figure on {self.subsets_scored} of {self.subsets_total} subsets; left out: {named}",
                    *where,
                )
            )
        return found


def subset_shares(items: ItemColumns, recorded: Sequence[Mapping[str, Any]] | None) -> tuple[SubsetShare, ...]:
    """Each subset's share: the revision's recorded entries where it has them, else counted from `items`."""
    if recorded is not None:
        return tuple(
            SubsetShare(e["subset"], e["items"], e["changed"], e.get("applicable"), e.get("why_not"))
            for e in sorted(recorded, key=lambda e: e["subset"])
        )
    counts: dict[str, list[int]] = {}
    for subset, original, transformed in zip(items.subset, items.original_text, items.transformed_text):
        count = counts.setdefault(subset, [0, 0])
        count[0] += 1
        count[1] += original != transformed
    return tuple(SubsetShare(subset, n, changed) for subset, (n, changed) in sorted(counts.items()))


def revision_shares(manifest: Mapping[str, Any], items: ItemColumns) -> tuple[tuple[SubsetShare, ...], bool]:
    """The subset shares of one variant's `items` in the revision whose manifest is `manifest`, and whether
    they are the revision's recorded `change_shares` (else counted from the texts: a revision made before them)."""
    entries = recorded_shares(manifest, items.dataset, items.transformation, items.seed)
    return subset_shares(items, entries), entries is not None


#: The axes whose variants are rule-made, each rule applying where its table or its cues say: a subset it does not
#: apply to scores its Original and is left out of the figure, and so, for a Noise rule, is one it barely changed
#: (a Sensitivity rule edits only the texts that hold its cue, so its share is what the data holds).
RULE_AXES = ("noise", "sensitivity")


def variant_coverage(
    dataset: str,
    transformation: str,
    seed: int,
    shares: Sequence[SubsetShare],
    protocol: str,
    *,
    axis: str,
    recorded: bool,
) -> Coverage:
    """A variant's coverage: under `hteb`, a Noise rule's figure (`axis`: its transformation's, as the revision
    states it) leaves out each subset it does not apply to or changed fewer than `APPLIED_SHARE` of."""
    left = []
    if protocol == "hteb" and axis in RULE_AXES:
        for s in shares:
            if s.applicable is False:
                left.append((s.subset, "not_applicable", s.why_not or REASONS["not_applicable"]))
            elif s.share < APPLIED_SHARE and axis == "noise":  # a minimal pair edits only texts with its cue
                left.append((s.subset, "mostly_unchanged", f"{s.changed} of {s.items} texts changed"))
    return Coverage(dataset, transformation, seed, tuple(shares), tuple(left), recorded)


def adjusted_value(
    variant: Mapping[str, float | None],
    original: Mapping[str, float | None],
    original_value: float | None,
    coverage: Coverage,
) -> float | None:
    """The figure of a variant whose coverage leaves subsets out: the Original's value plus the mean over
    the subsets kept of (variant - Original); None when no subset is kept or a value it needs is undefined."""
    out = {s for s, _, _ in coverage.left_out}
    kept = [s for s in variant if s not in out]
    needed = [variant[s] for s in kept] + [original.get(s) for s in kept] + [original_value]
    if not kept or any(v is None for v in needed):
        return None
    change = float(np.mean([variant[s] - original[s] for s in kept]))  # type: ignore[operator]
    return float(original_value) + change  # type: ignore[arg-type]
