"""The `merge` command: `hteb-score merge PART... --out DIR` joins the parts that work units wrote
(`hteb-score MODEL --part DATASETS`) into the card and outputs one run over their datasets writes."""

from __future__ import annotations

from pathlib import Path

import click

from hteb_contract.common import json_input
from hteb_contract.errors import HtebError
from hteb_score import CARD_FILE
from hteb_score.cli.output import OutputFolder
from hteb_score.cli import options
from hteb_score.cli.options import GivenPath
from hteb_score.cli.terminal import echo


@click.command()
@click.argument("parts", nargs=-1, required=True, type=GivenPath(path_type=Path))
@click.option(
    "--out",
    type=GivenPath(path_type=Path, file_okay=False),
    required=True,
    help="Folder for the merged result_card.json, result_card.md and mteb/ JSON: new or empty, or an "
    "earlier result with --overwrite. Written whole or not at all.",
)
@click.option("--overwrite", is_flag=True, help="Replace the earlier result in --out, whole.")
@click.option(
    "--keep-timings",
    is_flag=True,
    help="With --overwrite: where the new card says what the earlier one in --out says but for when it "
    "was made and how long it took (`created`, `timings`), keep those of the earlier card, so merging "
    "unchanged parts again changes no file (`make findings`).",
)
@click.option(
    "--datasets",
    default=None,
    metavar="NAMES",
    help="Comma-separated datasets: the card of a run over just these (parts holding others are left "
    "out), e.g. six datasets of a whole-revision run's parts.",
)
def merge(parts: tuple[Path, ...], out: Path, overwrite: bool, keep_timings: bool, datasets: str | None) -> None:
    """Merge PARTS (folders written by `hteb-score ... --part DATASETS`) into one result: the same
    card, mteb files and statistics a single run over their datasets writes. Parts of another
    revision, protocol, model, backend or selection are refused; a dataset given twice must be the
    same; a planned dataset no part holds is named and flagged `missing_dataset` in the card.
    --datasets makes the card of a run over a subset of the parts' plan."""
    from hteb_score.report.card.run_outputs import PER_CARD, publish, summary
    from hteb_score.scoring.parts import read_parts

    output = OutputFolder.check(out, marker=CARD_FILE, overwrite=overwrite)
    names = options.names(datasets, "--datasets")
    merged = read_parts(parts, names)  # every part read and checked before anything is written
    earlier = _earlier_card(output.path / CARD_FILE) if keep_timings else None
    with output.staged() as folder:
        card = publish(merged, folder, earlier)
    kept = earlier is not None and all(card[key] == earlier.get(key) for key in PER_CARD)
    echo(
        f"{summary(card)} -> {output.path}" + (" (the earlier card's date and timings kept: unchanged)" if kept else "")
    )


def _earlier_card(path: Path) -> dict | None:
    """The card an earlier merge wrote to --out (None where there is none, or none that reads as a card: its
    timings are kept only where they are stated times, part_checks.check_timings)."""
    from hteb_score.scoring.part_checks import check_timings

    try:
        card = json_input.read(path, HtebError)
        check_timings(card.get("timings") if isinstance(card, dict) else None, str(path))
    except (OSError, ValueError, HtebError):
        return None
    return card


@click.command()
@click.argument("part", type=GivenPath(path_type=Path))
@click.option(
    "--store", required=True, help="Store of the revision to carry the part to: a path, file://PATH or hf://OWNER/NAME."
)
@click.option("--revision", "ref", required=True, help="Label, content hash or Hub commit of that revision.")
@click.option(
    "--from-store",
    default=None,
    help="Store of the revision the part was scored on (default: the store the part names).",
)
@click.option(
    "--from-revision",
    default=None,
    help="That revision in --from-store (default: the one the part "
    "names), or a rebuild of it (with --scored-manifest).",
)
@click.option(
    "--scored-manifest",
    type=GivenPath(path_type=Path),
    default=None,
    help="The manifest (or its revision folder) of the revision the part was scored on, where "
    "--from-revision rebuilds its data (e.g. docs/revisions/noise-1339): its data files must be equal.",
)
@click.option(
    "--out",
    type=GivenPath(path_type=Path, file_okay=False),
    required=True,
    help="Folder for the carried hteb_part.json: new or empty, or an earlier part with --overwrite.",
)
@click.option("--overwrite", is_flag=True, help="Replace the earlier part in --out, whole.")
def carry(
    part: Path,
    store: str,
    ref: str,
    from_store: str | None,
    from_revision: str | None,
    scored_manifest: Path | None,
    out: Path,
    overwrite: bool,
) -> None:
    """Carry PART (a work unit scored on one revision) to a newer revision whose data for the part's datasets
    the scorer reads the same (sources, texts, errors and judge scores, compared per dataset on both
    revisions, each verified): the part of the same run on the new revision, each unit flagged
    `carried_from_revision`, so only the datasets a new revision changed are scored again. A dataset
    whose data differ is refused in one line."""
    from hteb_contract.errors import HtebError
    from hteb_contract.revision import MANIFEST, load_manifest
    from hteb_contract.stores import open_store
    from hteb_score.scoring.carry import carry_part
    from hteb_score.scoring.parts import PART_FILE, read_part

    output = OutputFolder.check(out, marker=PART_FILE, overwrite=overwrite)
    scored = read_part(part)
    names = [u.dataset for u in scored.units]
    old_store = from_store or str(scored.identity.dataset.get("repo_id"))
    old = open_store(old_store).fetch(from_revision or str(scored.identity.dataset.get("revision")), datasets=names)
    new = open_store(store).fetch(ref, datasets=names)
    reference = None
    if scored_manifest is not None:
        if scored_manifest.is_file() and scored_manifest.name != MANIFEST:
            raise HtebError(f"--scored-manifest {scored_manifest}: give a revision's {MANIFEST} or its folder")
        reference = load_manifest(scored_manifest.parent if scored_manifest.is_file() else scored_manifest)
    carried = carry_part(scored, old, new, store, str(part), reference)
    with output.staged() as folder:
        carried.write(folder)
    echo(f"carried {', '.join(names)} from {old.label} to {new.label} -> {output.path}")
