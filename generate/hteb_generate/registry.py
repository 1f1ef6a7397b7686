"""The 31 source datasets of SPEC.md's pin table: mteb task, Hub pin, task type, languages, splits,
and the local folder of ../shared/data that holds the same data (when there is one).

Why one table: the generator reads either the Hub (GPU profile) or the local copies (CPU
profile), and both must give a dataset the same name in the revision, so the scorer finds it.
Which fields are transformed is not repeated here: it is hteb_contract.tasks.TASK_TYPES's job.
"""

from __future__ import annotations

from dataclasses import dataclass

from hteb_contract.errors import unknown_name
from hteb_contract.registry import Registry
from hteb_contract.sources import DatasetInfo


@dataclass(frozen=True)
class SourceEntry:
    name: str  # the dataset's name inside a revision
    mteb_task: str
    task_type: str
    hf_path: str
    hf_revision: str
    eval_split: str
    languages: tuple[str, ...]
    train_split: str | None = None
    hf_subsets: tuple[str, ...] = ()  # Hub configs to read (mteb's language subsets); () = default
    local: str | None = None  # folder name under shared/data

    def info(self) -> DatasetInfo:
        return DatasetInfo(
            name=self.name, task_type=self.task_type, eval_split=self.eval_split, languages=self.languages,
            train_split=self.train_split, mteb_task=self.mteb_task, hf_path=self.hf_path,
            hf_revision=self.hf_revision,
        )



_E = ("eng",)
#: Revision name -> dataset; `lookup_source` also takes mteb task and local folder names.
SOURCES: Registry[SourceEntry] = Registry("dataset", entries={entry.name: entry for entry in (
    SourceEntry("AmazonCounterfactualClassification", "AmazonCounterfactualClassification", "Classification",
                "mteb/amazon_counterfactual", "1f7e6a9d6fa6e64c53d146e428565640410c0df1", "test", _E, "train", ("en",)),
    SourceEntry("Banking77", "Banking77Classification", "Classification", "mteb/banking77",
                "0fd18e25b25c072e09e0d92ab615fda904d66300", "test", _E, "train", local="Banking77"),
    SourceEntry("MassiveIntentClassification", "MassiveIntentClassification", "Classification",
                "mteb/amazon_massive_intent", "4672e20407010da34463acc759c162ca9734bca6", "test", _E, "train", ("en",)),
    SourceEntry("BiorxivClusteringS2S", "BiorxivClusteringS2S", "Clustering", "mteb/biorxiv-clustering-s2s",
                "258694dd0231531bc1fd9de6ceb52a0853c6d908", "test", _E),
    SourceEntry("MedrxivClusteringS2S.v2", "MedrxivClusteringS2S.v2", "Clustering", "mteb/medrxiv-clustering-s2s",
                "35191c8c0dca72d8ff3efcd72aa802307d469663", "test", _E),
    SourceEntry("TwentyNewsgroups", "TwentyNewsgroupsClustering.v2", "Clustering", "mteb/twentynewsgroups-clustering",
                "6125ec4e24fa026cec8a478383ee943acfbd5449", "test", _E, local="TwentyNewsgroups"),
    SourceEntry("SprintDuplicateQuestions", "SprintDuplicateQuestions", "PairClassification",
                "mteb/sprintduplicatequestions-pairclassification", "d66bd1f72af766a5cc4b0ca5e00c162f89e8cc46", "test", _E),
    SourceEntry("TwitterSemEval2015", "TwitterSemEval2015", "PairClassification",
                "mteb/twittersemeval2015-pairclassification", "70970daeab8776df92f5ea462b6173c0b46fd2d1", "test", _E,
                local="TwitterSemEval2015"),
    SourceEntry("TwitterURLCorpus", "TwitterURLCorpus", "PairClassification", "mteb/twitterurlcorpus-pairclassification",
                "8b6510b0b1fa4e4c4f879467980e9be563ec1cdf", "test", _E, local="TwitterURLCorpus"),
    SourceEntry("AskUbuntuDupQuestions", "AskUbuntuDupQuestions", "Reranking", "mteb/AskUbuntuDupQuestions",
                "c5691e3c48741d5f83b5cc8e630653d7a8cfc048", "test", _E),
    SourceEntry("SciDocsRR", "SciDocsRR", "Reranking", "mteb/SciDocsRR", "39b8377811871075eed9de3b8a7e21aaa6acb3d8",
                "test", _E),
    SourceEntry("StackOverflowDupQuestions", "StackOverflowDupQuestions", "Reranking", "mteb/StackOverflowDupQuestions",
                "5debda000fe8e27ebb5c123d38081f92e1847a59", "test", _E),
    SourceEntry("ArguAna", "ArguAna", "Retrieval", "mteb/arguana", "c22ab2a51041ffd869aaddef7af8d8215647e41a", "test", _E),
    SourceEntry("CQADupstackGamingRetrieval", "CQADupstackGamingRetrieval", "Retrieval", "mteb/cqadupstack-gaming",
                "4885aa143210c98657558c04aaf3dc47cfb54340", "test", _E),
    SourceEntry("SciFact", "SciFact", "Retrieval", "mteb/scifact", "d56462d0e63a25450459c4f213e49ffdb866f7f9", "test", _E,
                local="SciFact"),
    SourceEntry("SemRel2024", "SemRel24STS", "STR", "mteb/SemRel24STS", "f5146bf724c55899ca20502851dc98c5405b67f9", "test",
                ("afr", "amh", "arb", "arq", "ary", "eng", "hau", "hin", "ind", "kin", "mar", "tel"),
                hf_subsets=("afr", "amh", "arb", "arq", "ary", "eng", "hau", "hin", "ind", "kin", "mar", "tel"),
                local="SemRel2024"),
    SourceEntry("BIOSSES", "BIOSSES", "STS", "mteb/biosses-sts", "d3fb88f8f02e40887cd149695127462bbcf29b4a", "test", _E),
    SourceEntry("STSBenchmark", "STSBenchmark", "STS", "mteb/stsbenchmark-sts", "b0fddb56ed78048fa8b90373c8a3cfc37b684831",
                "test", _E, local="STSBenchmark"),
    SourceEntry("SummEval", "SummEval", "Summarization", "mteb/summeval", "cda12ad7615edc362dbf25a00fdd61d3b1eaf93c",
                "test", _E, local="SummEval"),
    SourceEntry("IsiZuluNews", "IsiZuluNewsClassification", "Classification", "mteb/IsiZuluNewsClassification",
                "692de64a824f0620161b6fc0b2c20f84d2b07b6f", "train", ("zul",), "train", local="IsiZuluNews"),
    SourceEntry("SentimentAnalysisHindi", "SentimentAnalysisHindi", "Classification", "mteb/SentimentAnalysisHindi",
                "feab4a1cfc55f4b799f4ed902d8967e2ab68425c", "train", ("hin",), "train"),
    SourceEntry("MasakhaNEWS", "MasakhaNEWSClusteringS2S", "Clustering", "mteb/MasakhaNEWSClusteringS2S",
                "5dddcb139010208a28c3dcc2568560061c210097", "test",
                ("amh", "eng", "fra", "hau", "ibo", "lin", "lug", "orm", "pcm", "run", "sna", "som", "swa", "tir", "xho", "yor"),
                hf_subsets=("amh", "eng", "fra", "hau", "ibo", "lin", "lug", "orm", "pcm", "run", "sna", "som", "swa", "tir",
                            "xho", "yor"),
                local="MasakhaNEWS"),
    SourceEntry("PlscClusteringS2S", "PlscClusteringS2S", "Clustering", "PL-MTEB/plsc-clustering-s2s",
                "39bcadbac6b1eddad7c1a0a176119ce58060289a", "test", ("pol",)),
    SourceEntry("RTE3", "RTE3", "PairClassification", "mteb/RTE3", "54ea0052267265f4906dd77b0a3d041d301a5ee6", "test",
                ("deu", "eng", "fra", "ita"), hf_subsets=("de", "en", "fr", "it")),
    SourceEntry("indonli", "indonli", "PairClassification", "mteb/indonli", "cb76e5ca05b56d4f1e0ecaee4d03c1167f162ea6",
                "test_expert", ("ind",)),
    SourceEntry("VoyageMMarcoReranking", "VoyageMMarcoReranking", "Reranking", "mteb/VoyageMMarcoReranking",
                "bd2050c52b480e48c51372b4ec98a1cbbc4515f2", "test", ("jpn",)),
    SourceEntry("NamaaMrTydiReranking", "NamaaMrTydiReranking", "Reranking", "mteb/NamaaMrTydiReranking",
                "4d574b8caf8463c741b84a293aea8ace67801cdc", "test", ("ara",)),
    SourceEntry("TwitterHjerneRetrieval", "TwitterHjerneRetrieval", "Retrieval", "mteb/TwitterHjerneRetrieval",
                "97ad55673cf9746f8e4b3aaa92b1bb92d82e52db", "train", ("dan",)),
    SourceEntry("Ko-StrategyQA", "Ko-StrategyQA", "Retrieval", "taeminlee/Ko-StrategyQA",
                "d243889a3eb6654029dbd7e7f9319ae31d58f97c", "dev", ("kor",)),
    SourceEntry("STS17", "STS17", "STS", "mteb/sts17-crosslingual-sts", "faeb762787bd10488a50c8b5be4a3b82e411949c", "test",
                ("ara", "deu", "eng", "fra", "ita", "kor", "nld", "spa", "tur"),
                hf_subsets=("ar-ar", "en-ar", "en-de", "en-en", "en-tr", "es-en", "es-es", "fr-en", "it-en", "ko-ko",
                            "nl-en")),
    SourceEntry("IndicCrosslingualSTS", "IndicCrosslingualSTS", "STS", "mteb/IndicCrosslingualSTS",
                "f0366eb5a20087355c0e131162bbed943ba54b51", "test",
                ("asm", "ben", "eng", "guj", "hin", "kan", "mal", "mar", "ory", "pan", "tam", "tel", "urd"),
                hf_subsets=("en-as", "en-bn", "en-gu", "en-hi", "en-kn", "en-ml", "en-mr", "en-or", "en-pa", "en-ta",
                            "en-te", "en-ur")),
)})

#: The CPU profile's datasets: the local copies the bundled sample is made from.
SAMPLE_DATASETS: tuple[str, ...] = (
    "STSBenchmark", "SemRel2024", "Banking77", "TwentyNewsgroups", "TwitterSemEval2015", "SciFact", "SummEval",
    "MasakhaNEWS",
)


def lookup_source(name: str) -> SourceEntry:
    """By revision name, mteb task name or local folder name."""
    for _, entry in SOURCES.items():
        if name in (entry.name, entry.mteb_task, entry.local):
            return entry
    raise unknown_name("dataset", name, SOURCES.names(), also_matches=[e.mteb_task for _, e in SOURCES.items()])
