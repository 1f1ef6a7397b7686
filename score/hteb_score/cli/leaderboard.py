"""`hteb-score leaderboard`: the documentation site's leaderboard page and its CSV, from committed result cards."""

from __future__ import annotations

from pathlib import Path

import click
from hteb_contract.common.output_set import write_together
from hteb_contract.errors import HtebError

from hteb_score import CARD_FILE

from hteb_score.cli.tables import StaleTables, read_text
from hteb_score.cli.terminal import echo
from hteb_score.cli.options import GivenPath


@click.command("leaderboard")
@click.argument("cards", type=GivenPath(file_okay=False, path_type=Path))
@click.option(
    "--facts",
    type=GivenPath(dir_okay=False, path_type=Path),
    required=True,
    help="Model facts (JSON list: model, licence, parameters, max_tokens), as `python tests/models.py "
    "--facts` writes them; a card's own facts come first.",
)
@click.option(
    "--out",
    type=GivenPath(dir_okay=False, path_type=Path),
    required=True,
    help="The page to write (e.g. docs/leaderboard.html); its CSV is written beside it.",
)
@click.option(
    "--sensitivity",
    type=GivenPath(file_okay=False, path_type=Path),
    help="A folder of result cards scored on a Sensitivity revision (`*/result_card.json`): each model's "
    "minimal-pair figures beside its robustness, in a section, a board column and a figure of their own.",
)
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 when the page or its CSV differ from what the cards give."
)
def leaderboard(cards: Path, facts: Path, out: Path, sensitivity: Path | None, check: bool) -> None:
    """Write the leaderboard page OUT and OUT's folder/leaderboard.csv from the result cards in
    CARDS (`*/result_card.json`) and the model facts file."""
    from hteb_score.report.site.leaderboard_data import leaderboard_data, read_facts
    from hteb_score.report.site.leaderboard_page import CSV_NAME, csv_text, render

    if out.name == CSV_NAME:
        raise HtebError(f"--out {out} is the CSV the page is written beside: name the page otherwise")
    table = out.with_name(CSV_NAME)
    try:  # before any work: a file there that is not UTF-8 text is none this command wrote
        before = {path: read_text(path) if path.is_file() else None for path in (out, table)}
    except HtebError as err:
        raise HtebError(f"{err}, so no page or CSV this command wrote: move it or choose another --out") from None
    data = leaderboard_data(cards, read_facts(facts), sensitivity)
    for note in data["notes"]:
        echo(f"note: {note}", err=True)
    files = {out: render(data), table: csv_text(data)}
    stale = [path for path, text in files.items() if before[path] != text]
    if check:
        if stale:
            raise StaleTables(f"differs from its cards: {', '.join(map(str, stale))}: run hteb-score leaderboard")
        echo(f"up to date: {', '.join(map(str, files))}")
        return
    if stale:  # the page and its CSV together: never the page of new cards beside the CSV of old ones
        sources = [Path(cards), *([sensitivity] if sensitivity else [])]
        write_together(files, inputs=[facts, *(p for s in sources for p in sorted(s.glob(f"*/{CARD_FILE}")))])
    echo(f"written: {', '.join(map(str, files))}")
