"""The run's units: every item of a revision (seed, dataset, transformation, text) and the distinct
units that transform them. The run (pipeline.py) transforms these units and the plan (plan.py)
counts them, so what is planned is what runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hteb_contract.sources import SourceDataset
from hteb_contract.tasks import TextRef

from hteb_generate.setup.config import GenerateConfig
from hteb_generate.run.generation import TextJob
from hteb_generate.transform.transformations import TRANSFORMATIONS, plan_languages


@dataclass(frozen=True)
class PlannedItem:
    """One item of the revision: which text of which dataset, and the unit that transforms it."""

    seed: int
    dataset: str
    transformation: str
    task_type: str
    ref: TextRef
    unit: TextJob


def plan_units(cfg: GenerateConfig, datasets: Mapping[str, SourceDataset]) -> tuple[list[TextJob], list[PlannedItem]]:
    """Every item (seed, dataset, transformation, text) and the distinct units they map to."""
    units: dict[tuple, TextJob] = {}
    items = []
    for seed in cfg.seeds:
        for name, dataset in datasets.items():
            for t_name in cfg.llm_transformations:
                transformation = TRANSFORMATIONS.get(t_name)
                for ref in dataset.iter_texts():
                    item = f"{ref.table}/{ref.item_id}/{ref.field}"
                    plan = plan_languages(t_name, seed=seed, dataset=name, item=item, source=ref.language)
                    unit = TextJob(seed, name, transformation, ref.text, plan)
                    unit = units.setdefault(unit.key, unit)
                    items.append(PlannedItem(seed, name, t_name, dataset.info.task_type, ref, unit))
    return list(units.values()), items
