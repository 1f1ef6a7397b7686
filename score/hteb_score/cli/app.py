"""`hteb-score`: the researcher's command line.

`hteb-score MODEL_ID [options]` scores a model (the default command, `score`); the other
commands inspect revisions and compare result cards. Errors a user can fix are printed as one
line and exit with status 2; no traceback.
"""

from __future__ import annotations

import sys

import click

from hteb_contract.errors import HtebError, end_process
from hteb_score import DEFAULT_STORE, SAMPLE_REVISION, __version__
from hteb_score.cli import options
from hteb_score.cli.terminal import echo


class DefaultCommandGroup(click.Group):
    """A group whose arguments go to `score` unless they start with a command or --help/--version."""

    default_command = "score"

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        group_options = ("-h", "--help", "--version")
        if not (args and (args[0] in self.commands or args[0] in group_options)):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hteb-score")
def cli() -> None:
    """Score sentence-embedding models on HTEB: MTEB tasks on original and LLM-transformed text.

    \b
    hteb-score MODEL_ID                 score a model on the bundled sample revision
    hteb-score MODEL_ID --store hf://OWNER/NAME --revision LABEL
    hteb-score verify --store STORE --revision LABEL
    hteb-score revisions --store STORE
    hteb-score MODEL_ID --part DATASETS --out PART   one work unit; then hteb-score merge PART... --out DIR
    hteb-score MODEL_A MODEL_B --out DIR [--ray-address local|auto|ADDRESS]   work units, cards, comparison

    Every command's default store is the sample store bundled with hteb-score.
    """


@cli.command()
@click.option(
    "--store",
    default=DEFAULT_STORE,
    help="Revision store: a path, file://PATH or hf://OWNER/NAME. "
    "Default: the sample store bundled with hteb-score, as for every command.",
)
@click.option(
    "--revision",
    "ref",
    default=SAMPLE_REVISION,
    show_default=True,
    help="Label, content hash or Hub commit of the revision.",
)
@click.option("--datasets", default=None, help="Comma-separated datasets to verify (default: all).")
def verify(store: str, ref: str, datasets: str | None) -> None:
    """Download (if needed) and verify a revision: manifest schema and layout, every file's sha256,
    each source copy, every item record (schema, file, source text, one per text) and the manifest's
    change shares (the share of each subset's texts its transformation changed) against the item files."""
    from hteb_contract.stores import open_store

    revision = open_store(store).fetch(ref, datasets=options.names(datasets, "--datasets"))
    checked = revision.check_content()
    skipped = [n for n in revision.dataset_names() if n not in checked.datasets]
    line = (
        f"ok: {revision.label} ({revision.revision_id}) - {len(checked.datasets)} of "
        f"{len(revision.dataset_names())} datasets verified: {', '.join(checked.datasets)}; {checked.files} files "
        f"match their sha256; {checked.item_files} item files ({checked.records} records) match the item schema, "
        f"their file and their source texts"
    )
    echo(line + (f"; not verified: {', '.join(skipped)}" if skipped else ""))


@cli.command()
@click.argument("ref", metavar="[REVISION]", default=SAMPLE_REVISION)
@click.option(
    "--store",
    default=DEFAULT_STORE,
    help="Revision store: a path, file://PATH or hf://OWNER/NAME. "
    "Default: the sample store bundled with hteb-score, as for every command.",
)
def cite(ref: str, store: str) -> None:
    """Print the BibTeX to cite for a revision (default: the bundled sample): HTEB, the revision itself (label,
    content hash, store) and every source dataset it holds, from the rows the revision was made by."""
    from hteb_contract.citations import bibliography
    from hteb_contract.stores import open_store

    revision = open_store(store).fetch(ref, datasets=[])
    echo(bibliography(revision.manifest, store).rstrip("\n"))


@cli.command()
@click.option(
    "--store",
    default=DEFAULT_STORE,
    help="Revision store: a path, file://PATH or hf://OWNER/NAME. "
    "Default: the sample store bundled with hteb-score, as for every command.",
)
def revisions(store: str) -> None:
    """List the labels published in a store, oldest first, each with the revision it names (a local
    store's content hash, a Hub commit) and when it was published (`-` where the store does not say);
    a damaged label file is listed as corrupt."""
    from hteb_contract.stores import open_store

    opened = open_store(store)
    if not opened.exists():
        raise HtebError(f"no revision store at {opened.uri}")
    for entry in opened.published():
        echo(entry.line())
    for label, why in opened.corrupt_labels().items():
        echo(f"{label} (corrupt: {why})")


from hteb_score.cli.compare import compare  # noqa: E402  (light: heavy imports happen inside the command)

cli.add_command(compare)

from hteb_score.cli.merge import carry, merge  # noqa: E402

cli.add_command(merge)
cli.add_command(carry)

from hteb_score.cli.score import score  # noqa: E402

cli.add_command(score)

from hteb_score.cli.tables import tables  # noqa: E402

cli.add_command(tables)

from hteb_score.cli.leaderboard import leaderboard  # noqa: E402

cli.add_command(leaderboard)


def _error(message: str) -> None:
    """The one line on stderr: a message that quotes user input with a line break stays one line."""
    echo("hteb-score: error: " + " ".join(message.splitlines()), err=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the CLI, turning user errors (and the OS refusing a read or write: a full
    disk, a name too long) into one line on stderr. Run as the command (`argv` None), a refusal ends
    the process at once (errors.end_process: no abort in finalisation after the line)."""
    code = _run(argv)
    if argv is None and code != 0:
        end_process(code)
    return code


def _run(argv: list[str] | None) -> int:
    try:
        cli.main(args=argv, prog_name="hteb-score", standalone_mode=False)
    except HtebError as err:
        _error(str(err))
        return err.exit_code
    except click.exceptions.Abort:
        echo("hteb-score: aborted", err=True)
        return 130
    except click.ClickException as err:
        _error(err.format_message())
        return err.exit_code
    except OSError as err:
        _error(f"{err.strerror or err}: {err.filename}" if err.filename else str(err))
        return HtebError.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(main())
