"""The `hteb-score` command line: the group and its entry point (`app`), `score`, `merge` and `compare`,
the checks of option values (`options`) and the atomic output folder (`output`)."""

from hteb_score.cli.app import main

__all__ = ["main"]
