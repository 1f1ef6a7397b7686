"""Checks of `hteb-score` option values, run before any work: a value given but empty, a
device that does not exist, a folder that cannot be written is one line naming the option,
before a revision is read or a model loads. Never a silent fallback to the default."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from hteb_contract.common.atomic import nearest_existing
from hteb_contract.common.option_values import names, text
from hteb_contract.errors import HtebError

if TYPE_CHECKING:
    from hteb_contract.stores import RevisionStore


class GivenPath(click.Path):
    """click.Path that refuses an empty value: Path("") is ".", so `--out ''` wrote a card into the current
    folder and `--cache-dir ''` an embedding cache there, where the user named no path at all."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and not value.strip():
            self.fail("is empty: name a path (or leave the option out for its default)", param, ctx)
        return super().convert(value, param, ctx)


_DEVICE = re.compile(r"auto|cpu|mps|cuda(?::\d{1,3})?")


def seeds(value: str | None) -> list[int] | None:
    """--seeds: comma-separated non-negative integers, or None when not given."""
    items = names(value, "--seeds")
    if items is None:
        return None
    if not all(re.fullmatch(r"\d{1,19}", v) for v in items):
        raise HtebError(f"--seeds must be integers separated by commas, got {value!r}")
    return [int(v) for v in items]


def device(value: str) -> str:
    """--device: auto, cpu, mps, cuda or cuda:N, or several CUDA devices (cuda:0,cuda:1: one model
    replica each), present on this machine (torch is asked only for a GPU)."""
    if "," in value:
        devices = [part.strip() for part in value.split(",")]
        if not all(_DEVICE.fullmatch(d) and d.startswith("cuda") for d in devices):
            raise HtebError(f"--device {value!r}: a list of devices names CUDA devices only (cuda:0,cuda:1)")
        numbered = [d if ":" in d else "cuda:0" for d in devices]
        if len(set(numbered)) < len(numbered):
            raise HtebError(f"--device {value!r} names a device twice")
        return ",".join(device(d) for d in numbered)
    if not _DEVICE.fullmatch(value):
        raise HtebError(f"--device {value!r} is not one of auto, cpu, mps, cuda, cuda:N")
    if value in ("auto", "cpu"):
        return value
    import torch

    if value == "mps":
        if not torch.backends.mps.is_available():
            raise HtebError("--device mps: no MPS device on this machine")
        return value
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = int(value.partition(":")[2] or 0)
    if index >= count:
        raise HtebError(f"--device {value}: this machine has {count} CUDA device(s)")
    return value


def writable_location(path: Path, option: str) -> Path:
    """A folder that may be created at `path`: it is not a file, not under a file, and its nearest
    existing ancestor is writable. Returns the absolute path."""
    path = Path(path).absolute()
    if path.exists() and not path.is_dir():
        raise HtebError(f"{option} {path} is a file, not a folder")
    ancestor = nearest_existing(path)
    _require_folder(
        ancestor,
        os.W_OK | os.X_OK,
        f"{option} {path}: {ancestor} is a file, not a folder",
        f"{option} {path}: {ancestor} is not writable",
    )
    return path


def readable_folder(path: Path, option: str) -> Path:
    """An existing folder whose entries can be listed and read."""
    path = Path(path)
    _require_folder(
        path, os.R_OK | os.X_OK, f"{option} {path}: no such folder", f"{option} {path}: folder is not readable"
    )
    return path


def _require_folder(path: Path, access: int, not_folder: str, no_access: str) -> None:
    """Refuse, in one line, a `path` that is not a folder or that this process may not use as `access` says."""
    if not path.is_dir():
        raise HtebError(not_folder)
    if not os.access(path, access):
        raise HtebError(no_access)


def store(uri: str, option: str = "--store") -> RevisionStore:
    """The store a URI names: a well-formed URI of a known scheme and, for a local store, an
    existing readable folder (a missing one is not an empty store)."""
    from hteb_contract.stores import open_store

    opened = open_store(text(uri, option))
    root = getattr(opened, "root", None)  # a local store's folder
    if root is not None:
        readable_folder(root, option)
    return opened
