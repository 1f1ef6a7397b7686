"""What an mteb 2.26.24 task class sets for its evaluation, one typed kind per abstract task class.

Each class's defaults are its abstract task class's (`AbsTaskClassification`, ...); a dataset row of
`datasets.yaml` states only what its mteb task class sets apart from them (`evaluation:`), and the
`mteb` protocol of the scorer reads the result. `MTEB` names the attributes mirrored from the task
class (tests/contract/test_dataset_specs.py reads the installed mteb and fails if one drifts, or if a
task class overrides an attribute no kind mirrors).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from hteb_contract.errors import ContractError

MTEB_VERSION = "2.26.24"  # the mteb whose task classes these mirror
SEED = 42  # AbsTask(seed=42): every RNG of an mteb evaluation; the mteb protocol ignores a run seed


@dataclass(frozen=True)
class ClassificationSettings:
    """AbsTaskClassification: few-shot logistic regression (`evaluator_model`), repeated n_experiments times."""

    MTEB: ClassVar[tuple[str, ...]] = ("samples_per_label", "n_experiments", "is_cross_validation", "n_splits")
    samples_per_label: int = 8
    n_experiments: int = 10
    is_cross_validation: bool = False  # True would be k-fold on the test split; no task of ours is
    n_splits: int = 5  # read only with is_cross_validation
    classifier: str = "LogisticRegression"
    max_iter: int = 100  # LogisticRegression(max_iter=100): mteb's evaluator_model, otherwise sklearn's defaults


@dataclass(frozen=True)
class ClusteringSettings:
    """AbsTaskClustering ("fast", bootstrapped) or AbsTaskClusteringLegacy ("legacy")."""

    MTEB: ClassVar[tuple[str, ...]] = (
        "max_fraction_of_documents_to_embed",
        "max_document_to_embed",
        "max_documents_per_cluster",
        "n_clusters",
        "k_mean_batch_size",
        "max_depth",
    )
    kind: str = "legacy"  # "legacy" | "fast"
    max_fraction_of_documents_to_embed: float | None = 0.04
    max_document_to_embed: int | None = None
    max_documents_per_cluster: int = 16_384
    n_clusters: int = 10  # bootstrap rounds (mteb's name)
    k_mean_batch_size: int = 512
    legacy_batch_size: int = 500
    # legacy: which documents are clustered together. mteb clusters each of its Hub rows (cluster
    # sets) separately: rows carrying `cluster_set` (the Hub row they came from) are grouped by it;
    # rows without it are cut per subset into `contiguous_sets` sets with np.array_split (None:
    # only the Hub rows know the sets, so `cluster_set` is required). `one_set_per_subset`: every
    # document of a subset in one set, whatever the rows say (the hteb protocol).
    contiguous_sets: int | None = 1
    one_set_per_subset: bool = False
    # the order k-means reads a set's documents in: "rows" (the data's, as mteb) or "hashed" (each row where
    # sha256 of the seed and its id puts it: the hteb protocol). Tied embeddings are split by position, so in
    # the data's order, where rows are grouped by label, a model of one vector scored above chance.
    row_order: str = "rows"
    max_depth: int | None = None  # hierarchical label depth of fast clustering; None: every level


@dataclass(frozen=True)
class RetrievalSettings:
    """AbsTaskRetrieval (and mteb 2's reranking): self-hit removal, the cut-offs whose metrics are
    reported, and whether the first result is dropped."""

    MTEB: ClassVar[tuple[str, ...]] = ("ignore_identical_ids", "k_values", "skip_first_result")
    ignore_identical_ids: bool = False
    k_values: tuple[int, ...] = (1, 3, 5, 10, 20, 100, 1000)
    skip_first_result: bool = False


@dataclass(frozen=True)
class SummarizationSettings:
    """`deprecated` = DeprecatedSummarizationEvaluator (task `SummEval`, mteb issue #1156); the gold
    range (min_score, max_score) it normalises by changes no correlation."""

    MTEB: ClassVar[tuple[str, ...]] = ("min_score", "max_score")
    deprecated: bool = False
    min_score: int = 0
    max_score: int = 5


@dataclass(frozen=True)
class STSSettings:
    """AbsTaskSTS: the gold range mteb normalises scores by ((x - min) / (max - min)); an affine map,
    so no Pearson or Spearman correlation changes with it."""

    MTEB: ClassVar[tuple[str, ...]] = ("min_score", "max_score")
    min_score: int = 0
    max_score: int = 5


@dataclass(frozen=True)
class PairClassificationSettings:
    """AbsTaskPairClassification: nothing a task class sets (five similarities, max AP)."""

    MTEB: ClassVar[tuple[str, ...]] = ()


Settings = (
    ClassificationSettings
    | ClusteringSettings
    | RetrievalSettings
    | SummarizationSettings
    | STSSettings
    | PairClassificationSettings
)


def settings_for(kind: type[Settings], given: Mapping[str, Any], *, what: str) -> Settings:
    """The settings of kind `kind` that set `given` apart from its abstract class's defaults; `what`
    names the task type in a refusal (hteb_contract.tasks.TaskType.evaluation asks with its own kind).

    >>> settings_for(RetrievalSettings, {"ignore_identical_ids": True}, what="ArguAna: Retrieval").ignore_identical_ids
    True
    >>> settings_for(STSSettings, {"kind": "fast"}, what="X: STS")
    Traceback (most recent call last):
    ...
    hteb_contract.errors.ContractError: X: STS has no evaluation setting 'kind'; known: min_score, max_score
    """
    known = [f.name for f in fields(kind)]
    for key in given:
        if key not in known:
            raise ContractError(f"{what} has no evaluation setting {key!r}; known: {', '.join(known)}")
    values: dict[str, Any] = {key: tuple(value) if isinstance(value, list) else value for key, value in given.items()}
    return kind(**values)
