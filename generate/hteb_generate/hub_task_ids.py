"""Each source dataset's Hub `task_ids`, for the dataset card's front matter (`hteb_contract.card`).

They are what mteb writes on its own dataset cards (mteb 2.26.24 maps each task's subtypes to Hub
task ids; most have none), held to the installed mteb by a test. A folder no registry entry names
has none.
"""

from __future__ import annotations

#: Registry name -> the Hub task ids mteb's task metadata maps the dataset to (those with any).
MTEB_TASK_IDS: dict[str, tuple[str, ...]] = {
    "AskUbuntuDupQuestions": ("multiple-choice-qa",), "SciDocsRR": ("text-scoring",),
    "StackOverflowDupQuestions": ("multiple-choice-qa",), "CQADupstackGamingRetrieval": ("multiple-choice-qa",),
    "SciFact": ("fact-checking", "fact-checking-retrieval"), "IsiZuluNews": ("topic-classification",),
    "SentimentAnalysisHindi": ("sentiment-analysis", "sentiment-scoring", "sentiment-classification",
                               "hate-speech-detection"),
    "MasakhaNEWS": ("topic-classification",), "PlscClusteringS2S": ("topic-classification",),
    "RTE3": ("natural-language-inference",), "indonli": ("natural-language-inference",),
    "VoyageMMarcoReranking": ("text-scoring",), "TwitterHjerneRetrieval": ("multiple-choice-qa",),
    "Ko-StrategyQA": ("multiple-choice-qa",),
}


def hub_task_ids(name: str) -> tuple[str, ...]:
    """The Hub task ids of a source dataset by its registry name."""
    return MTEB_TASK_IDS.get(name, ())
