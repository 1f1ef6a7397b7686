"""Errors a user can act on: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterable
from typing import NoReturn


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


def unknown_name(
    kind: str, name: str, known: Iterable[str], *, also_matches: Iterable[str] = (), suffix: str = ""
) -> HtebError:
    """The error for a name no registry holds: the closest known name as a hint, then every known
    one (`also_matches`: aliases the hint may point to without being listed)."""
    listed = list(known)
    close = difflib.get_close_matches(name, [*listed, *also_matches], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return HtebError(f"unknown {kind} {name!r}{hint}; known: {', '.join(listed)}{suffix}")


def end_process(code: int) -> NoReturn:
    """End the command's process with `code` once its one-line error is printed: streams flushed, then
    `os._exit`, skipping the interpreter's finalisation, where a library's worker threads (pyarrow's
    thread pool) may still run and abort the process (SIGABRT, exit 134) after the right refusal.
    Only for a process that is the command itself, never one that called it in-process."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)
