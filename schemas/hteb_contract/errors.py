"""Errors a user can act on: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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


def first_line(err: BaseException) -> str:
    """The first line of an exception's message, for a one-line error that quotes a library's
    (often many-line) message; the exception's type when it has no message.

    >>> first_line(ValueError("bad header\\n  at byte 3")), first_line(KeyError())
    ('bad header', 'KeyError')
    """
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def unknown_name(kind: str, name: str, known: Iterable[str], *, also_matches: Iterable[str] = (),
                 suffix: str = "") -> HtebError:
    """The error for a name no registry holds: the closest known name as a hint, then every known
    one (`also_matches`: aliases the hint may point to without being listed)."""
    listed = list(known)
    close = difflib.get_close_matches(name, [*listed, *also_matches], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return HtebError(f"unknown {kind} {name!r}{hint}; known: {', '.join(listed)}{suffix}")
