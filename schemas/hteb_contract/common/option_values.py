"""Option values both CLIs read the same way, so one input gets one answer from either program: free text (a
store, a revision) and comma-separated lists (datasets, transformations, seeds). A value given but empty, a
control character, an empty name between commas or a name given twice is one line naming the option, never
a silent fallback (the generator's setup once dropped empty names and duplicates: `--seed 1,1` ran seed 1
once)."""

from __future__ import annotations

from typing import overload

from hteb_contract.errors import HtebError


@overload
def text(value: str, option: str) -> str: ...


@overload
def text(value: str | None, option: str) -> str | None: ...


def text(value: str | None, option: str) -> str | None:
    """A free-text option (a store, a revision): None when not given; given, it is non-empty and printable."""
    if value is None:
        return None
    if not value.strip():
        raise HtebError(f"{option} is empty; leave it out for the default")
    if not value.isprintable():
        raise HtebError(f"{option} {value!r} contains a control character")
    return value


def names(value: str | None, option: str) -> list[str] | None:
    """A comma-separated list: None when not given; given, every name is non-empty and named once."""
    value = text(value, option)
    if value is None:
        return None
    items = [v.strip() for v in value.split(",")]
    if not any(items):
        raise HtebError(f"{option} {value!r} names nothing; leave it out for the default")
    if "" in items:
        raise HtebError(f"{option} {value!r} has an empty name between commas")
    twice = next((v for i, v in enumerate(items) if v in items[:i]), None)
    if twice is not None:
        raise HtebError(f"{option} names {twice!r} twice")
    return items
