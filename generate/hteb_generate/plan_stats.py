"""Per-subset counts of the texts HTEB transforms in each mteb task, for `hteb-generate plan`
without the data: from the descriptive statistics that mteb 2.26.24 ships
(`mteb/descriptive_stats/<type>/<task>.json`, also `task.metadata.descriptive_stats`).

Why a table: the gpu profile's 31 sources are on the Hub, and a GPU-hours estimate must not need
them. For each task, eval split and hf subset: one `FieldStats` per transformed field (retrieval
and reranking: the queries; STS and pair classification: both texts; classification and
clustering: the text; summarisation: the human and the machine summaries), with the script of
that field's language (mteb's `hf_subsets_to_langscripts`). A text count that a statistics file
does not give (SciDocsRR's queries) is total characters / average characters. A test checks every
number against the installed mteb.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldStats:
    """One transformed field of one subset: texts (with repeats), distinct texts, characters, script."""

    texts: int
    unique: int
    chars: int
    script: str  # ISO 15924, e.g. Latn, Jpan


F = FieldStats
#: mteb task name -> eval split -> hf subset -> the stats of each transformed field.
STATS: dict[str, dict[str, dict[str, tuple[FieldStats, ...]]]] = {
    "AmazonCounterfactualClassification": {
        "validation": {
            "en-ext": (F(666, 666, 68028, "Latn"),),
            "en": (F(335, 335, 36583, "Latn"),),
            "de": (F(466, 466, 58251, "Latn"),),
            "ja": (F(466, 464, 20280, "Jpan"),),
        },
        "test": {
            "en-ext": (F(1334, 1333, 135364, "Latn"),),
            "en": (F(670, 670, 71118, "Latn"),),
            "de": (F(934, 933, 115432, "Latn"),),
            "ja": (F(934, 934, 39642, "Jpan"),),
        },
    },
    "Banking77Classification": {
        "test": {
            "default": (F(3080, 3080, 167036, "Latn"),),
        },
    },
    "MassiveIntentClassification": {
        "validation": {
            "af": (F(2033, 2024, 75759, "Latn"),),
            "am": (F(2033, 2023, 48678, "Ethi"),),
            "ar": (F(2033, 2007, 54567, "Arab"),),
            "az": (F(2033, 2005, 73329, "Latn"),),
            "bn": (F(2033, 2017, 69343, "Beng"),),
            "cy": (F(2033, 2024, 78652, "Latn"),),
            "da": (F(2033, 2020, 70289, "Latn"),),
            "de": (F(2033, 2022, 79734, "Latn"),),
            "el": (F(2033, 2020, 83301, "Grek"),),
            "en": (F(2033, 2031, 70729, "Latn"),),
            "es": (F(2033, 2015, 79868, "Latn"),),
            "fa": (F(2033, 2003, 67524, "Arab"),),
            "fi": (F(2033, 2013, 74125, "Latn"),),
            "fr": (F(2033, 2016, 85978, "Latn"),),
            "he": (F(2033, 2017, 57225, "Hebr"),),
            "hi": (F(2033, 2013, 71207, "Deva"),),
            "hu": (F(2033, 2018, 74798, "Latn"),),
            "hy": (F(2033, 2016, 74198, "Armn"),),
            "id": (F(2033, 2008, 77036, "Latn"),),
            "is": (F(2033, 2014, 75521, "Latn"),),
            "it": (F(2033, 2001, 77604, "Latn"),),
            "ja": (F(2033, 2015, 31479, "Jpan"),),
            "jv": (F(2033, 2019, 69773, "Latn"),),
            "ka": (F(2033, 1989, 63256, "Geor"),),
            "km": (F(2033, 1932, 64843, "Khmr"),),
            "kn": (F(2033, 2025, 77652, "Knda"),),
            "ko": (F(2033, 2014, 31722, "Kore"),),
            "lv": (F(2033, 2021, 74498, "Latn"),),
            "ml": (F(2033, 2013, 87266, "Mlym"),),
            "mn": (F(2033, 2010, 78032, "Cyrl"),),
            "ms": (F(2033, 2014, 80301, "Latn"),),
            "my": (F(2033, 2025, 82073, "Mymr"),),
            "nb": (F(2033, 2022, 70801, "Latn"),),
            "nl": (F(2033, 2017, 80046, "Latn"),),
            "pl": (F(2033, 2009, 73462, "Latn"),),
            "pt": (F(2033, 2004, 77129, "Latn"),),
            "ro": (F(2033, 2027, 75176, "Latn"),),
            "ru": (F(2033, 2002, 74623, "Cyrl"),),
            "sl": (F(2033, 2005, 71648, "Latn"),),
            "sq": (F(2033, 2004, 75812, "Latn"),),
            "sv": (F(2033, 2015, 70697, "Latn"),),
            "sw": (F(2033, 2011, 77779, "Latn"),),
            "ta": (F(2033, 2013, 85963, "Taml"),),
            "te": (F(2033, 2022, 77244, "Telu"),),
            "th": (F(2033, 2004, 63528, "Thai"),),
            "tl": (F(2033, 2014, 89203, "Latn"),),
            "tr": (F(2033, 2018, 70353, "Latn"),),
            "ur": (F(2033, 2019, 70462, "Arab"),),
            "vi": (F(2033, 2020, 77911, "Latn"),),
            "zh-CN": (F(2033, 2018, 21222, "Hans"),),
            "zh-TW": (F(2033, 1989, 20048, "Hant"),),
        },
        "test": {
            "af": (F(2974, 2961, 110262, "Latn"),),
            "am": (F(2974, 2947, 70145, "Ethi"),),
            "ar": (F(2974, 2907, 79720, "Arab"),),
            "az": (F(2974, 2907, 107751, "Latn"),),
            "bn": (F(2974, 2943, 101528, "Beng"),),
            "cy": (F(2974, 2950, 114977, "Latn"),),
            "da": (F(2974, 2941, 102537, "Latn"),),
            "de": (F(2974, 2955, 117616, "Latn"),),
            "el": (F(2974, 2946, 119736, "Grek"),),
            "en": (F(2974, 2970, 102785, "Latn"),),
            "es": (F(2974, 2944, 116394, "Latn"),),
            "fa": (F(2974, 2921, 98823, "Arab"),),
            "fi": (F(2974, 2930, 108496, "Latn"),),
            "fr": (F(2974, 2943, 125811, "Latn"),),
            "he": (F(2974, 2946, 83417, "Hebr"),),
            "hi": (F(2974, 2945, 105274, "Deva"),),
            "hu": (F(2974, 2920, 108969, "Latn"),),
            "hy": (F(2974, 2938, 109134, "Armn"),),
            "id": (F(2974, 2913, 112577, "Latn"),),
            "is": (F(2974, 2940, 109732, "Latn"),),
            "it": (F(2974, 2918, 113060, "Latn"),),
            "ja": (F(2974, 2919, 46059, "Jpan"),),
            "jv": (F(2974, 2932, 101977, "Latn"),),
            "ka": (F(2974, 2880, 93772, "Geor"),),
            "km": (F(2974, 2786, 93992, "Khmr"),),
            "kn": (F(2974, 2950, 114246, "Knda"),),
            "ko": (F(2974, 2919, 45762, "Kore"),),
            "lv": (F(2974, 2946, 108878, "Latn"),),
            "ml": (F(2974, 2937, 127789, "Mlym"),),
            "mn": (F(2974, 2931, 111998, "Cyrl"),),
            "ms": (F(2974, 2930, 117326, "Latn"),),
            "my": (F(2974, 2962, 120671, "Mymr"),),
            "nb": (F(2974, 2951, 102940, "Latn"),),
            "nl": (F(2974, 2953, 117126, "Latn"),),
            "pl": (F(2974, 2906, 106914, "Latn"),),
            "pt": (F(2974, 2932, 113079, "Latn"),),
            "ro": (F(2974, 2937, 109519, "Latn"),),
            "ru": (F(2974, 2913, 108199, "Cyrl"),),
            "sl": (F(2974, 2933, 104437, "Latn"),),
            "sq": (F(2974, 2927, 110202, "Latn"),),
            "sv": (F(2974, 2932, 103142, "Latn"),),
            "sw": (F(2974, 2935, 112209, "Latn"),),
            "ta": (F(2974, 2946, 125008, "Taml"),),
            "te": (F(2974, 2963, 113476, "Telu"),),
            "th": (F(2974, 2906, 91732, "Thai"),),
            "tl": (F(2974, 2943, 130918, "Latn"),),
            "tr": (F(2974, 2937, 103538, "Latn"),),
            "ur": (F(2974, 2943, 103680, "Arab"),),
            "vi": (F(2974, 2935, 112612, "Latn"),),
            "zh-CN": (F(2974, 2921, 31013, "Hans"),),
            "zh-TW": (F(2974, 2880, 29053, "Hant"),),
        },
    },
    "BiorxivClusteringS2S": {
        "test": {
            "default": (F(75000, 41555, 7618444, "Latn"),),
        },
    },
    "MedrxivClusteringS2S.v2": {
        "test": {
            "default": (F(37500, 16264, 4301276, "Latn"),),
        },
    },
    "TwentyNewsgroupsClustering.v2": {
        "test": {
            "default": (F(59545, 5242, 1907719, "Latn"),),
        },
    },
    "SprintDuplicateQuestions": {
        "test": {
            "default": (F(101000, 1000, 6862344, "Latn"), F(101000, 7932, 5430365, "Latn"),),
        },
    },
    "TwitterSemEval2015": {
        "test": {
            "default": (F(16777, 2073, 642884, "Latn"), F(16777, 15755, 782102, "Latn"),),
        },
    },
    "TwitterURLCorpus": {
        "test": {
            "default": (F(51534, 4329, 4096396, "Latn"), F(51534, 41304, 4563544, "Latn"),),
        },
    },
    "AskUbuntuDupQuestions": {
        "test": {
            "default": (F(361, 360, 18097, "Latn"),),
        },
    },
    "SciDocsRR": {
        "test": {
            "default": (F(3978, 3293, 277961, "Latn"),),
        },
    },
    "StackOverflowDupQuestions": {
        "test": {
            "default": (F(2992, 2992, 159057, "Latn"),),
        },
    },
    "ArguAna": {
        "test": {
            "default": (F(1406, 1298, 1676965, "Latn"),),
        },
    },
    "CQADupstackGamingRetrieval": {
        "test": {
            "default": (F(1595, 1595, 77792, "Latn"),),
        },
    },
    "SciFact": {
        "test": {
            "default": (F(300, 300, 27104, "Latn"),),
        },
    },
    "SemRel24STS": {
        "test": {
            "afr": (F(375, 369, 29311, "Latn"), F(375, 374, 29795, "Latn"),),
            "amh": (F(171, 171, 6800, "Ethi"), F(171, 171, 6762, "Ethi"),),
            "arb": (F(595, 593, 26991, "Arab"), F(595, 593, 28671, "Arab"),),
            "arq": (F(583, 576, 18865, "Arab"), F(583, 575, 19490, "Arab"),),
            "ary": (F(426, 401, 47309, "Arab"), F(426, 403, 46977, "Arab"),),
            "eng": (F(2600, 2597, 166254, "Latn"), F(2600, 2595, 166793, "Latn"),),
            "hau": (F(603, 543, 63518, "Latn"), F(603, 546, 66281, "Latn"),),
            "hin": (F(968, 962, 69238, "Deva"), F(968, 966, 72718, "Deva"),),
            "ind": (F(360, 344, 31090, "Latn"), F(360, 352, 31180, "Latn"),),
            "kin": (F(222, 220, 31428, "Latn"), F(222, 220, 31405, "Latn"),),
            "mar": (F(298, 298, 24372, "Deva"), F(298, 298, 26325, "Deva"),),
            "tel": (F(297, 297, 25884, "Telu"), F(297, 297, 26607, "Telu"),),
        },
    },
    "BIOSSES": {
        "test": {
            "default": (F(100, 92, 15467, "Latn"), F(100, 97, 15846, "Latn"),),
        },
    },
    "STSBenchmark": {
        "test": {
            "default": (F(1379, 1256, 74107, "Latn"), F(1379, 1337, 73779, "Latn"),),
        },
    },
    "SummEval": {
        "test": {
            "default": (F(1100, 1100, 248982, "Latn"), F(1600, 1548, 548510, "Latn"),),
        },
    },
    "IsiZuluNewsClassification": {
        "train": {
            "default": (F(752, 752, 32402, "Latn"),),
        },
    },
    "SentimentAnalysisHindi": {
        "train": {
            "default": (F(2048, 2048, 166918, "Deva"),),
        },
    },
    "MasakhaNEWSClusteringS2S": {
        "test": {
            "amh": (F(376, 373, 17211, "Ethi"),),
            "eng": (F(948, 948, 57354, "Latn"),),
            "fra": (F(422, 422, 31790, "Latn"),),
            "hau": (F(637, 637, 39040, "Latn"),),
            "ibo": (F(390, 387, 26636, "Latn"),),
            "lin": (F(175, 175, 11242, "Latn"),),
            "lug": (F(223, 223, 13815, "Latn"),),
            "orm": (F(325, 325, 25740, "Ethi"),),
            "pcm": (F(305, 305, 25259, "Latn"),),
            "run": (F(322, 322, 24428, "Latn"),),
            "sna": (F(369, 369, 23394, "Latn"),),
            "som": (F(294, 294, 21174, "Latn"),),
            "swa": (F(476, 476, 33935, "Latn"),),
            "tir": (F(272, 272, 11931, "Ethi"),),
            "xho": (F(297, 297, 13120, "Latn"),),
            "yor": (F(411, 411, 35077, "Latn"),),
        },
    },
    "PlscClusteringS2S": {
        "test": {
            "default": (F(17537, 12995, 1479044, "Latn"),),
        },
    },
    "RTE3": {
        "test": {
            "de": (F(481, 454, 98165, "Latn"), F(481, 409, 26387, "Latn"),),
            "en": (F(482, 457, 85827, "Latn"), F(482, 408, 22903, "Latn"),),
            "fr": (F(482, 467, 99104, "Latn"), F(482, 428, 27024, "Latn"),),
            "it": (F(478, 454, 94839, "Latn"), F(478, 406, 25688, "Latn"),),
        },
    },
    "indonli": {
        "test_expert": {
            "default": (F(2040, 514, 461125, "Latn"), F(2040, 2035, 134053, "Latn"),),
        },
    },
    "VoyageMMarcoReranking": {
        "test": {
            "default": (F(2048, 2048, 32606, "Jpan"),),
        },
    },
    "NamaaMrTydiReranking": {
        "test": {
            "default": (F(918, 918, 28185, "Arab"),),
        },
    },
    "TwitterHjerneRetrieval": {
        "train": {
            "default": (F(78, 78, 12978, "Latn"),),
        },
    },
    "Ko-StrategyQA": {
        "dev": {
            "default": (F(592, 592, 13470, "Hang"),),
        },
    },
    "STS17": {
        "test": {
            "ko-ko": (F(2846, 2650, 91049, "Hang"), F(2846, 2720, 92338, "Hang"),),
            "ar-ar": (F(250, 250, 8052, "Arab"), F(250, 250, 8195, "Arab"),),
            "en-ar": (F(250, 250, 10590, "Latn"), F(250, 250, 8174, "Arab"),),
            "en-de": (F(250, 250, 10988, "Latn"), F(250, 250, 11189, "Latn"),),
            "en-en": (F(250, 250, 10988, "Latn"), F(250, 250, 10681, "Latn"),),
            "en-tr": (F(250, 250, 10479, "Latn"), F(250, 250, 10400, "Latn"),),
            "es-en": (F(250, 250, 12710, "Latn"), F(250, 250, 10506, "Latn"),),
            "es-es": (F(250, 250, 12459, "Latn"), F(250, 250, 12806, "Latn"),),
            "fr-en": (F(250, 250, 12406, "Latn"), F(250, 250, 10681, "Latn"),),
            "it-en": (F(250, 250, 12507, "Latn"), F(250, 250, 10681, "Latn"),),
            "nl-en": (F(250, 250, 11704, "Latn"), F(250, 250, 10681, "Latn"),),
        },
    },
    "IndicCrosslingualSTS": {
        "test": {
            "en-as": (F(256, 255, 14953, "Latn"), F(256, 256, 15682, "Beng"),),
            "en-bn": (F(256, 256, 17603, "Latn"), F(256, 255, 16973, "Beng"),),
            "en-gu": (F(256, 252, 17182, "Latn"), F(256, 256, 16678, "Gujr"),),
            "en-hi": (F(256, 256, 25630, "Latn"), F(256, 256, 24547, "Deva"),),
            "en-kn": (F(256, 256, 20179, "Latn"), F(256, 256, 19925, "Knda"),),
            "en-ml": (F(256, 256, 18891, "Latn"), F(256, 256, 21042, "Mlym"),),
            "en-mr": (F(256, 256, 19570, "Latn"), F(256, 256, 19707, "Deva"),),
            "en-or": (F(256, 255, 14137, "Latn"), F(256, 256, 14571, "Orya"),),
            "en-pa": (F(256, 256, 20722, "Latn"), F(256, 256, 19779, "Guru"),),
            "en-ta": (F(256, 256, 19210, "Latn"), F(256, 256, 24035, "Taml"),),
            "en-te": (F(256, 256, 20181, "Latn"), F(256, 256, 20397, "Telu"),),
            "en-ur": (F(256, 256, 21053, "Latn"), F(256, 256, 26260, "Arab"),),
        },
    },
}
