"""Chance rows: a null model's card (`model.encoder == "null"`, encoding/null_models.py) beside real
models' is the score of a model that knows nothing, shown as GLUE-style leaderboards show a baseline:
its figures, labelled, last; it takes no rank, rank interval or group, and no statistic across models
(the lead, the transformation effects, ranking stability, reliability) counts it. Model against model
keeps it: a model against chance is a test worth reading. Null models compared among themselves (no
real model beside them) are the models of that comparison, ranked as any.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hteb_score.scoring.model_scores import ModelScores

#: A null engine (`model.null.engine`) -> what its chance row says it is.
ENGINE_WORDS = {"random": "random vectors", "constant": "one constant vector"}


def null_label(card: Mapping[str, Any] | None) -> str | None:
    """`chance (random vectors)` for a null model's card, None for any other."""
    model = (card or {}).get("model") or {}
    if model.get("encoder") != "null":
        return None
    engine = (model.get("null") or {}).get("engine", "")
    return f"chance ({ENGINE_WORDS.get(engine, engine)})"


def chance_rows(models: Sequence[ModelScores]) -> dict[str, str]:
    """The chance rows among `models` (model -> its label): the null models, where a real model is beside
    them; none where every model is a null model."""
    labels = {m.model: null_label(m.card) for m in models}
    if all(labels.values()):
        return {}
    return {model: label for model, label in labels.items() if label is not None}


def ranked(models: Sequence[ModelScores]) -> list[ModelScores]:
    """The models that rank and enter the statistics across models: all but the chance rows."""
    chance = chance_rows(models)
    return [m for m in models if m.model not in chance]


def row_name(model: str, label: str | None) -> str:
    """A model's name as a row shows it: a chance row's prefixed by its label."""
    return model if label is None else f"{label}: {model}"
