"""`hteb-score tables`: the docs' findings tables, written from the committed result cards and work units."""

from __future__ import annotations

from pathlib import Path

import click

from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.errors import HtebError
from hteb_score.cli.terminal import echo
from hteb_score.cli.options import GivenPath

DEFAULT_FILES = (Path("docs/findings.md"), Path("docs/comparing.md"), Path("docs/sensitivity.md"))


def read_text(path: Path) -> str:
    """A text file the command reads or compares with what it writes: a missing file or one that is not UTF-8
    (a binary file named by mistake) is one line, not a traceback."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise HtebError(f"{path}: no such file") from None
    except UnicodeDecodeError as err:
        raise HtebError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None


class StaleTables(HtebError):
    """A generated table differs from what its cards or parts give (--check): exit 1, as a failed check."""

    exit_code = 1


@click.command("tables")
@click.argument("files", nargs=-1, type=GivenPath(dir_okay=False, path_type=Path))
@click.option(
    "--check", is_flag=True, help="Write nothing; exit 1 when a table differs from what its cards or parts give."
)
def tables(files: tuple[Path, ...], check: bool) -> None:
    """Rewrite each table between `<!-- hteb:table NAME FOLDER -->` and `<!-- /hteb:table -->` in FILES
    (default docs/findings.md, docs/comparing.md and docs/sensitivity.md) from the result cards (score tables) or the work
    units (unit-times) in FOLDER (relative to the file)."""
    from hteb_score.report.site.findings import Readings, update_tables

    stale: list[str] = []
    read: Readings = {}
    for path in files or DEFAULT_FILES:
        text = read_text(path)
        try:
            updated = update_tables(text, path.parent, read)
        except HtebError as err:
            raise HtebError(f"{path}: {err}") from None
        if updated == text:
            continue
        stale.append(str(path))
        if not check:
            atomic_write_text(path, updated)
    if check and stale:
        raise StaleTables(f"tables differ from their cards or parts in {', '.join(stale)}: run hteb-score tables")
    echo(f"{'up to date' if check else 'written'}: {', '.join(map(str, files or DEFAULT_FILES))}")
