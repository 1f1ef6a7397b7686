"""The work units of a findings round's models whose parts left the tree, read from the commit the round's
`parts-at` names (the device tool sends the whole tree, 64 MiB at most, so a finished model's parts leave it:
docs/findings.md). What is read from them (the unit-times table) is then the same in the tree as at that commit."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Collection
from pathlib import Path

from hteb_contract.common.escape import visible
from hteb_contract.errors import HtebError
from hteb_score.scoring.parts import PART_SUFFIX, ScorePart, parse_part

MARKER = "parts-at"


def _git(marker: Path, *args: str, stdin: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=marker.parent, input=stdin, capture_output=True, check=False)
    except OSError as err:
        raise HtebError(
            f"{marker}: the parts that left the tree are read with git, which did not run ({err})"
        ) from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise HtebError(f"{marker}: git {args[0]} failed ({said[-1] if said else f'exit {done.returncode}'})")
    return done.stdout


def names_at(marker: Path, commit: str, folder: str) -> list[str]:
    """The paths (from the repository's top) of the files under `folder` at `commit`, sorted; a name that holds a
    control character or a line break (which `cat-file --batch` would read as two names; no part of ours is
    named so) is a one-line error."""
    listed = _git(marker, "ls-tree", "-r", "-z", "--full-tree", "--name-only", commit, "--", f"{folder}/")
    names = sorted(name for name in listed.decode("utf-8").split("\0") if name)
    for name in names:
        if visible(name) != name:
            raise HtebError(
                f"{marker}: {commit[:12]}:{visible(name)} has a control character or line break in its name"
            )
    return names


def blobs_at(marker: Path, commit: str, names: list[str]) -> list[bytes]:
    """The files `names` (from `names_at`) at `commit`, read in one `git cat-file --batch`."""
    out = _git(marker, "cat-file", "--batch", stdin="".join(f"{commit}:{n}\n" for n in names).encode("utf-8"))
    blobs, at = [], 0
    for name in names:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise HtebError(f"{marker}: {commit[:12]}:{visible(name)} is not a file of that commit")
        size = int(header[2])
        blobs.append(out[end + 1 : end + 1 + size])
        at = end + 2 + size
    return blobs


def parts_left(
    folder: Path, in_tree: Collection[str], models: Collection[str] | None = None
) -> dict[str, list[tuple[str, ScorePart]]]:
    """By model, the parts (each with the name it is refused by: COMMIT:PATH) of every model of `folder`'s round
    whose parts are at the commit its `parts-at` names and not in `folder` (of `models` only, when given): none
    where the round has no `parts-at`. A commit this clone lacks (a shallow clone) is a one-line error, never a
    table with models missing."""
    marker = Path(folder).parent / MARKER
    if not marker.is_file():
        return {}
    commit = marker.read_bytes().decode("utf-8", "replace").strip()  # not UTF-8: no commit, refused below
    if not re.fullmatch(r"[0-9a-f]{40}", commit):
        raise HtebError(f"{marker}: {commit[:60]!r} is not a commit (40 hex digits)")
    top = Path(_git(marker, "rev-parse", "--show-toplevel").decode("utf-8").strip())
    if not _git_has(marker, commit):
        raise HtebError(
            f"{marker}: commit {commit[:12]}, which holds the parts that left the tree, is not in this clone "
            "(a shallow clone lacks it: git fetch --unshallow)"
        )
    relative = Path(folder).resolve().relative_to(top.resolve()).as_posix()
    wanted = [
        name
        for name in names_at(marker, commit, relative)
        if name.endswith(PART_SUFFIX) and name.count("/") == relative.count("/") + 2
        if name.split("/")[-2] not in in_tree and (models is None or name.split("/")[-2] in models)
    ]
    found: dict[str, list[tuple[str, ScorePart]]] = {}
    for name, raw in zip(wanted, blobs_at(marker, commit, wanted)):
        shown = f"{commit[:12]}:{name}"
        found.setdefault(name.split("/")[-2], []).append((shown, parse_part(raw, shown, gzipped=True)))
    return found


def _git_has(marker: Path, commit: str) -> bool:
    try:
        _git(marker, "cat-file", "-e", f"{commit}^{{commit}}")
    except HtebError:
        return False
    return True
