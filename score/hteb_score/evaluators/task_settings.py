"""Per-task settings of the mteb 2.26.24 task classes that change a main score, copied from the
class attributes (mteb is a test dependency only; tests/score/evaluators/test_task_settings.py reads
the installed mteb and fails if any value here drifts from it). The `mteb` protocol
(hteb_score/evaluators/protocol.py) reads them.

A dataset names its mteb task in `dataset.json` (`mteb_task`); a task not listed here (or none)
gets the abstract task class's defaults, and clustering of an unlisted task uses the legacy rule
(all documents; the rows' `cluster_set`, else one cluster set per subset) because mteb's fast
default embeds only 4% of them.
"""

from __future__ import annotations

from dataclasses import dataclass

MTEB_VERSION = "2.26.24"
SEED = 42  # AbsTask(seed=42): every RNG of an mteb evaluation; the mteb protocol ignores a run seed


@dataclass(frozen=True)
class ClassificationSettings:
    """AbsTaskClassification: few-shot logistic regression, repeated n_experiments times."""

    samples_per_label: int = 8
    n_experiments: int = 10


@dataclass(frozen=True)
class ClusteringSettings:
    """AbsTaskClustering ("fast", bootstrapped) or AbsTaskClusteringLegacy ("legacy")."""

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


@dataclass(frozen=True)
class RetrievalSettings:
    """AbsTaskRetrieval: self-hit removal and the cut-offs whose metrics are reported."""

    ignore_identical_ids: bool = False
    k_values: tuple[int, ...] = (1, 3, 5, 10, 20, 100, 1000)


@dataclass(frozen=True)
class SummarizationSettings:
    """`deprecated` = DeprecatedSummarizationEvaluator (task `SummEval`, mteb issue #1156)."""

    deprecated: bool = False


#: mteb task -> its `main_score` where that is not its task type's (TaskMetadata.main_score).
MAIN_SCORES: dict[str, str] = {
    "SentimentAnalysisHindi": "f1",
}
CLASSIFICATION: dict[str, ClassificationSettings] = {
    "Banking77Classification": ClassificationSettings(),
    "IsiZuluNewsClassification": ClassificationSettings(),
}
CLUSTERING: dict[str, ClusteringSettings] = {
    "TwentyNewsgroupsClustering.v2": ClusteringSettings(kind="fast"),
    # mteb 1.x made its cluster sets from masakhane/masakhanews@8ccc72e6: per language, the test
    # headlines in file order cut by np.array_split(texts, 5) (mteb 1.12.75 = c37fd7f4, mteb/tasks/
    # Clustering/multilingual/MasakhaNEWSClusteringS2S.py:80-94, dataset_transform); v2.0.0
    # (c07c289b0) reads those sets as the rows of mteb/MasakhaNEWSClusteringS2S. The description's
    # "10 sets" is stale: every published result has 5 v_measures per language.
    "MasakhaNEWSClusteringS2S": ClusteringSettings(kind="legacy", contiguous_sets=5),
    # 10 Hub rows of 7,500 titles on average (descriptive stats "num_samples": 10 before mteb
    # flattened them, 5cc34ff7f); which title is in which set no mteb code says: `cluster_set` required.
    "BiorxivClusteringS2S": ClusteringSettings(kind="legacy", contiguous_sets=None),
}
RETRIEVAL: dict[str, RetrievalSettings] = {
    "SciFact": RetrievalSettings(ignore_identical_ids=False),
    "ArguAna": RetrievalSettings(ignore_identical_ids=True),
    "QuoraRetrieval": RetrievalSettings(ignore_identical_ids=True),
}
SUMMARIZATION: dict[str, SummarizationSettings] = {
    "SummEval": SummarizationSettings(deprecated=True),
    "SummEvalSummarization.v2": SummarizationSettings(deprecated=False),
}
