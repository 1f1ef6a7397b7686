"""A run of several models and/or datasets as work units (`hteb-score MODEL... --out DIR`, with
`--ray-address` spread over a Ray cluster): every (model, dataset) unit scored alone into its part,
kept in the run folder as it finishes (scoring/run_folder.py), then each model's parts merged into
its card exactly as `hteb-score merge` merges them, and, for several models, the comparison and the
report page of `hteb-score compare`.

    DIR/<model>/       each model's result_card.json, result_card.md and mteb/ (a single run's outputs)
    DIR/comparison/    comparison.json, comparison.md, report.html, plots (several models)
    DIR/parts/, DIR/hteb_run.json   the units' parts and the command's settings (the run folder)

The same command run again scores only the units without a part: a killed run resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from hteb_score import CARD_FILE
from hteb_score.cli.output import OutputFolder
from hteb_score.report.compare import comparison_files
from hteb_score.report.compare.analysis import compare
from hteb_score.report.compare.inputs import load_inputs
from hteb_score.report.card.run_outputs import publish, summary
from hteb_score.scoring.data import planned_datasets
from hteb_score.scoring.options import ScoreOptions
from hteb_score.scoring.parts import ScorePart, read_parts, scored_elsewhere
from hteb_score.scoring.run_folder import PARTS, RunFolder
from hteb_score.scoring.unit_scorer import Done, WorkUnit

COMPARISON = "comparison"
RESERVED = (PARTS, COMPARISON)  # folder names of the run itself: a model of one of these names gets its hash too


class Executor(Protocol):
    """Where units are scored: in this process one after the other (scoring.unit_scorer.InProcess)
    or on a Ray cluster (scoring.ray_units.RayCluster), entered before the run folder is touched
    (an unreachable cluster is refused before anything is written)."""

    #: the package versions its units are scored under, where this process knows them (in process); None on a
    #: cluster, whose nodes have their own
    @property
    def packages(self) -> Mapping[str, str] | None: ...

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...

    def run(self, units: Sequence[WorkUnit], done: Done) -> None: ...


def run_units(
    models: Mapping[str, ScoreOptions],
    settings: Mapping[str, Any],
    out: Path,
    *,
    overwrite: bool,
    executor: Executor,
    echo: Callable[[str], None],
) -> list[str]:
    """Score every unit of `models` (folder name -> its options) not kept yet, then write the cards
    and the comparison under `out`; returns the result lines (one per model, one for the comparison).
    `settings`: the command's, recorded in the run folder; `echo`: progress, one line each."""
    first = next(iter(models.values()))
    planned = planned_datasets(first)  # the same data options for every model: checked before any model loads
    units = [WorkUnit.of(name, dataset, opts) for name, opts in models.items() for dataset in planned]
    with RunFolder.held(out, settings, overwrite=overwrite) as folder:
        here = executor.packages
        kept = [folder.kept(unit) for unit in units]
        # a part kept under other package versions would not merge with the units scored now: scored again too
        stale = [p is not None and here is not None and scored_elsewhere(p.identity, here) is not None for p in kept]
        todo = [unit for unit, part, old in zip(units, kept, stale) if part is None or old]
        echo(
            f"{len(units)} work unit(s), {len(models)} model(s) x {len(planned)} dataset(s): "
            f"{len(units) - len(todo)} kept from an earlier run, {len(todo)} to score"
            + (f" ({sum(stale)} kept under other package versions: scored again)" if any(stale) else "")
        )
        finished = 0

        def done(unit: WorkUnit, part: ScorePart) -> None:
            nonlocal finished
            folder.keep(unit, part)
            finished += 1
            echo(
                f"unit {finished}/{len(todo)}: {unit.model} on {unit.dataset} scored in {part.timings['total_s']:.1f} s"
            )

        if todo:
            for name, opts in models.items():
                if any(unit.model == name for unit in todo):
                    for line in (opts.encoder_note, opts.runtime_note):
                        if line:
                            echo(f"{name}: {line}")
            executor.run(todo, done)
        lines, cards = [], []
        for name in models:  # merged as `hteb-score merge` merges the parts
            merged = read_parts([folder.part_folder(unit) for unit in units if unit.model == name])
            output = OutputFolder.check(out / name, marker=CARD_FILE, overwrite=True)
            with output.staged() as staged:
                card = publish(merged, staged)
            lines.append(f"{summary(card)} -> {output.path}")
            cards.append(output.path / CARD_FILE)
        if len(cards) > 1:
            lines.append(_compare(cards, out / COMPARISON))
    return lines


def _compare(cards: Sequence[Path], out: Path) -> str:
    """`hteb-score compare CARDS --out OUT` with its defaults: the comparison and the report page."""
    comparison = compare(load_inputs(cards, []))
    output = OutputFolder.check(out, marker="comparison.json", overwrite=True)
    with output.staged() as staged:
        written = comparison_files.save(comparison, staged)
    return (
        f"compared {len(cards)} models on {len(comparison.datasets)} dataset(s), basis {comparison.basis.name} "
        f"-> {output.path}: {', '.join(written)}"
    )
