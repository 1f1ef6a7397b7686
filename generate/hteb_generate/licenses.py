"""Each source dataset's license as the source states it, for the dataset card (`hteb_contract.card`).

mteb's task metadata records each dataset's license (`MTEB_LICENSES`, held to the installed mteb by
a test); it is mapped to a Hub license id as mteb maps it for its own cards (`not specified` ->
`unknown`, a URL -> `other`, linked) and linked to the pinned Hub dataset, whose card states it.
Where the original release states another license than mteb records (`OWN`), the release's
statement is the one that holds, with where it is made. A folder no registry entry names states
no license: `unknown`.
"""

from __future__ import annotations

from hteb_contract.card import OTHER_LICENSE, UNKNOWN_LICENSE, SourceLicense

from .sources_table import SOURCES, SourceEntry

#: Registry name -> the license mteb's task metadata records (mteb 2.26.24).
MTEB_LICENSES: dict[str, str] = {
    "AmazonCounterfactualClassification": "cc-by-4.0", "Banking77": "mit", "MassiveIntentClassification": "apache-2.0",
    "BiorxivClusteringS2S": "https://www.biorxiv.org/content/about-biorxiv",
    "MedrxivClusteringS2S.v2": "https://www.medrxiv.org/content/about-medrxiv",
    "TwentyNewsgroups": "not specified", "SprintDuplicateQuestions": "not specified",
    "TwitterSemEval2015": "not specified", "TwitterURLCorpus": "not specified",
    "AskUbuntuDupQuestions": "cc-by-sa-3.0", "SciDocsRR": "cc-by-4.0", "StackOverflowDupQuestions": "cc-by-nc-sa-4.0",
    "ArguAna": "cc-by-sa-4.0", "CQADupstackGamingRetrieval": "apache-2.0", "SciFact": "cc-by-nc-4.0",
    "SemRel2024-eng": "not specified", "BIOSSES": "not specified", "STSBenchmark": "not specified",
    "SummEval": "mit", "IsiZuluNews": "cc-by-sa-4.0", "SentimentAnalysisHindi": "cc-by-nc-sa-4.0",
    "MasakhaNEWS": "afl-3.0", "PlscClusteringS2S": "cc0-1.0", "RTE3": "cc-by-4.0", "indonli": "cc-by-sa-4.0",
    "VoyageMMarcoReranking": "cc-by-4.0", "NamaaMrTydiReranking": "cc-by-sa-3.0", "TwitterHjerneRetrieval": "cc-by-4.0",
    "Ko-StrategyQA": "cc-by-4.0", "SemRel2024": "not specified", "STS17": "not specified",
    "IndicCrosslingualSTS": "cc0-1.0",
}

#: Registry name -> (Hub id, name, link) where the original release states another license than mteb records.
OWN: dict[str, tuple[str, str, str]] = {
    "Banking77": ("cc-by-4.0", "CC BY 4.0", "https://github.com/PolyAI-LDN/task-specific-datasets"),
    "SciFact": ("cc-by-nc-2.0", "CC BY-NC 2.0", "https://github.com/allenai/scifact"),
}


def hub_license(mteb_license: str) -> str:
    """mteb's license string as a Hub license id, as mteb maps it for its own dataset cards.

    >>> hub_license("not specified"), hub_license("https://www.biorxiv.org/content/about-biorxiv"), hub_license("mit")
    ('unknown', 'other', 'mit')
    """
    if mteb_license == "not specified":
        return UNKNOWN_LICENSE
    return OTHER_LICENSE if mteb_license.startswith("http") else mteb_license


def source_license(entry: SourceEntry) -> SourceLicense:
    """The license of one source dataset (see the module docstring)."""
    if entry.name in OWN:
        return SourceLicense(entry.name, *OWN[entry.name])
    stated = MTEB_LICENSES.get(entry.name) if entry.name in SOURCES.names() else None
    if stated is None:
        return SourceLicense(entry.name, UNKNOWN_LICENSE, "not stated", None)
    link = stated if stated.startswith("http") else f"https://huggingface.co/datasets/{entry.hf_path}"
    return SourceLicense(entry.name, hub_license(stated), stated, link)
