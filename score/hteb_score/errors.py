"""Errors a user can act on: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations


class HtebError(Exception):
    """Base class: the message is the whole one-line explanation shown to the user."""

    exit_code = 2


class ContractError(HtebError):
    """An object does not satisfy its JSON Schema (item record, manifest, result card)."""


class SourceError(HtebError):
    """A source dataset is missing, malformed or unknown."""


class IntegrityError(HtebError):
    """A revision's files do not match its manifest (missing, corrupted, unsafe path)."""


class StoreError(HtebError):
    """A revision store refused an operation (label conflict, not writable, not found)."""
