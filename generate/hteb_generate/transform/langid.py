"""Language identification for the wrong_language check, with a model shipped inside the wheel.

Why lingua (lingua-language-detector): its n-gram models are part of the package, so nothing is
downloaded at run time, it is built for short texts, and it can abstain (a minimum relative
distance between the two best languages), which is what a check that must not raise false
alarms needs.

The detector knows all 75 lingua languages, not only the benchmark's: an output that drifted into
Portuguese must not be read as Spanish just because Portuguese was not on the list.

Codes are ISO 639-3 as in the paper's Table 11. Some codes are one language for checking
(``languages.FAMILIES``): the Arabic varieties arb/arq/ary and the macrolanguage ara (lingua has one
Arabic model). Some pairs are distinct languages that lingua confuses on short texts
(:data:`CONFUSABLE`): Indonesian/Malay; isiXhosa/isiZulu (13 of 100 MasakhaNEWS Xhosa headlines
come out as Zulu); Hindi/Marathi (2-4% of SemRel2024 sentences swap); and Algerian/Moroccan
Arabic written with Persian letters or presentation forms (پ, ڤ, ﭘ), which lingua reads as Persian
or Urdu (6 of 100 SemRel2024 Algerian sentences). A mismatch inside such a pair is no evidence of
a wrong language, so :func:`same_language` accepts it.

HTEB languages (Table 11) the detector cannot recognise, listed in
:data:`UNSUPPORTED_BENCHMARK_LANGUAGES`: amh Amharic, asm Assamese, hau Hausa, ibo Igbo,
kan Kannada, kin Kinyarwanda, lin Lingala, mal Malayalam, orm Oromo, ory Odia,
pcm Nigerian Pidgin, run Rundi, tir Tigrinya (13 of 45 codes). An output expected in one of them is
never flagged as wrong_language (see ``detector_rules.py``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib.metadata import version

from lingua import Language, LanguageDetector, LanguageDetectorBuilder

from hteb_generate.transform.languages import FAMILIES, canonical

#: Minimum relative distance between the best and the second-best language before lingua names
#: one. 0.0 would always answer; lingua's own docs use 0.25 as a strong setting. 0.1 keeps
#: single short sentences (SemRel2024, news headlines) answerable while abstaining on texts that
#: are genuinely ambiguous between close languages.
MINIMUM_RELATIVE_DISTANCE = 0.1

#: Fewer letters than this and there is no basis for a language decision (numbers, "OK", "...").
MINIMUM_LETTERS = 3

HTEB_LANGUAGES: frozenset[str] = frozenset(
    [
        "afr",
        "amh",
        "ara",
        "arb",
        "arq",
        "ary",
        "asm",
        "ben",
        "dan",
        "deu",
        "eng",
        "fra",
        "guj",
        "hau",
        "hin",
        "ibo",
        "ind",
        "ita",
        "jpn",
        "kan",
        "kin",
        "kor",
        "lin",
        "lug",
        "mal",
        "mar",
        "nld",
        "orm",
        "ory",
        "pan",
        "pcm",
        "pol",
        "run",
        "sna",
        "som",
        "spa",
        "swa",
        "tam",
        "tel",
        "tir",
        "tur",
        "urd",
        "xho",
        "yor",
        "zul",
    ]
)

#: Distinct languages (or a dialect and a language) the detector confuses on short texts.
CONFUSABLE: frozenset[frozenset[str]] = frozenset(
    frozenset(pair)
    for pair in (
        ("ind", "msa"),
        ("xho", "zul"),
        ("hin", "mar"),
        ("arq", "fas"),
        ("arq", "urd"),
        ("ary", "fas"),
        ("ary", "urd"),
    )
)

SUPPORTED: frozenset[str] = frozenset(
    code
    for language in Language.all()
    for code in (
        language.iso_code_639_3.name.lower(),
        *next((f for f in FAMILIES if language.iso_code_639_3.name.lower() in f), ()),
    )
)

UNSUPPORTED_BENCHMARK_LANGUAGES: frozenset[str] = HTEB_LANGUAGES - SUPPORTED


def same_language(a: str, b: str) -> bool:
    """True when two ISO 639-3 codes count as one language for checking.

    ``arb`` and ``ary`` are one family; ``xho`` and ``zul`` are confusable, and so are the
    Arabic dialect ``arq`` and ``fas`` (but not ``ara`` and ``fas``).
    """
    a, b = a.strip().lower(), b.strip().lower()
    if canonical(a) == canonical(b):
        return True
    return frozenset({a, b}) in CONFUSABLE or frozenset({canonical(a), canonical(b)}) in CONFUSABLE


def is_supported(code: str) -> bool:
    """True when the detector can recognise ``code`` (so a mismatch against it means something)."""
    return canonical(code) in SUPPORTED


def detector_info() -> dict[str, object]:
    """What the dataset card and manifest record about the language check."""
    return {
        "library": "lingua-language-detector",
        "version": version("lingua-language-detector"),
        "languages": len(Language.all()),
        "minimum_relative_distance": MINIMUM_RELATIVE_DISTANCE,
        "minimum_letters": MINIMUM_LETTERS,
        "unsupported_benchmark_languages": sorted(UNSUPPORTED_BENCHMARK_LANGUAGES),
    }


@lru_cache(maxsize=1)
def _detector() -> LanguageDetector:
    """Built once, on first use: loading lingua's models costs seconds and memory."""
    return (
        LanguageDetectorBuilder.from_all_languages().with_minimum_relative_distance(MINIMUM_RELATIVE_DISTANCE).build()
    )


def detect_language(text: str) -> str | None:
    """ISO 639-3 code (canonical family member) of ``text``'s language, or None when unsure.

    >>> detect_language("Ons leer immers ons kinders n rein liggaam is die naaste aan n rein hart.")
    'afr'
    """
    if sum(ch.isalpha() for ch in text) < MINIMUM_LETTERS:
        return None
    language = _detector().detect_language_of(text)
    if language is None:
        return None
    return canonical(language.iso_code_639_3.name)
