"""Compare models on HTEB: leaderboard, ranking stability, transformation effects, reliability.

Three steps, one module each: `inputs` reads result cards (one model each) and plain scores tables
(many models) into `ModelScores`, per-dataset scores in points; `analysis` computes everything
from those, the same way whatever they were read from, into a `Comparison`; `report` is that
`Comparison`, which renders itself (JSON, Markdown, plots, model-index YAML) and saves the files.
"""

from __future__ import annotations

from hteb_score.compare.analysis import compare
from hteb_score.compare.inputs import ModelScores, load_card, load_inputs, load_scores_table
from hteb_score.compare.report import Comparison

__all__ = ["Comparison", "ModelScores", "compare", "load_card", "load_inputs", "load_scores_table"]
