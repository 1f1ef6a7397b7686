"""Language names for the prompts, and the seeded language choices (docs/generating.md).

Why hashing: every choice must depend only on (seed, dataset, transformation, item), never on
batch order or sharding, so it is read off a sha256 of exactly those values (hteb_generate.seeding).
"""

from __future__ import annotations

from hteb_contract.errors import HtebError

from hteb_generate.seeding import derive_int

#: ISO 639-3 -> the English name the prompts' {target_language} takes.
NAMES: dict[str, str] = {
    "afr": "Afrikaans",
    "amh": "Amharic",
    "ara": "Arabic",
    "arb": "Arabic",
    "arq": "Algerian Arabic",
    "ary": "Moroccan Arabic",
    "ben": "Bengali",
    "dan": "Danish",
    "deu": "German",
    "eng": "English",
    "fra": "French",
    "guj": "Gujarati",
    "hau": "Hausa",
    "hin": "Hindi",
    "ibo": "Igbo",
    "ind": "Indonesian",
    "ita": "Italian",
    "kan": "Kannada",
    "kin": "Kinyarwanda",
    "kor": "Korean",
    "lin": "Lingala",
    "lug": "Luganda",
    "mal": "Malayalam",
    "mar": "Marathi",
    "nld": "Dutch",
    "orm": "Oromo",
    "ory": "Odia",
    "pan": "Punjabi",
    "pcm": "Nigerian Pidgin",
    "pol": "Polish",
    "run": "Kirundi",
    "sna": "Shona",
    "som": "Somali",
    "spa": "Spanish",
    "swa": "Swahili",
    "tam": "Tamil",
    "tel": "Telugu",
    "tir": "Tigrinya",
    "tur": "Turkish",
    "urd": "Urdu",
    "xho": "Xhosa",
    "yor": "Yoruba",
    "zul": "Zulu",
    "jpn": "Japanese",
    "rus": "Russian",
    "por": "Portuguese",
    "zho": "Chinese",
    "cmn": "Chinese",
    "asm": "Assamese",
}

#: Codes of one language; the first member is the canonical one (langid.detect_language returns it). Here, not in
#: langid, so that what chooses languages needs no language detector (lingua): the doctor's checks build the
#: configuration on a host without it (bench/gpu_check.py).
FAMILIES: tuple[tuple[str, ...], ...] = (("ara", "arb", "arq", "ary"),)
_CANONICAL: dict[str, str] = {code: family[0] for family in FAMILIES for code in family}

TRANSLATION_TARGETS: tuple[str, ...] = ("spa", "fra", "deu", "tur", "ara")
PIVOTS: tuple[str, ...] = ("eng", "spa", "fra", "deu", "tur", "ara")


def name_of(code: str) -> str:
    try:
        return NAMES[code]
    except KeyError:
        raise HtebError(
            f"no language name for ISO 639-3 code {code!r} (add it to hteb_generate.transform.languages.NAMES)"
        ) from None


def canonical(code: str) -> str:
    """The code that stands for ``code``'s family (``arq`` -> ``ara``), lower-cased."""
    code = code.strip().lower()
    return _CANONICAL.get(code, code)


def _same(a: str, b: str) -> bool:
    """Arabic dialects count as Arabic: an Algerian Arabic text is not translated to Arabic."""
    return canonical(a) == canonical(b)


def run_order(seed: int, dataset: str, transformation: str, candidates: tuple[str, ...]) -> list[str]:
    """The run's seeded ranking of the candidates (the same for every text of the run)."""
    return sorted(candidates, key=lambda c: derive_int(seed, dataset, transformation, "order", c))


def run_target(seed: int, dataset: str, transformation: str, source: str) -> str:
    """One target per run: the first of the run's ranking that is not the source language."""
    return next(c for c in run_order(seed, dataset, transformation, TRANSLATION_TARGETS) if not _same(c, source))


def item_choice(
    seed: int, dataset: str, transformation: str, item: str, source: str, candidates: tuple[str, ...]
) -> str:
    """A language drawn per text from `candidates`, less the source's."""
    allowed = [c for c in candidates if not _same(c, source)]
    return allowed[derive_int(seed, dataset, transformation, item) % len(allowed)]
