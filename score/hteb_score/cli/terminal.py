"""What the commands print: every message through `echo`, which shows a control character in it (an
escape sequence in a model name, a carriage return in a dataset's) as `\\x1b`, never sends it, so no
input can rewrite the terminal's screen or title (`hteb_contract.common.escape.terminal`)."""

from __future__ import annotations

import click

from hteb_contract.common.escape import terminal


def echo(message: str, err: bool = False) -> None:
    """Print `message` and a line break, its control characters shown (line breaks and tabs kept)."""
    click.echo(terminal(message), err=err)
