"""A run's outputs from its work units: the statistics, the result card, result_card.md and the mteb
result files, written from a `ScorePart` (scoring/parts.py). A single run is the part of all its
datasets and a merge the union of parts, so both go through this one function and write the same."""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hteb_contract.common import json_input
from hteb_contract.taxonomy import recorded_in
from hteb_score.encoding.backends import precision_flags
from hteb_score.evaluators.protocol import PROTOCOLS
from hteb_score.report.card.card import CardResults, CardSubject, build_card, mteb_result_files
from hteb_score.report.card.outputs import write_outputs
from hteb_score.scoring.corpus_robustness import section
from hteb_score.scoring.item_measures import item_measures_block
from hteb_score.scoring.sensitivity import sensitivity_block
from hteb_score.scoring.parts import TIMING_TOTAL, ScorePart
from hteb_score.scoring.statistics import model_statistics
from hteb_score.strict_json import dumps

#: What two cards of the same units differ in: when each was made and how long it took.
PER_CARD = ("created", "timings")


def publish(part: ScorePart, folder: Path, earlier: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write the card and every output of the run `part` holds into `folder`; returns the card.
    Timings are the units' summed, plus the statistics computed here. Given the `earlier` card of the
    same output, a card that says the same but for PER_CARD keeps the earlier card's, so merging
    unchanged parts again rewrites no file (while every output is still rendered by today's code)."""
    started = time.perf_counter()
    units, identity = part.units, part.identity
    taxonomy = recorded_in(identity.to_dict())
    scores = [record for unit in units for record in unit.scores]
    drift = [row for u in units for row in u.drift]
    statistics = None
    if any(r.transformation != "original" for r in scores):
        statistics = model_statistics(scores, drift, taxonomy, in_points=True)
    timings = dict(part.timings)
    timings["statistics_s"] = time.perf_counter() - started
    timings[TIMING_TOTAL] = timings.get(TIMING_TOTAL, 0.0) + timings["statistics_s"]
    summarised = time.perf_counter()  # the per-item measures: measured while scoring, summarised here
    item_measures = item_measures_block(drift)
    hard = [row for u in units for row in u.hard] if "hard_twins" in identity.dataset else None
    pairs = sensitivity_block([row for u in units for row in u.sensitivity], hard)
    spent = time.perf_counter() - summarised
    timings["item_measures_s"] = timings.get("item_measures_s", 0.0) + spent
    timings[TIMING_TOTAL] += spent
    robustness = {u.dataset: u.corpus_robustness for u in units if u.corpus_robustness is not None}
    tasks = {unit.dataset: unit.task for unit in units}
    subject = CardSubject(
        identity.model,
        identity.encode,
        card_dataset(identity.dataset, [u.dataset for u in units]),
        PROTOCOLS.get(identity.protocol),
        identity.on_error,
        {**identity.selection, **identity.chosen},
        taxonomy,
        identity.package_versions,
    )
    card = build_card(
        subject,
        CardResults(
            scores,
            timings,
            settings={u.dataset: u.settings for u in units if u.settings is not None},
            error_policy=[entry for u in units for entry in u.error_policy],
            statistics=statistics,
            flags=part.flags(precision_flags(identity.encode)),
            corpus_robustness=section(robustness) if robustness else None,
            item_measures=item_measures,
            sensitivity=pairs,
            mteb_tasks={name: task.get("mteb_task") for name, task in tasks.items()},
            coverage=[c for u in units for c in u.coverage],
        ),
    )
    if earlier is not None and _says_the_same(earlier, card):
        card = {**card, **{key: earlier[key] for key in PER_CARD}}
    results = {variant: result for unit in units for variant, result in unit.results.items()}
    explorer = [{"model": identity.model.get("model_id"), **row} for u in units for row in u.explorer]
    outcomes = {variant: result.outcomes for variant, result in results.items() if result.outcomes is not None}
    write_outputs(folder, card, mteb_result_files(card, results, tasks), explorer, outcomes)
    return card


def card_dataset(dataset: Mapping[str, Any], datasets: list[str]) -> dict[str, Any]:
    """The card's `dataset` block: the run's provenance, the datasets the card scores and (recorded since issue 43)
    their languages as the revision states them, narrowed from the run's to these."""
    block = {**dataset, "datasets": datasets}
    if "languages" in dataset:
        block["languages"] = {name: dataset["languages"][name] for name in datasets if name in dataset["languages"]}
    return block


def _says_the_same(earlier: Mapping[str, Any], card: Mapping[str, Any]) -> bool:
    """Whether `card`, as its JSON reads back, says what `earlier` says but for PER_CARD (which it holds)."""
    if not all(key in earlier for key in PER_CARD):
        return False
    new = json_input.loads(dumps(card, what="result card"), "the result card")
    return {k: v for k, v in earlier.items() if k not in PER_CARD} == {
        k: v for k, v in new.items() if k not in PER_CARD
    }


def summary(card: Mapping[str, Any]) -> str:
    """The line a run prints: the model, protocol, Original and HTEB (Noise beside it), corpus
    robustness, how many flags, and the datasets a merge lacks."""
    agg = card["aggregates"]
    line = "original undefined" if agg["original"] is None else f"original {agg['original']:.2f}"
    if agg["hteb_total"] is not None:
        line += f", HTEB {agg['hteb_total']:.2f}" + ("" if agg["delta"] is None else f" ({agg['delta']:+.2f})")
        if agg["hteb_datasets"] < agg["datasets"]:
            line += (
                f" on {agg['hteb_datasets']} of {agg['datasets']} datasets (all: original {agg['original_all']:.2f})"
            )
    if agg["per_axis"].get("noise") is not None:  # beside the total, never in it
        noise = agg["axis_pairs"]["noise"]
        line += f"; Noise {noise['score']:.2f} ({noise['delta']:+.2f}, not in HTEB)"
    for name, block in (card.get("corpus_robustness") or {}).get("datasets", {}).items():
        kept = "undefined" if block["harmonic_mean"] is None else f"{block['harmonic_mean']:.3f}"
        line += f"; corpus robustness {name} {kept}"
    missing = [f["dataset"] for f in card["flags"] if f["code"] == "missing_dataset"]
    if missing:
        line += f"; MISSING {len(missing)} dataset(s): {', '.join(missing)}"
    if card["flags"]:
        line += f"; {len(card['flags'])} flag(s), see result_card.md"
    return f"{card['model']['model_id']} [{card['protocol']}] {line}"
