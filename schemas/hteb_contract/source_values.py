"""What a source dataset's names may be (dataset, table, subset, language codes), the columns a source
copy adds, and the subsets of mteb's naming with the languages they spell."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import fields
from typing import Any

from hteb_contract.errors import SourceError
from hteb_contract.tasks import TextRef, task_type

ID_COLUMN = "_hteb_item_id"  # item ids persisted beside the rows in a revision's source copy


SUBSET_FIELD = "lang"  # the row field naming its mteb subset (mteb's fast-loading datasets use it)


DEFAULT_SUBSET = "default"  # mteb's subset of a dataset without hf_subsets


CORPUS_TABLE = "corpus"


#: The document fields perturbed by the opt-in corpus noise (each non-empty one is a text of its own).
CORPUS_FIELDS = ("title", "text")


#: A `TextRef`'s fields: the columns of `SourceDataset.text_columns` and `corpus_text_columns`.
TEXT_COLUMNS = tuple(f.name for f in fields(TextRef))


NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


_SUBSET = NAME_PATTERN  # a Hub config name, as mteb's hf_subsets are (`en-de`, `en-ext`, `zh-TW`, `afr`)


LANGUAGE_CODE = re.compile(r"^[a-z]{3}$")


TABLE_NAME = re.compile(r"^\w+$")  # a split is a file name in the folder: no path in it


#: dataset.json keys holding a string -> whether the key is required
INFO_KEYS = {
    "name": True,
    "task_type": True,
    "eval_split": True,
    "train_split": False,
    "mteb_task": False,
    "hf_path": False,
    "hf_revision": False,
}


#: ISO 639-1 -> ISO 639-3, for the two-letter subset names mteb uses (`de`, `en-de`), as its eval_langs
#: map them (`ar` -> ara). `zh` is left out: mteb's Chinese subsets (zh-CN, zh-TW) must be declared.
ISO_639_1: dict[str, str] = {
    "af": "afr",
    "am": "amh",
    "ar": "ara",
    "as": "asm",
    "az": "aze",
    "bn": "ben",
    "cs": "ces",
    "cy": "cym",
    "da": "dan",
    "de": "deu",
    "el": "ell",
    "en": "eng",
    "es": "spa",
    "fa": "fas",
    "fi": "fin",
    "fr": "fra",
    "gu": "guj",
    "ha": "hau",
    "he": "heb",
    "hi": "hin",
    "hu": "hun",
    "hy": "hye",
    "id": "ind",
    "ig": "ibo",
    "is": "isl",
    "it": "ita",
    "ja": "jpn",
    "jv": "jav",
    "ka": "kat",
    "km": "khm",
    "kn": "kan",
    "ko": "kor",
    "lv": "lav",
    "ml": "mal",
    "mn": "mon",
    "mr": "mar",
    "ms": "msa",
    "my": "mya",
    "nb": "nob",
    "nl": "nld",
    "or": "ory",
    "pa": "pan",
    "pl": "pol",
    "pt": "por",
    "ro": "ron",
    "ru": "rus",
    "sl": "slv",
    "so": "som",
    "sq": "sqi",
    "sv": "swe",
    "sw": "swa",
    "ta": "tam",
    "te": "tel",
    "th": "tha",
    "tl": "tgl",
    "tr": "tur",
    "uk": "ukr",
    "ur": "urd",
    "vi": "vie",
    "xh": "xho",
    "yo": "yor",
    "zu": "zul",
}


_SURROGATE = re.compile("[\ud800-\udfff]")  # JSON's "\\ud800" read alone: no character, not UTF-8 text


def any_value(value: Any) -> bool:
    return True


def lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a string or a list of strings, or None: such a "text" cannot be
    encoded as UTF-8 (hashed, tokenised, written), so it is refused where it is read."""
    for text in value if isinstance(value, list) else [value]:
        found = _SURROGATE.search(text) if isinstance(text, str) else None
        if found:
            return found.group()
    return None


def subset_of(row: Mapping[str, Any]) -> str:
    """The mteb subset a row belongs to: its `lang` field, else `default`."""
    value = row.get(SUBSET_FIELD)
    return value if isinstance(value, str) and value else DEFAULT_SUBSET


def subset_languages(name: str) -> tuple[str, ...]:
    """The languages an mteb subset name spells, one per text position.

    An ISO 639-3 name is its language (`afr`), an ISO 639-1 name goes through ISO_639_1 (`de`),
    an `-ext` suffix is not a language (`en-ext` -> eng) and `xx-yy` is a pair: first text xx,
    second yy (`en-de` -> eng, deu; `en-en` -> eng). Any other name must be declared.

    >>> subset_languages("en-de"), subset_languages("en-ext"), subset_languages("afr")
    (('eng', 'deu'), ('eng',), ('afr',))
    """
    parts = name.split("-")
    if parts[-1] == "ext" and len(parts) > 1:
        parts = parts[:-1]
    codes = [part if LANGUAGE_CODE.match(part) else ISO_639_1.get(part, "") for part in parts]
    if not 1 <= len(codes) <= 2 or not all(codes):
        raise SourceError(
            f"cannot tell the languages of subset {name!r} from its name; "
            f'declare them in dataset.json, e.g. "subsets": {{"{name}": ["eng"]}}'
        )
    return tuple(dict.fromkeys(codes))


def _positions(task: str) -> int:
    """How many language positions a subset of this task type has (its transformed text fields)."""
    return len(task_type(task).text_fields)


def check_subsets(subsets: Mapping[str, Any], task: str, *, where: str) -> dict[str, tuple[str, ...]]:
    """Validated `subsets`: Hub-style names, each with one ISO 639-3 code or one per text position."""
    if not isinstance(subsets, Mapping) or not subsets:
        raise SourceError(f"{where}: subsets must be a non-empty object of subset name -> list of languages")
    checked = {}
    for name, codes in subsets.items():
        if not _SUBSET.match(str(name)):
            raise SourceError(
                f"{where}: subset name {name!r} is not an mteb subset name "
                f"(a Hub config name: letters, digits, '.', '_', '-')"
            )
        if isinstance(codes, str) or not isinstance(codes, Iterable):
            raise SourceError(f"{where}: subset {name!r} must list its languages, got {codes!r}")
        codes = tuple(codes)
        bad = [c for c in codes if not isinstance(c, str) or not LANGUAGE_CODE.match(c)]
        if bad or not codes:
            raise SourceError(f"{where}: subset {name!r}: languages must be ISO 639-3 codes, got {list(codes)}")
        positions = _positions(task)
        if len(codes) not in (1, positions):
            raise SourceError(
                f"{where}: subset {name!r} lists {len(codes)} languages; a {task} text has "
                f"{positions} position(s): give one language, or one per position"
            )
        checked[str(name)] = codes
    return checked


def subsets_union(subsets: Mapping[str, tuple[str, ...]]) -> tuple[str, ...]:
    return tuple(sorted({code for codes in subsets.values() for code in codes}))
