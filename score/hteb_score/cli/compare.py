"""`hteb-score compare`: several models' HTEB results as tables, plots and model-card YAML."""

from __future__ import annotations

from pathlib import Path

import click

from hteb_contract.taxonomy import AXES, PAPER_TRANSFORMATIONS
from hteb_score.report.compare.basis import BASES
from hteb_score.report.compare.chance import row_name
from hteb_score.report.compare.comparison import coverage_cell, figure_cell, leaderboard_cell
from hteb_score.report.formatting import column_label
from hteb_score.report.compare.pairwise import groups_sentence
from hteb_score.cli.output import OutputFolder
from hteb_score.cli.terminal import echo
from hteb_score.stats.hodges_lehmann import CI_METHODS
from hteb_score.cli.options import GivenPath

TABLE_HELP = f"""\b
Scores table (--scores-table, .csv or .json): one row per model and dataset,
scores in points (0-100). Columns:
  model, dataset      required: who was scored on what
  original            required: score on the untouched dataset
  hteb                HTEB total on the dataset (mean of the three axis scores)
  {", ".join(AXES)}
                      per-axis scores (mean over the axis's transformations)
  {", ".join(PAPER_TRANSFORMATIONS[:4])},
  {", ".join(PAPER_TRANSFORMATIONS[4:])},
  {", ".join(AXES["noise"][:3])},
  {", ".join(AXES["noise"][3:])}
                      per-transformation scores (mean over seeds)
  task_type           optional: needed for the split-half reliability
  revision            optional: dataset revision the row was scored on
  protocol            optional: evaluation protocol (hteb or mteb)
At least one of hteb / an axis / a transformation column is required. Missing
axis and total scores are derived (axis = mean of its transformations, hteb =
mean of the paper's three axes, never noise). Other columns are ignored. Lines
starting with '#' are comments. A .json table is a list of such row objects."""


@click.command(
    "compare",
    help=f"""Compare models: leaderboard, model against model (every pair's Hodges-Lehmann shift
and Wilcoxon p, Shaffer over the pairs: rank intervals and groups of models that cannot be told
apart), Kendall tau ranking stability, transformation effects (Hodges-Lehmann, Wilcoxon, Holm)
and split-half reliability, as JSON, Markdown and PNG plots.

CARDS are result-card JSON files (one model each) made on the same dataset revision
under the same protocol (mteb result folders via --mteb-results count the same); inputs that differ, or that do not say while others do, are
refused unless --force (comparison.json then records it).

{TABLE_HELP}

\b
Writes to --out: comparison.json (schemas/comparison.v1), comparison.md,
axis_dumbbell.png, delta_heatmap.png, drift_quality.png (cards with rated
drift only) and, per card, model_index/<model>/model-index.yaml
and, for a revision on the Hub, model_index/<model>/.eval_results/hteb-LABEL.yaml
(and add-to-dataset-eval.yaml: the eval.yaml tasks an ad hoc selection needs).""",
)
@click.argument("cards", nargs=-1, type=GivenPath(dir_okay=False, path_type=Path))
@click.option(
    "--scores-table",
    "tables",
    multiple=True,
    type=GivenPath(dir_okay=False, path_type=Path),
    help="CSV/JSON table of per-dataset scores (see above); may be repeated.",
)
@click.option(
    "--mteb-results",
    "mteb_dirs",
    multiple=True,
    type=GivenPath(file_okay=False, path_type=Path),
    help="A folder of mteb results (an mteb cache, hteb-score's OUT/mteb, or its results/ folder): each model "
    "in it, the original from results/<model>/<revision>/, each variant from its HTEB experiment folder; "
    "may be repeated.",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=GivenPath(file_okay=False, path_type=Path),
    help="Output folder: new or empty, or an earlier comparison with --overwrite. Written whole or not at all.",
)
@click.option("--overwrite", is_flag=True, help="Replace the earlier comparison in --out, whole.")
@click.option(
    "--force",
    is_flag=True,
    help="Compare inputs of different (or unstated) dataset revisions or protocols (the output says so).",
)
@click.option(
    "--splits",
    "n_splits",
    default=1000,
    show_default=True,
    type=click.IntRange(1, 100_000),
    help="Random task-stratified splits for the split-half reliability.",
)
@click.option(
    "--ci",
    "ci_method",
    default="walsh",
    show_default=True,
    type=click.Choice(list(CI_METHODS)),
    help="HL shift CI: exact signed-rank (Walsh averages) or percentile bootstrap (1000 resamples).",
)
@click.option(
    "--basis",
    default="common",
    show_default=True,
    type=click.Choice(BASES.names()),
    help="What the leaderboard and the heat map rest on: common = the datasets x transformations every "
    "model has (fair ranks); own = each model on all it has (its card's figures). Every output states it "
    "and shows a model's card figure beside any figure that differs.",
)
@click.option(
    "--seed",
    default=0,
    show_default=True,
    type=click.IntRange(0, 2**32 - 1),
    help="Seed of the split-half splits and the bootstrap.",
)
def compare(
    cards: tuple[Path, ...],
    tables: tuple[Path, ...],
    mteb_dirs: tuple[Path, ...],
    out_dir: Path,
    overwrite: bool,
    force: bool,
    n_splits: int,
    ci_method: str,
    basis: str,
    seed: int,
) -> None:
    from hteb_score.report.compare import comparison_files
    from hteb_score.report.compare.analysis import compare as run_compare
    from hteb_score.report.compare.inputs import load_inputs
    from hteb_score.report.card.model_index import EVAL_ADDITIONS

    output = OutputFolder.check(out_dir, marker="comparison.json", overwrite=overwrite)
    models = load_inputs(cards, tables, mteb_dirs)
    comparison = run_compare(models, force=force, n_splits=n_splits, seed=seed, ci_method=ci_method, basis=basis)
    with output.staged() as folder:
        written = comparison_files.save(comparison, folder)
    for warning in comparison.warnings:
        echo(f"warning: {warning}", err=True)
    if "delta_heatmap.png" not in written:
        echo("note: no delta heat map (the inputs have Original scores only)", err=True)
    if "drift_quality.png" not in written:
        echo("note: no drift vs judge quality plot (no input carries rated drift items)", err=True)
    if comparison.lead is not None:
        echo(comparison.lead.sentence())
    for path in sorted(p for p in comparison_files.model_index(comparison) if p.endswith(EVAL_ADDITIONS)):
        echo(
            f"note: {path} lists task ids the revision's eval.yaml does not declare (an ad hoc selection); "
            "add its tasks to the dataset repo's eval.yaml for the .eval_results file beside it to attach",
            err=True,
        )
    for row in comparison.leaderboard:
        if comparison.has_total or comparison.lead is None:
            shown = f"HTEB {figure_cell(row, 'hteb')} ({figure_cell(row, 'delta', sign=True)})"
        else:
            shown = f"{column_label(comparison.lead.axis)} {leaderboard_cell(row, comparison.lead.axis)}"
        echo(
            f"{row_name(row.model, row.chance)}: original {figure_cell(row, 'original')}, {shown} "
            f"on {coverage_cell(row)}"
            f", rank interval and group {comparison.rank_interval(row)}"
        )
    for ranking in comparison.pairwise.values():
        if len(ranking.ranks) > 1:
            echo(f"model against model: {groups_sentence(ranking)}")
    echo(
        f"compared {len(models)} model(s) on {len(comparison.datasets)} dataset(s), basis {comparison.basis.name} "
        f"({comparison.basis.description}) -> {output.path}: {', '.join(written)}"
    )
