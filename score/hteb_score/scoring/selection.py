"""What a run scores of a revision beyond --datasets/--transformations/--seeds: the presets and the
judge-quality filter.

The presets are rows of the transformation table (`presets:` in hteb_contract's transformations.yaml):
`--preset minimal` is the paper's advice for a quick check (docs/scoring.md): paraphrasing, one length
transformation (expansion, else summarisation) and one language transformation (translation, else
cross-translation), on one dataset per task type (the revision's first, in its manifest's order, that
holds all three). `--preset full` is every dataset and transformation. `--min-judge Q` keeps a transformed item only when the mean of its judge scores (quality and
fluency, 1-5; the paper accepts at 3) is at least Q; items no judge rated (noise rules) are kept
and counted as unjudged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hteb_contract.errors import HtebError
from hteb_contract.item_columns import ItemColumns
from hteb_contract.common.registry import Registry
from hteb_contract.revision import Revision
from hteb_contract.specs.transformations import PresetSpec, transformation_table
from hteb_score.scoring.error_policy import ACTIONS, ErrorPolicyCount

#: The judge's scale: quality and fluency are rated 1-5.
JUDGE_SCALE = (1.0, 5.0)


def check_selection_arguments(
    *, datasets: Sequence[str] | None = None, on_error: Any = "original", min_judge: Any = None
) -> None:
    """What a Python caller (`get_benchmark`, `tasks_of`) passes where the CLI's options check it: an error policy
    hteb-score knows, a judge threshold from 1 to 5, a dataset list that names one or more; else one line."""
    if on_error not in ACTIONS:
        raise HtebError(f"on_error {on_error!r} is not one of {', '.join(ACTIONS)}")
    if min_judge is not None and not (
        isinstance(min_judge, (int, float))
        and not isinstance(min_judge, bool)
        and math.isfinite(min_judge)
        and JUDGE_SCALE[0] <= min_judge <= JUDGE_SCALE[1]
    ):
        raise HtebError(f"min_judge {min_judge!r} is not a number from 1 to 5 (or None: no judge filter)")
    if datasets is not None and (isinstance(datasets, str) or not list(datasets)):
        raise HtebError(f"datasets {datasets!r} names no dataset: give a list of names, or None for all")


@dataclass(frozen=True)
class Preset:
    """A preset row (`PresetSpec`) applied to a revision: each slot's first transformation the revision
    has, then one dataset per task type; no slots: every dataset and transformation."""

    spec: PresetSpec

    def choose(self, revision: Revision) -> tuple[list[str], list[str] | None]:
        """(datasets, transformations) of `revision`; one line naming what is missing when it lacks a part."""
        if self.spec.slots is None:
            return revision.dataset_names(), None
        held = {name: {t for t, _ in revision.variants(name)} for name in revision.dataset_names()}
        everywhere = set().union(*held.values()) if held else set()
        chosen = []
        for slot in self.spec.slots:
            found = next((t for t in slot if t in everywhere), None)
            if found is None:
                raise HtebError(f"--preset {self.spec.name}: revision {revision.label} has none of {' / '.join(slot)}")
            chosen.append(found)
        datasets: dict[str, str] = {}
        for source in revision.manifest["sources"]:
            if set(chosen) <= held[source["name"]]:
                datasets.setdefault(source["task_type"], source["name"])
        if not datasets:
            raise HtebError(
                f"--preset {self.spec.name}: no dataset of revision {revision.label} holds {', '.join(chosen)}"
            )
        return list(datasets.values()), chosen


#: The table's presets, by name (`--preset`'s choices and help).
PRESETS: Registry[Preset] = Registry(
    "preset", entries={spec.name: Preset(spec) for spec in transformation_table().presets}
)


def judge_means(items: ItemColumns) -> list[float | None]:
    """The mean of each item's judge quality and fluency; None where no judge rated it."""
    means: list[float | None] = []
    for quality, fluency in zip(items.quality, items.fluency):
        scores = [s for s in (quality, fluency) if s is not None]
        means.append(sum(scores) / len(scores) if scores else None)
    return means


def judge_kept(means: Sequence[float | None], min_judge: float | None) -> list[bool]:
    """Whether each item (its `judge_means`) is scored: below `min_judge` it is dropped; unjudged ones are kept."""
    if min_judge is None:
        return [True] * len(means)
    return [mean is None or mean >= min_judge for mean in means]


def require_judge_scores(revision: Revision, counts: Sequence[ErrorPolicyCount], min_judge: float | None) -> None:
    """Refuse --min-judge on a selection that no judge rated (a rule-only revision, or one made with
    the judge off): filtering would keep everything and say nothing."""
    if min_judge is not None and all(c.unjudged == c.items for c in counts):
        raise HtebError(
            f"--min-judge {min_judge:g}: revision {revision.label} has no judge scores for the selected "
            "transformations (rule-made items and revisions made without a judge have none)"
        )
