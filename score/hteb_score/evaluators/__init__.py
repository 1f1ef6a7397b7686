"""Task evaluators, one module per task type, looked up by task type with `get_evaluator`.

Two protocols: `mteb` equals mteb 2.26.24's main score on the same embeddings; `hteb` is the
HTEB paper's own evaluation. Each module's docstring states its rules for both.
"""

from hteb_score.evaluators.base import (
    PROTOCOLS,
    Embed,
    Evaluator,
    TaskScore,
    Text,
    get_evaluator,
    register,
)
from hteb_score.evaluators import (  # noqa: F401  (importing registers them)
    classification,
    clustering,
    pair_classification,
    reranking,
    retrieval,
    sts,
    summarization,
)

__all__ = ["PROTOCOLS", "Embed", "Evaluator", "TaskScore", "Text", "get_evaluator", "register"]
