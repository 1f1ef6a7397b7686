"""Hard twins (issue 45, `hteb-score --hard-twins-from`): each Sensitivity item asked again with an LLM revision's
paraphrase of the same original text as its twin.

The rule-made twin edits only the span its pair edits, so most of its tokens are the original's; an LLM paraphrase
rewrites the whole text and keeps the meaning, so a model that wins by token overlap loses here. The twins are those
of `hard_twin_source.HardTwins` (the second revision's meaning-keeping rewrites, matched by original text in the same
dataset, table and subset); an item whose original the second revision did not rewrite is not counted. The figure is
`sensitivity.hard_figure`, the rule figure's own tie rule, interval and de-duplication over these items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hteb_score.scoring.hard_twin_source import Twins
from hteb_score.scoring.item_measures import Baseline, cosines
from hteb_score.scoring.sensitivity import edited, hard_row, item_key, item_row, text_language

if TYPE_CHECKING:  # annotations only
    from hteb_score.encoding.encoder import EmbeddingTable, Request
    from hteb_score.scoring.data import Variant


def hard_requests(variants: Sequence[Variant], twins: Twins) -> list[Request]:
    """The hard twins of the items `edited` picks, to embed with the dataset's other texts (each text once)."""
    requests: list[Request] = []
    for found in edited(variants):
        info = found.variant.dataset.info
        for (table, _, _), at, _ in found.picked:
            key = (table, found.changed.subset[at], found.changed.original_text[at])
            requests.extend((info, text, found.prompt) for _, text in twins.get(key, ()))
    return requests


def hard_rows(variants: Sequence[Variant], table: EmbeddingTable, base: Baseline, twins: Twins) -> list[dict[str, Any]]:
    """Each item `edited` picks whose original has a hard twin, once per distinct twin: cos(original, hard twin)
    against cos(original, changed), as `sensitivity.hard_row`s."""
    rows: list[dict[str, Any]] = []
    for found in edited(variants):
        matched = [
            (ref, at, twin)
            for ref, at, _ in found.picked
            for twin in twins.get((ref[0], found.changed.subset[at], found.changed.original_text[at]), ())
        ]
        if not matched:
            continue
        embed = table.view(found.variant.dataset.info)
        originals = [found.changed.original_text[at] for _, at, _ in matched]
        changed = [found.changed.transformed_text[at] for _, at, _ in matched]
        o = np.asarray(embed(originals, found.prompt))
        hard = cosines(o, np.asarray(embed([text for _, _, (_, text) in matched], found.prompt)))
        moved = cosines(o, np.asarray(embed(changed, found.prompt)))
        for (ref, _, (name, text)), original, change, kept, move in zip(matched, originals, changed, hard, moved):
            key = item_key(found.prompt, original, change, text)
            language, drift = text_language(base, ref)
            rows.append(
                hard_row(item_row(key, found.dataset, found.pair, found.seed, language, kept, move, drift), name)
            )
    return rows
