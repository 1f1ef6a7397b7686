"""Everything the mteb 2.26.24 task class of a dataset sets for its evaluation, in one table
(`TASKS`: every task the generator's registry, ../shared/data and the test data name), copied from
the class attributes; mteb is a test dependency only: tests/score/evaluators/test_task_settings.py
reads the installed mteb and fails if any value here drifts from it, or if a task class overrides
an attribute this table does not mirror. The `mteb` protocol (hteb_score/evaluators/protocol.py)
reads the per-type views below (`CLASSIFICATION`, `CLUSTERING`, ...), made from the table.

A task not listed gets the abstract task class's defaults, and clustering of an unlisted task uses
the legacy rule (all documents; the rows' `cluster_set`, else one cluster set per subset) because
mteb's fast default embeds only 4% of them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar

from hteb_contract.tasks import task_type

MTEB_VERSION = "2.26.24"
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

    MTEB: ClassVar[tuple[str, ...]] = ("max_fraction_of_documents_to_embed", "max_document_to_embed",
                                       "max_documents_per_cluster", "n_clusters", "k_mean_batch_size", "max_depth")
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


Settings = (ClassificationSettings | ClusteringSettings | RetrievalSettings | SummarizationSettings | STSSettings
            | PairClassificationSettings)


@dataclass(frozen=True)
class TaskSettings:
    """One mteb task: its HTEB task type, main score and evaluation settings."""

    task_type: str
    main_score: str
    settings: Settings

    def differences(self) -> dict[str, object]:
        """What this task sets apart from its task type's defaults (main score, settings fields)."""
        default = type(self.settings)()
        out: dict[str, object] = {f.name: getattr(self.settings, f.name) for f in fields(self.settings)
                                  if getattr(self.settings, f.name) != getattr(default, f.name)}
        if self.main_score != task_type(self.task_type).mteb_main_score:
            out["main_score"] = self.main_score
        return out


_FAST = ClusteringSettings(kind="fast")
_CLASSIFICATION, _PAIRS, _RETRIEVAL, _STS = (ClassificationSettings(), PairClassificationSettings(), RetrievalSettings(),
                                              STSSettings())
#: mteb task -> its settings; every task the generator's registry, ../shared/data and tests/data name.
TASKS: dict[str, TaskSettings] = {
    "AmazonCounterfactualClassification": TaskSettings("Classification", "accuracy",
                                                       ClassificationSettings(samples_per_label=32)),
    "Banking77Classification": TaskSettings("Classification", "accuracy", _CLASSIFICATION),
    "IsiZuluNewsClassification": TaskSettings("Classification", "accuracy", _CLASSIFICATION),
    "MassiveIntentClassification": TaskSettings("Classification", "accuracy", _CLASSIFICATION),
    "SentimentAnalysisHindi": TaskSettings("Classification", "f1", _CLASSIFICATION),
    # 10 Hub rows of 7,500 titles on average (descriptive stats "num_samples": 10 before mteb
    # flattened them, 5cc34ff7f); which title is in which set no mteb code says: `cluster_set` required.
    "BiorxivClusteringS2S": TaskSettings("Clustering", "v_measure", ClusteringSettings(kind="legacy",
                                                                                       contiguous_sets=None)),
    # mteb 1.x made its cluster sets from masakhane/masakhanews@8ccc72e6: per language, the test
    # headlines in file order cut by np.array_split(texts, 5) (mteb 1.12.75 = c37fd7f4, mteb/tasks/
    # Clustering/multilingual/MasakhaNEWSClusteringS2S.py:80-94, dataset_transform); v2.0.0
    # (c07c289b0) reads those sets as the rows of mteb/MasakhaNEWSClusteringS2S. The description's
    # "10 sets" is stale: every published result has 5 v_measures per language.
    "MasakhaNEWSClusteringS2S": TaskSettings("Clustering", "v_measure", ClusteringSettings(kind="legacy",
                                                                                           contiguous_sets=5)),
    "MedrxivClusteringS2S.v2": TaskSettings("Clustering", "v_measure", _FAST),
    "PlscClusteringS2S": TaskSettings("Clustering", "v_measure", _FAST),
    "TwentyNewsgroupsClustering.v2": TaskSettings("Clustering", "v_measure", _FAST),
    "RTE3": TaskSettings("PairClassification", "max_ap", _PAIRS),
    "SprintDuplicateQuestions": TaskSettings("PairClassification", "max_ap", _PAIRS),
    "TwitterSemEval2015": TaskSettings("PairClassification", "max_ap", _PAIRS),
    "TwitterURLCorpus": TaskSettings("PairClassification", "max_ap", _PAIRS),
    "indonli": TaskSettings("PairClassification", "max_ap", _PAIRS),
    "AskUbuntuDupQuestions": TaskSettings("Reranking", "map_at_1000", _RETRIEVAL),
    "NamaaMrTydiReranking": TaskSettings("Reranking", "map_at_1000", _RETRIEVAL),
    "SciDocsRR": TaskSettings("Reranking", "map_at_1000", _RETRIEVAL),
    "StackOverflowDupQuestions": TaskSettings("Reranking", "map_at_1000", _RETRIEVAL),
    "VoyageMMarcoReranking": TaskSettings("Reranking", "map_at_1000", _RETRIEVAL),
    "ArguAna": TaskSettings("Retrieval", "ndcg_at_10", RetrievalSettings(ignore_identical_ids=True)),
    "CQADupstackGamingRetrieval": TaskSettings("Retrieval", "ndcg_at_10", _RETRIEVAL),
    "Ko-StrategyQA": TaskSettings("Retrieval", "ndcg_at_10", _RETRIEVAL),
    "QuoraRetrieval": TaskSettings("Retrieval", "ndcg_at_10", RetrievalSettings(ignore_identical_ids=True)),
    "SciFact": TaskSettings("Retrieval", "ndcg_at_10", _RETRIEVAL),
    "TwitterHjerneRetrieval": TaskSettings("Retrieval", "ndcg_at_10", _RETRIEVAL),
    "SemRel24STS": TaskSettings("STR", "cosine_spearman", STSSettings(max_score=1)),
    **{name: TaskSettings("STS", "cosine_spearman", _STS) for name in (
        "BIOSSES", "IndicCrosslingualSTS", "STS12", "STS13", "STS14", "STS15", "STS16", "STS17", "STSBenchmark")},
    "SummEval": TaskSettings("Summarization", "cosine_spearman", SummarizationSettings(deprecated=True)),
    "SummEvalSummarization.v2": TaskSettings("Summarization", "cosine_spearman", SummarizationSettings()),
}


def _of(kind: type) -> dict:
    return {name: task.settings for name, task in TASKS.items() if isinstance(task.settings, kind)}


#: mteb task -> its `main_score` where that is not its task type's (TaskMetadata.main_score).
MAIN_SCORES: dict[str, str] = {name: task.main_score for name, task in TASKS.items()
                               if task.main_score != task_type(task.task_type).mteb_main_score}
CLASSIFICATION: dict[str, ClassificationSettings] = _of(ClassificationSettings)
CLUSTERING: dict[str, ClusteringSettings] = _of(ClusteringSettings)
RETRIEVAL: dict[str, RetrievalSettings] = _of(RetrievalSettings)
SUMMARIZATION: dict[str, SummarizationSettings] = _of(SummarizationSettings)
