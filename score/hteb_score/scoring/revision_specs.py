"""Whether this scorer's tables still say what a revision was made by (issue 43).

A revision made since the manifest's `specs` block records the rows that made it. Its axes (which
transformation is on which, an axis's label and place in the HTEB total) the scorer reads from the
revision itself (`hteb_contract.taxonomy.of_manifest`), so an edit of them since changes nothing. Other
columns it still reads from its installed tables (whether a rule made a transformation and what the rule
needs of a script, a dataset's task, splits, subsets, main score and mteb settings, the Noise script
table): where the installed row says otherwise, the card would score the revision as
something it is not, so the run is refused in one line before anything loads, naming the row and the
column. Columns the scorer never reads (a judge task, a citation, a template's budget) may change.
A revision made before the block is scored with the installed tables, as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.revision import Revision
from hteb_contract.specs.resolved import differences, specs_block

#: Per table of the block, the columns the scorer reads (None: the whole table).
SCORED_COLUMNS: dict[str, tuple[str, ...] | None] = {
    "transformations": ("made_by", "needs"),
    "datasets": ("mteb_task", "task_type", "eval_split", "train_split", "subsets", "main_score", "evaluation"),
    "noise_scripts": None,
}


def _scored(block: Mapping[str, Any]) -> dict[str, Any]:
    """The block less what the scorer never reads."""
    out: dict[str, Any] = {}
    for table, columns in SCORED_COLUMNS.items():
        if table not in block:
            continue
        rows = block[table]
        out[table] = rows if columns is None else [
            {"name": row["name"], **{c: row[c] for c in columns if c in row}} for row in rows]
    return out


def check_revision_specs(revision: Revision) -> None:
    """Refuse, in one line, a revision whose recorded rows differ from the installed ones in a column
    the scorer reads; nothing for a revision made before the block."""
    recorded = revision.manifest.get("specs")
    if recorded is None:
        return
    made_by = f"hteb-generate {revision.manifest.get('hteb_generate_version', '?')}"
    try:
        installed = specs_block([row["name"] for row in recorded["datasets"]],
                                [row["name"] for row in recorded["transformations"]],
                                noise_scripts="noise_scripts" in recorded,
                                language_detector=recorded.get("language_detector") or {})
    except KeyError as err:
        raise HtebError(f"revision {revision.label!r} was made with a row this hteb-score's tables do not have "
                        f"({err.args[0]!r}); score it with the hteb-score of its release ({made_by})") from None
    where = differences(_scored(installed), _scored(recorded))
    if where is not None:
        raise HtebError(f"revision {revision.label!r}: its {where} differs from this hteb-score's table, which "
                        f"would score it as another benchmark; score it with the hteb-score of its release ({made_by})")
