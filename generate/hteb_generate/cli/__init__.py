"""The `hteb-generate` command line (`app`): generate, plan, doctor, reproduce."""

from hteb_generate.cli.app import main

__all__ = ["main"]
