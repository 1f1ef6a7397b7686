"""The 32 source datasets of the HTEB paper (Tables 9-10): mteb task, Hub pin, task type, subsets and
their languages, splits, and the local folder of ../shared/data that holds the same data (when there is one).

Why one table: the generator reads either the Hub (GPU profile) or the local copies (CPU
profile), and both must give a dataset the same name in the revision, so the scorer finds it.
Which fields are transformed is not repeated here: it is hteb_contract.tasks.TASK_TYPES's job.

Every entry follows the installed mteb's task metadata (a test checks path, revision, eval split,
hf_subsets, their languages and the main score against `mteb.get_task`):

- Subsets carry mteb's names; each lists the language of each text (`en-de`: sentence1 English,
  sentence2 German, mteb's eval_langs order). The English datasets (the paper's Table 9) keep the
  subsets mteb gives for `languages=["eng"]` (AmazonCounterfactual: `en-ext` and `en`; MassiveIntent:
  `en`); the multilingual ones (Table 10) keep all of mteb's.
- The paper counts SemRel2024 twice: `SemRel2024-eng` is the English STR dataset (mteb's SemRel24STS,
  subset `eng` only) and `SemRel2024` the multilingual one (all 12 subsets). Both read the same Hub
  pin and the same local folder; their scores are separate datasets of a revision.
- AmazonCounterfactual and MassiveIntent list `validation` and `test` in mteb; HTEB evaluates `test`.
- mteb's main score is its task type's except SentimentAnalysisHindi's (`f1`, not accuracy).
- `paper_languages` is what the paper lists; `languages_not_in_mteb` is what mteb's data lacks of it
  (SemRel2024: pan, spa), for the dataset card.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from hteb_contract.errors import unknown_name
from hteb_contract.registry import Registry
from hteb_contract.sources import DEFAULT_SUBSET, DatasetInfo, read_source_dir, subset_languages
from hteb_contract.tasks import task_type

Subsets = Mapping[str, tuple[str, ...]]


@dataclass(frozen=True)
class SourceEntry:
    name: str  # the dataset's name inside a revision
    mteb_task: str | None
    task_type: str
    hf_path: str | None
    hf_revision: str | None
    eval_split: str
    subsets: Subsets  # mteb hf_subset -> language of each text position (ISO 639-3)
    paper_languages: tuple[str, ...] = ()  # as the paper's Table 9/10 lists them
    train_split: str | None = None
    english: bool = True  # in the paper's English datasets (Table 9), else its multilingual ones (Table 10)
    local: str | None = None  # folder name under shared/data
    fast_loading: bool = False  # mteb reads the default config once and splits it by its `lang` column
    cluster_sets: bool = False  # legacy clustering: each Hub row is a set of texts, clustered on its own
    renames: Mapping[str, str] = field(default_factory=dict)  # the mteb task's own column renames
    main_score: str | None = None  # mteb's main score where it is not its task type's (SentimentAnalysisHindi: f1)

    @property
    def mteb_main_score(self) -> str:
        return self.main_score or task_type(self.task_type).mteb_main_score

    @property
    def languages(self) -> tuple[str, ...]:
        return tuple(sorted({code for codes in self.subsets.values() for code in codes}))

    @property
    def languages_not_in_mteb(self) -> tuple[str, ...]:
        """Languages the paper lists for this dataset that mteb's subsets do not have (for the card)."""
        return tuple(sorted(set(self.paper_languages) - set(self.languages)))

    @property
    def multilingual_hub(self) -> bool:
        """mteb loads it subset by subset (or, fast loading, splits one config by subset)."""
        return tuple(self.subsets) != (DEFAULT_SUBSET,)

    def info(self) -> DatasetInfo:
        return DatasetInfo(
            name=self.name, task_type=self.task_type, eval_split=self.eval_split, languages=self.languages,
            train_split=self.train_split, mteb_task=self.mteb_task, hf_path=self.hf_path,
            hf_revision=self.hf_revision, subsets=dict(self.subsets),
        )


def _default(language: str) -> Subsets:
    return {DEFAULT_SUBSET: (language,)}


def _named(*names: str) -> Subsets:
    """Subsets whose names spell their languages (`en-de` -> eng, deu); the sources-table test checks each
    against mteb's eval_langs."""
    return {name: subset_languages(name) for name in names}


_E = _default("eng")
_PC_RENAMES = {"sent1": "sentence1", "sent2": "sentence2"}  # SprintDuplicateQuestions & co.'s dataset_transform
_SEMREL = ("afr", "amh", "arb", "arq", "ary", "eng", "hau", "hin", "ind", "kin", "mar", "tel")
_MASAKHA = ("amh", "eng", "fra", "hau", "ibo", "lin", "lug", "orm", "pcm", "run", "sna", "som", "swa", "tir", "xho",
            "yor")
_STS17 = ("ko-ko", "ar-ar", "en-ar", "en-de", "en-en", "en-tr", "es-en", "es-es", "fr-en", "it-en", "nl-en")
_INDIC = ("en-as", "en-bn", "en-gu", "en-hi", "en-kn", "en-ml", "en-mr", "en-or", "en-pa", "en-ta", "en-te", "en-ur")

#: Revision name -> dataset; `lookup_source` also takes mteb task and local folder names.
SOURCES: Registry[SourceEntry] = Registry("dataset", entries={entry.name: entry for entry in (
    # The paper's English datasets (Table 9).
    SourceEntry("AmazonCounterfactualClassification", "AmazonCounterfactualClassification", "Classification",
                "mteb/amazon_counterfactual", "1f7e6a9d6fa6e64c53d146e428565640410c0df1", "test",
                _named("en-ext", "en"), ("eng",), "train"),
    SourceEntry("Banking77", "Banking77Classification", "Classification", "mteb/banking77",
                "0fd18e25b25c072e09e0d92ab615fda904d66300", "test", _E, ("eng",), "train", local="Banking77"),
    SourceEntry("MassiveIntentClassification", "MassiveIntentClassification", "Classification",
                "mteb/amazon_massive_intent", "4672e20407010da34463acc759c162ca9734bca6", "test", _named("en"),
                ("eng",), "train", fast_loading=True),
    SourceEntry("BiorxivClusteringS2S", "BiorxivClusteringS2S", "Clustering", "mteb/biorxiv-clustering-s2s",
                "258694dd0231531bc1fd9de6ceb52a0853c6d908", "test", _E, ("eng",), cluster_sets=True),
    SourceEntry("MedrxivClusteringS2S.v2", "MedrxivClusteringS2S.v2", "Clustering", "mteb/medrxiv-clustering-s2s",
                "35191c8c0dca72d8ff3efcd72aa802307d469663", "test", _E, ("eng",)),
    SourceEntry("TwentyNewsgroups", "TwentyNewsgroupsClustering.v2", "Clustering", "mteb/twentynewsgroups-clustering",
                "6125ec4e24fa026cec8a478383ee943acfbd5449", "test", _E, ("eng",), local="TwentyNewsgroups"),
    SourceEntry("SprintDuplicateQuestions", "SprintDuplicateQuestions", "PairClassification",
                "mteb/sprintduplicatequestions-pairclassification", "d66bd1f72af766a5cc4b0ca5e00c162f89e8cc46", "test",
                _E, ("eng",), renames=_PC_RENAMES),
    SourceEntry("TwitterSemEval2015", "TwitterSemEval2015", "PairClassification",
                "mteb/twittersemeval2015-pairclassification", "70970daeab8776df92f5ea462b6173c0b46fd2d1", "test", _E,
                ("eng",), local="TwitterSemEval2015", renames=_PC_RENAMES),
    SourceEntry("TwitterURLCorpus", "TwitterURLCorpus", "PairClassification", "mteb/twitterurlcorpus-pairclassification",
                "8b6510b0b1fa4e4c4f879467980e9be563ec1cdf", "test", _E, ("eng",), local="TwitterURLCorpus",
                renames=_PC_RENAMES),
    SourceEntry("AskUbuntuDupQuestions", "AskUbuntuDupQuestions", "Reranking", "mteb/AskUbuntuDupQuestions",
                "c5691e3c48741d5f83b5cc8e630653d7a8cfc048", "test", _E, ("eng",)),
    SourceEntry("SciDocsRR", "SciDocsRR", "Reranking", "mteb/SciDocsRR", "39b8377811871075eed9de3b8a7e21aaa6acb3d8",
                "test", _E, ("eng",)),
    SourceEntry("StackOverflowDupQuestions", "StackOverflowDupQuestions", "Reranking", "mteb/StackOverflowDupQuestions",
                "5debda000fe8e27ebb5c123d38081f92e1847a59", "test", _E, ("eng",)),
    SourceEntry("ArguAna", "ArguAna", "Retrieval", "mteb/arguana", "c22ab2a51041ffd869aaddef7af8d8215647e41a", "test",
                _E, ("eng",)),
    SourceEntry("CQADupstackGamingRetrieval", "CQADupstackGamingRetrieval", "Retrieval", "mteb/cqadupstack-gaming",
                "4885aa143210c98657558c04aaf3dc47cfb54340", "test", _E, ("eng",)),
    SourceEntry("SciFact", "SciFact", "Retrieval", "mteb/scifact", "d56462d0e63a25450459c4f213e49ffdb866f7f9", "test",
                _E, ("eng",), local="SciFact"),
    SourceEntry("SemRel2024-eng", "SemRel24STS", "STR", "mteb/SemRel24STS", "f5146bf724c55899ca20502851dc98c5405b67f9",
                "test", _named("eng"), ("eng",), local="SemRel2024"),
    SourceEntry("BIOSSES", "BIOSSES", "STS", "mteb/biosses-sts", "d3fb88f8f02e40887cd149695127462bbcf29b4a", "test", _E,
                ("eng",)),
    SourceEntry("STSBenchmark", "STSBenchmark", "STS", "mteb/stsbenchmark-sts", "b0fddb56ed78048fa8b90373c8a3cfc37b684831",
                "test", _E, ("eng",), local="STSBenchmark"),
    SourceEntry("SummEval", "SummEval", "Summarization", "mteb/summeval", "cda12ad7615edc362dbf25a00fdd61d3b1eaf93c",
                "test", _E, ("eng",), local="SummEval"),
    # The paper's multilingual datasets (Table 10).
    SourceEntry("IsiZuluNews", "IsiZuluNewsClassification", "Classification", "mteb/IsiZuluNewsClassification",
                "692de64a824f0620161b6fc0b2c20f84d2b07b6f", "train", _default("zul"), ("zul",), "train", english=False,
                local="IsiZuluNews"),
    SourceEntry("SentimentAnalysisHindi", "SentimentAnalysisHindi", "Classification", "mteb/SentimentAnalysisHindi",
                "feab4a1cfc55f4b799f4ed902d8967e2ab68425c", "train", _default("hin"), ("hin",), "train", english=False,
                main_score="f1"),
    SourceEntry("MasakhaNEWS", "MasakhaNEWSClusteringS2S", "Clustering", "mteb/MasakhaNEWSClusteringS2S",
                "5dddcb139010208a28c3dcc2568560061c210097", "test", _named(*_MASAKHA), _MASAKHA, english=False,
                local="MasakhaNEWS", cluster_sets=True),
    SourceEntry("PlscClusteringS2S", "PlscClusteringS2S", "Clustering", "PL-MTEB/plsc-clustering-s2s",
                "39bcadbac6b1eddad7c1a0a176119ce58060289a", "test", _default("pol"), ("pol",), english=False),
    SourceEntry("RTE3", "RTE3", "PairClassification", "mteb/RTE3", "54ea0052267265f4906dd77b0a3d041d301a5ee6", "test",
                _named("de", "en", "fr", "it"), ("deu", "eng", "fra", "ita"), english=False),
    SourceEntry("indonli", "indonli", "PairClassification", "mteb/indonli", "cb76e5ca05b56d4f1e0ecaee4d03c1167f162ea6",
                "test_expert", _default("ind"), ("ind",), english=False),
    SourceEntry("VoyageMMarcoReranking", "VoyageMMarcoReranking", "Reranking", "mteb/VoyageMMarcoReranking",
                "bd2050c52b480e48c51372b4ec98a1cbbc4515f2", "test", _default("jpn"), ("jpn",), english=False),
    SourceEntry("NamaaMrTydiReranking", "NamaaMrTydiReranking", "Reranking", "mteb/NamaaMrTydiReranking",
                "4d574b8caf8463c741b84a293aea8ace67801cdc", "test", _default("ara"), ("ara",), english=False),
    SourceEntry("TwitterHjerneRetrieval", "TwitterHjerneRetrieval", "Retrieval", "mteb/TwitterHjerneRetrieval",
                "97ad55673cf9746f8e4b3aaa92b1bb92d82e52db", "train", _default("dan"), ("dan",), english=False),
    SourceEntry("Ko-StrategyQA", "Ko-StrategyQA", "Retrieval", "taeminlee/Ko-StrategyQA",
                "d243889a3eb6654029dbd7e7f9319ae31d58f97c", "dev", _default("kor"), ("kor",), english=False),
    SourceEntry("SemRel2024", "SemRel24STS", "STR", "mteb/SemRel24STS", "f5146bf724c55899ca20502851dc98c5405b67f9", "test",
                _named(*_SEMREL), (*_SEMREL, "pan", "spa"), english=False, local="SemRel2024"),
    SourceEntry("STS17", "STS17", "STS", "mteb/sts17-crosslingual-sts", "faeb762787bd10488a50c8b5be4a3b82e411949c", "test",
                _named(*_STS17), ("ara", "deu", "eng", "fra", "ita", "kor", "nld", "spa", "tur"), english=False,
                fast_loading=True),
    SourceEntry("IndicCrosslingualSTS", "IndicCrosslingualSTS", "STS", "mteb/IndicCrosslingualSTS",
                "f0366eb5a20087355c0e131162bbed943ba54b51", "test", _named(*_INDIC),
                ("asm", "ben", "eng", "guj", "hin", "kan", "mal", "mar", "ory", "pan", "tam", "tel", "urd"),
                english=False),
)})

#: The CPU profile's datasets: the local copies the bundled sample is made from.
SAMPLE_DATASETS: tuple[str, ...] = (
    "STSBenchmark", "SemRel2024", "Banking77", "TwentyNewsgroups", "TwitterSemEval2015", "SciFact", "SummEval",
    "MasakhaNEWS",
)


def lookup_source(name: str, *, data_dir: Path | None = None) -> SourceEntry:
    """By revision name, mteb task name or local folder name (a local folder name picks the entry that
    evaluates all of its subsets: SemRel2024, not SemRel2024-eng).

    With `data_dir`, a folder there that no entry names is a dataset too (its dataset.json says what it
    is): how a source folder in mteb's layout of one's own is generated with the CPU profile.
    """
    if name in SOURCES.names():
        return SOURCES.get(name)
    aliased = [entry for _, entry in SOURCES.items() if name in (entry.mteb_task, entry.local)]
    if aliased:
        return max(aliased, key=lambda entry: len(entry.subsets))
    if data_dir is not None and (Path(data_dir) / name / "dataset.json").is_file():
        return local_entry(Path(data_dir) / name)
    raise unknown_name("dataset", name, SOURCES.names(), also_matches=[e.mteb_task for _, e in SOURCES.items() if e.mteb_task])


def local_entry(folder: Path) -> SourceEntry:
    """The entry of a source folder no entry of the table names, from its dataset.json and rows."""
    info = read_source_dir(folder).info
    return SourceEntry(info.name, info.mteb_task, info.task_type, info.hf_path, info.hf_revision, info.eval_split,
                       dict(info.subsets), info.languages, info.train_split, local=folder.name)
