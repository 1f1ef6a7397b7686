"""The commit each Hub model of a run that the registry names by a branch stands for, resolved once,
before the doctor and before any call.

Why once, as a fact: the doctor's summary names the commit, the disk check looks for its snapshot,
and the engines load it, key the call cache by it and record it in every item, the manifest and
MANIFEST.md: all of them read the one answer `resolve_pins` put into the `Facts`, never `main`.
A branch neither the Hugging Face cache nor the Hub can resolve is the doctor's one-line problem.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hteb_contract.errors import HtebError

from collections.abc import Mapping
from typing import Any

from hteb_generate.engine.models import MODELS, ModelSpec, branch_commit
from hteb_generate.setup.config import GenerateConfig
from hteb_generate.setup.engine_plan import engine_slots
from hteb_generate.setup.machine import Facts, Pin


def resolve_pins(cfg: GenerateConfig, facts: Facts) -> Facts:
    """`facts` with a pin for every branch-named model of the run's engines (from the cache at
    `facts.hf_cache`, else the Hub); a branch pinned already (by the CLI's doctor) is not asked again."""
    if not cfg.llm_transformations:
        return facts  # the rules make every text: no model loads
    pins = dict(facts.pins)
    cache = Path(facts.hf_cache) if facts.hf_cache else None
    for slot in engine_slots(cfg, facts):
        key = f"{slot.spec.model_id}@{slot.spec.revision}"
        if slot.spec.pinned or key in pins:
            continue
        try:
            pins[key] = Pin(*branch_commit(slot.spec.model_id, slot.spec.revision, cache))
        except HtebError as err:
            pins[key] = Pin(None, str(err))
    return replace(facts, pins=pins)


#: Where a regeneration's pins come from.
MANIFEST_SOURCE = "the revision's manifest"


def recorded_pins(manifest: Mapping[str, Any]) -> dict[str, Pin]:
    """The commit each branch-named registry model of a revision's run loaded, as its manifest records it
    (`generator`, `judge`): `reproduce` loads that commit, never what the branch names today."""
    pins = {}
    for block in (manifest.get("generator"), manifest.get("judge")):
        if not block or not block.get("model_id"):
            continue  # a rule-made revision: no model
        for _, spec in MODELS.items():
            if spec.model_id == block["model_id"] and not spec.pinned:
                pins[f"{spec.model_id}@{spec.revision}"] = Pin(block["revision"], MANIFEST_SOURCE)
    return pins


def unpinned_problem(spec: ModelSpec, facts: Facts) -> str | None:
    """Why `spec` (as the run's facts pin it) names no commit: its branch's resolution failure."""
    if spec.pinned:
        return None
    pin = facts.pins.get(f"{spec.model_id}@{spec.revision}")
    return pin.source if pin is not None else f"{spec.model_id}@{spec.revision} was not resolved to a commit"


def pins_text(facts: Facts) -> str:
    """The branches resolved for the run, for the doctor's summary: "ID@main is COMMIT (from the Hub)"."""
    return "; ".join(f"{key} is {p.commit} (from {p.source})" for key, p in facts.pins.items() if p.commit)
