"""Task evaluators, one module per task type, looked up by task type: `EVALUATORS.get("STS")`.

Importing this package imports no evaluator module; the first lookup imports them all. How a
score is computed depends on the run's protocol (hteb_score/evaluators/protocol.py: `hteb`, the HTEB paper's
evaluation, or `mteb`, equal to mteb 2.26.24's main score); each module's docstring states its
rules under both.
"""

from hteb_score.evaluators.base import (
    EVALUATORS,
    ClassifierCache,
    Embed,
    EvaluationContext,
    Evaluator,
    TaskScore,
    Text,
    register,
)

__all__ = ["EVALUATORS", "ClassifierCache", "Embed", "EvaluationContext", "Evaluator", "TaskScore", "Text", "register"]
