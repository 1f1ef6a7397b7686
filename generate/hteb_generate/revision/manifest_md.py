"""MANIFEST.md: the table of published revisions that papers cite. Written by the publishing
code (`update`), never by hand; rows are keyed by (store, label) and kept in publish order.
Only the table between its markers is ever rewritten: a file given as --manifest-md keeps the
rest of its text (a file without a table gets one appended) and its mode. Every cell is escaped
(`hteb_contract.common.escape.md_text`) and read back unescaped: a store path or a model id holding
`|`, `<` or a line break stays in its cell.

A revision that its documented command no longer remakes byte for byte is marked superseded
(`supersede`): its row stays, with the label that replaces it and why, since papers cite it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hteb_contract.common.atomic import atomic_write_text
from hteb_contract.common.escape import md_text, md_unescape, visible
from hteb_contract.errors import StoreError

START = "<!-- hteb:revisions:start -->"
END = "<!-- hteb:revisions:end -->"
COLUMNS = (
    "label",
    "store",
    "revision",
    "content hash",
    "date",
    "seeds",
    "generator",
    "transformations",
    "datasets",
    "superseded by",
)
SUPERSEDED = "superseded by"  # empty: current; else the label that replaces it and why (`supersede`)
CODE_COLUMNS = ("revision", "content hash")
_PLAIN = re.compile(r"[\w:.@/+-]+")

HEADER = """# Published HTEB revisions

Cite a revision by its store and label, and pin it by the revision column (a Hub commit, or
the content hash of a local store): `hteb-score MODEL --store STORE --revision REVISION`.
A revision its documented command no longer remakes byte for byte names, in its last column, the
label that supersedes it and why (`hteb-generate supersede`): cite it as it was, use the newer one
for new work. This table is written by `hteb-generate`; do not edit it by hand.

"""


def _row(manifest: Mapping[str, Any], store_uri: str, revision_id: str) -> dict[str, str]:
    generator = manifest["generator"]
    return {
        "label": manifest["label"],
        "store": store_uri,
        "revision": revision_id,
        "content hash": manifest["content_hash"],
        "date": manifest["created"][:10],
        "seeds": ", ".join(str(s) for s in manifest["seeds"]),
        "generator": f"{generator['model_id']}@{generator['revision'] or 'local'}",
        "transformations": str(len(manifest["transformations"])),
        "datasets": ", ".join(s["name"] for s in manifest["sources"]),
        SUPERSEDED: "",
    }


def parse(text: str) -> list[dict[str, str]]:
    """The rows of the table between the markers of `text` (a MANIFEST.md), as column -> cell."""
    if START not in text or END not in text:
        return []
    body = text.split(START, 1)[1].split(END, 1)[0]
    rows = []
    for line in body.strip().splitlines()[2:]:
        cells = _cells(line)
        if len(cells) == len(COLUMNS) - 1:  # a table written before the last column: nothing superseded
            cells.append("")
        if len(cells) == len(COLUMNS):
            rows.append({c: _unwritten(c, cell) for c, cell in zip(COLUMNS, cells)})
    return rows


def _cells(line: str) -> list[str]:
    """A row's cells as written: split at the pipes that are not escaped."""
    cells, cell = [], ""
    for token in re.findall(r"\\.|[^\\]", line.strip()):
        if token == "|":
            cells.append(cell)
            cell = ""
        else:
            cell += token
    cells.append(cell)
    return [c.strip() for c in cells[1:-1]]


def _written(column: str, value: str) -> str:
    """A cell: a revision or a hash as code (`_PLAIN`: nothing in it to escape), anything else escaped."""
    if column in CODE_COLUMNS and _PLAIN.fullmatch(value):
        return f"`{value}`"
    return md_text(value)


def _unwritten(column: str, cell: str) -> str:
    """What `_written` was given."""
    if column in CODE_COLUMNS and len(cell) > 1 and cell[0] == cell[-1] == "`":
        return cell[1:-1]
    return md_unescape(cell)


def _table(rows: list[dict[str, str]]) -> str:
    """The table between its markers (what `update` rewrites; the text around it is the user's)."""
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(_written(c, row[c]) for c in COLUMNS) + " |")
    return f"{START}\n" + "\n".join(lines) + f"\n{END}"


def render(rows: list[dict[str, str]]) -> str:
    """A new MANIFEST.md: the header and the table."""
    return f"{HEADER}{_table(rows)}\n"


def _merged(text: str, rows: list[dict[str, str]]) -> str:
    """`text` with its table replaced by `rows`; a file without a table (a README given as
    --manifest-md) keeps every byte of its own and gets the table appended."""
    if START in text and END in text.split(START, 1)[1]:
        before, rest = text.split(START, 1)
        return before + _table(rows) + rest.split(END, 1)[1]
    return (text.rstrip("\n") + "\n\n" if text.strip() else "") + render(rows)


def refuse_moving(path: Path, manifest: Mapping[str, Any], store_uri: str) -> None:
    """Raise StoreError when the table at `path` cites (store, label) at another content hash.

    Why: the store refuses to move a label it holds, but a local store is one clone's folder: a clone
    whose `.hteb/store` lacks the label would publish other content under it, and rewriting the row
    would move the label every paper pins by this table."""
    path = Path(path)
    if not path.is_file():
        return
    store, label = _portable(store_uri, path.resolve().parent), manifest["label"]
    for row in parse(path.read_text(encoding="utf-8")):
        if (row["store"], row["label"]) == (store, label) and row["content hash"] != manifest["content_hash"]:
            raise StoreError(
                f"{path} cites {label!r} in {store} at content {row['content hash'][:12]}, and this "
                f"run made {manifest['content_hash'][:12]}: a cited label never moves; publish under "
                "a new label (--label) or name another table (--manifest-md)"
            )


def update(path: Path, manifest: Mapping[str, Any], store_uri: str, revision_id: str) -> None:
    """Insert or refresh the row of (store, label) in MANIFEST.md, atomically. The same revision
    made again keeps its row as it was, first date included: that is the row papers cite; the same
    content under another revision id (a Hub commit made anew) refreshes it; other content under a
    cited label is refused (`refuse_moving`), nothing written."""
    path = Path(path)
    refuse_moving(path, manifest, store_uri)
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    rows = parse(text)
    new = _row(manifest, _portable(store_uri, path.resolve().parent), revision_id)
    for index, row in enumerate(rows):
        if (row["store"], row["label"]) == (new["store"], new["label"]):
            # the same content, held elsewhere: a new revision id, its mark kept
            rows[index] = row if row["revision"] == new["revision"] else {**new, SUPERSEDED: row[SUPERSEDED]}
            break
    else:
        rows.append(new)
    atomic_write_text(path, _merged(text, rows))


def supersede(path: Path, store_uri: str, label: str, by: str, because: str) -> None:
    """Mark the row of (store, `label`) superseded by `by`, a label of the same store in the table,
    saying why (one line), atomically. Why: a published revision whose command today makes other
    bytes stays cited as it was, and the table says what to use instead."""
    path = Path(path)
    if not path.is_file():
        raise StoreError(f"{path}: no such table of published revisions")
    text = path.read_text(encoding="utf-8")
    rows, store = parse(text), _portable(store_uri, path.resolve().parent)
    labels = [row["label"] for row in rows if row["store"] == store]
    for name in (label, by):
        if name not in labels:
            raise StoreError(f"{path} cites no {name!r} in {store} (it cites {', '.join(labels) or 'none'})")
    if by == label:
        raise StoreError(f"{label!r} cannot supersede itself")
    why = visible(" ".join(because.split()))  # one line; a control or bidi mark shown, never sent
    if not why:
        raise StoreError("say why the revision is superseded (--because)")
    for row in rows:
        if (row["store"], row["label"]) == (store, label):
            row[SUPERSEDED] = f"{by}: {why}"
    atomic_write_text(path, _merged(text, rows))


def _portable(store_uri: str, base: Path) -> str:
    """A local store inside the repository is shown relative to it, so the row holds on any clone."""
    if not store_uri.startswith("file://"):
        return store_uri
    store = Path(store_uri[len("file://") :]).resolve()
    return f"file://{store.relative_to(base)}" if store.is_relative_to(base) else store_uri
