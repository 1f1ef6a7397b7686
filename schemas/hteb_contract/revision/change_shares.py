"""How much of each variant a transformation changed: per (dataset, transformation, seed, subset), the
items and how many of them have a transformed text other than the original (the manifest's
`change_shares`), and, for a Noise rule, whether the rule applies to the subset's script at all; for a
minimal-pair rule (the Sensitivity axis), whether it found a span to edit in any text of the subset.

Why: a rule that leaves a subset's texts as they were (keyboard_typos on a script without a layout,
random_capitalisation on a script without case) or an LLM that returned its input makes a variant
that scores exactly the Original; averaged in, it reads as robustness. The writer records the counts
when it seals a revision, `verify` checks them against the item files (data against itself), and the
scorer reads them to flag such variants and leave not-applicable subsets out of a Noise figure.

>>> import pyarrow as pa
>>> table = pa.table({"subset": ["amh", "amh", "eng"], "original_text": ["ሰላም", "ሰላም።", "Hi."],
...                   "transformed_text": ["ሰላም", "ሰላም", "hi"]})
>>> [(e["subset"], e["items"], e["changed"], e["share"]) for e in share_entries("D", "character_deletion", 1, table)]
[('amh', 2, 1, 0.5), ('eng', 1, 1, 1.0)]
>>> entry = share_entries("D", "random_capitalisation", 1, table, rules="2")[0]
>>> entry["script"], entry["applicable"], entry["why_not"]
('Ethi', False, 'the script has no case')
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hteb_contract.errors import IntegrityError
from hteb_contract.specs.noise_scripts import noise_scripts, text_script
from hteb_contract.specs.transformations import is_pair_rule
from hteb_contract.taxonomy import AXIS_OF

#: The rules versions whose behaviour per script hteb_contract/specs/noise_scripts.yaml describes (every
#: version after 1; tested against the generator's); a revision of version 1 (noise-1339's: Latin only)
#: records no applicability.
TABLE_RULES = frozenset({"2", "3"})
#: How many texts of a subset (the first, in file order) decide its script: the script of most of them.
SCRIPT_TEXTS = 200
#: The digits a recorded share is rounded to (the counts are exact).
SHARE_DIGITS = 6


#: Why a minimal-pair rule (the Sensitivity axis) does not apply to a subset where it edited no text.
NO_SPAN = "no text of the subset has a span this rule and its twin can both edit (its language or its cues)"


def is_noise(transformation: str) -> bool:
    return AXIS_OF.get(transformation) == "noise"


def subset_counts(table: pa.Table) -> dict[str, tuple[int, int]]:
    """subset -> (items, items whose transformed text differs from the original), of an item table."""
    changed = pc.fill_null(pc.not_equal(table.column("original_text"), table.column("transformed_text")), True)
    grouped = (
        pa.table({"subset": table.column("subset"), "changed": pc.cast(changed, pa.int64())})
        .group_by("subset")
        .aggregate([("changed", "sum"), ("changed", "count")])
    )
    return {
        subset: (items, changed)
        for subset, items, changed in zip(
            grouped.column("subset").to_pylist(),
            grouped.column("changed_count").to_pylist(),
            grouped.column("changed_sum").to_pylist(),
        )
    }


def subset_scripts(subsets: Sequence[str], originals: Sequence[str]) -> dict[str, str | None]:
    """subset -> the script of most of its first `SCRIPT_TEXTS` texts (None: no letter of a known script)."""
    seen: dict[str, list[str]] = {}
    for subset, text in zip(subsets, originals):
        texts = seen.setdefault(subset, [])
        if len(texts) < SCRIPT_TEXTS:
            texts.append(text)
    scripts = {}
    for subset, texts in seen.items():
        counts = Counter(s for s in map(text_script, texts) if s is not None)
        scripts[subset] = counts.most_common(1)[0][0] if counts else None
    return scripts


def share_entries(
    dataset: str, transformation: str, seed: int, table: pa.Table, *, rules: str | None = None
) -> list[dict[str, Any]]:
    """The manifest's `change_shares` entries of one items table, a subset each (sorted); a Noise rule
    of a rules version in `TABLE_RULES` also records the subset's script and whether the rule applies to it."""
    counts = subset_counts(table)
    pair_rule = is_pair_rule(transformation)
    scripts = {}
    if is_noise(transformation) and rules in TABLE_RULES:
        scripts = subset_scripts(table.column("subset").to_pylist(), table.column("original_text").to_pylist())
    entries = []
    for subset in sorted(counts):
        items, changed = counts[subset]
        entry: dict[str, Any] = {
            "dataset": dataset,
            "transformation": transformation,
            "seed": seed,
            "subset": subset,
            "items": items,
            "changed": changed,
            "share": round(changed / items, SHARE_DIGITS),
        }
        if subset in scripts:
            why_not = noise_scripts().why_not(transformation, scripts[subset])
            entry.update(script=scripts[subset], applicable=why_not is None, why_not=why_not)
        elif pair_rule:  # a pair edits the texts with a span and no other: applicable where it edited one
            entry.update(applicable=changed > 0, why_not=None if changed else NO_SPAN)
        entries.append(entry)
    return entries


def rules_of(manifest: Mapping[str, Any]) -> str | None:
    """The noise rules version a revision was made with (its config's `noise_rules`; absent: version 1)."""
    config = manifest.get("config")
    rules = config.get("noise_rules", "1") if isinstance(config, Mapping) else "1"
    return rules if isinstance(rules, str) else None


def recorded(manifest: Mapping[str, Any], dataset: str, transformation: str, seed: int) -> list[dict[str, Any]] | None:
    """The `change_shares` entries of one variant (None: the revision records none, as those made before them)."""
    shares = manifest.get("change_shares")
    if shares is None:
        return None
    return [e for e in shares if (e["dataset"], e["transformation"], e["seed"]) == (dataset, transformation, seed)]


def check_shares(
    manifest: Mapping[str, Any], dataset: str, transformation: str, seed: int, table: pa.Table, *, where: str
) -> None:
    """The recorded `change_shares` of one items file against the file itself: a difference is an IntegrityError."""
    entries = recorded(manifest, dataset, transformation, seed)
    if entries is None:
        return
    expected = share_entries(dataset, transformation, seed, table, rules=rules_of(manifest))
    if len(entries) != len(expected):
        raise IntegrityError(
            f"{where}: manifest change_shares list {len(entries)} subset(s) of "
            f"{transformation}_{seed}; its file holds {len(expected)}"
        )
    for entry, truth in zip(sorted(entries, key=lambda e: e["subset"]), expected):
        for key, value in truth.items():
            if entry.get(key) != value:
                raise IntegrityError(
                    f"{where}: manifest change_shares of {transformation}_{seed} subset "
                    f"{truth['subset']}: {key} is {entry.get(key)!r}; its file gives {value!r}"
                )
