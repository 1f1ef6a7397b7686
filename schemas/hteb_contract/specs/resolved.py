"""The rows a revision is made by: the manifest's `specs` block (issue 43).

Why: a row's columns decide what a revision holds and how it is scored (a transformation's axis,
steps, language plan, judge task and detectors; a dataset's subsets, splits and mteb settings; the
Noise rules' script table), and the installed tables change between releases. The block holds the
resolved rows of every table a run used, as the tables state them, and its sha256 is part of the
config hash: an edited row makes another configuration, never a silent change in what an old revision
means. `differences` names the first row and column in which two blocks differ.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input, yaml_input
from hteb_contract.specs import datasets, transformations
from hteb_contract.specs import noise_scripts as scripts_table

#: The block's layout; a reader meeting a later one refuses it in one line.
SPECS_VERSION = 1
#: The detector whose verdicts depend on a library's language models (its version is recorded).
LANGUAGE_DETECTOR = "wrong_language"
#: The block's keys, those the others derive from first (a transformation's axis before the axes it uses).
BLOCK_ORDER = ("version", "transformations", "datasets", "templates", "axes", "noise_scripts", "language_detector")


@cache
def _rows(path: str) -> Any:
    """A packaged table as its YAML states it, read once."""
    return yaml_input.read(Path(path))


def specs_block(
    dataset_names: Sequence[str],
    transformation_names: Sequence[str],
    *,
    noise_scripts: bool,
    language_detector: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The resolved rows of a run: its datasets' (by their row names) and transformations' rows in the run's order, every
    axis (they define the HTEB total, whichever the run used) and the templates its rows use, the Noise script table where the run's rules read it (`noise_scripts`: a rule
    of version 2 or later among them, as the generator knows its versions), and
    the language detector (`language_detector`, its facts) where a transformation checks for
    `wrong_language`."""
    table = _rows(str(transformations.TABLE_PATH))
    by_name = {row["name"]: row for row in table["transformations"]}
    chosen = [by_name[name] for name in transformation_names]
    used_templates = {step["template"] for row in chosen for step in row.get("steps", ())}
    data_rows = {row["name"]: datasets.ROW_MODEL.recorded(row) for row in _rows(str(datasets.TABLE))}
    block: dict[str, Any] = {
        "version": SPECS_VERSION,
        # a local folder no row names (its dataset.json says what it is, as the manifest's sources do)
        "datasets": [data_rows.get(name, {"name": name, "table": False}) for name in dataset_names],
        # every axis but one whose rows make revisions of their own and the run does not use (they define the
        # HTEB total, whichever the run used; a revision made before such an axis existed records the same rows)
        "axes": [a for a in table["axes"] if not a.get("own_revision") or a["name"] in {r["axis"] for r in chosen}],
        "templates": [template for template in table["templates"] if template["name"] in used_templates],
        "transformations": chosen,
    }
    if noise_scripts:
        block["noise_scripts"] = _rows(str(scripts_table.TABLE_PATH))
    if any(LANGUAGE_DETECTOR in row.get("detectors", ()) for row in chosen):
        if language_detector is None:
            raise ValueError("a run checking wrong_language records its language detector")
        block["language_detector"] = dict(language_detector)
    return json_input.plain(block)  # plain JSON values, as a manifest reads them back


def specs_hash(block: Mapping[str, Any]) -> str:
    """sha256 of the block's canonical JSON (what the config hash folds in)."""
    text = json.dumps(block, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def differences(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str | None:
    """Where two blocks first differ, as "transformations row 'paraphrasing': judge_task"; None if equal."""
    for key in sorted(
        ours.keys() | theirs.keys(), key=lambda k: (BLOCK_ORDER.index(k) if k in BLOCK_ORDER else len(BLOCK_ORDER), k)
    ):
        mine, other = ours.get(key), theirs.get(key)
        if mine == other:
            continue
        if (
            isinstance(mine, list)
            and isinstance(other, list)
            and all(isinstance(r, dict) and "name" in r for r in mine + other)
        ):
            rows, others = {r["name"]: r for r in mine}, {r["name"]: r for r in other}
            for name in [*rows, *(n for n in others if n not in rows)]:
                a, b = rows.get(name), others.get(name)
                if a != b:
                    column = (
                        next(c for c in sorted(a.keys() | b.keys()) if a.get(c) != b.get(c))
                        if a is not None and b is not None
                        else "the row itself"
                    )
                    return f"{key} row {name!r}: {column}"
            return f"{key}: the order of its rows"
        return key
    return None
