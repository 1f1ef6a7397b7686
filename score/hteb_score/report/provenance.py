"""What a page was made from, said once at its foot: the revision its cards were scored on (label and
content hash or Hub commit), when and by which hteb-score they were scored, and the hteb-score that wrote
the page. Why: a page copied out of its folder, or read two years on, still names what it shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hteb_score import __version__


def made_from(cards: Sequence[Mapping[str, Any]]) -> str:
    """One sentence for the page's foot; cards may come from several revisions (each named)."""
    revisions = sorted({(c["dataset"].get("label") or "unlabelled", c["dataset"]["revision"]) for c in cards})
    dates = sorted(str(c["created"])[:10] for c in cards if c.get("created"))
    versions = sorted({str(c["hteb_score_version"]) for c in cards if c.get("hteb_score_version")})
    said = ", ".join(f"{label} ({revision.removeprefix('sha256:')[:12]})" for label, revision in revisions)
    head = f"{'revision' if len(revisions) == 1 else 'revisions'} {said}" if revisions else ""
    when = f"cards scored {dates[0]}" + ("" if dates[0] == dates[-1] else f" to {dates[-1]}") if dates else ""
    scored = " ".join(p for p in (when, f"by hteb-score {', '.join(versions)}" if versions else "") if p)
    sentence = "; ".join(p for p in (head, scored, f"page written by hteb-score {__version__}") if p)
    return sentence[0].upper() + sentence[1:] + "."
