"""The rule for each error type, registered in DETECTORS.

The exact rules, the word count and the comparison are stated in the docstring of
``hteb_generate.checks.detectors``, the reference the dataset card points to. Each constant here is named
there. Which rules run for a transformation, and what a rule reads of it, are its row of the
transformation table (hteb_contract.specs.transformations).
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass


from hteb_generate.transform import langid
from hteb_generate.transform.cleanup import unquote
from hteb_generate.checks.detectors import DETECTORS, DetectionContext

RUNAWAY_FACTOR = 5
TRUNCATED_FRACTION_DENOMINATOR = 5  # 20% = 1/5
SHORT_SUMMARY_INPUT_WORDS = 3


# --- words ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UnspacedScript:
    """A script written without spaces between words, and how many of its characters make a word."""

    name: str
    characters: str  # a regular-expression character class
    chars_per_word: float


KANA = UnspacedScript("Japanese", "\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9f", 2.3)  # Hiragana, Katakana
HAN = UnspacedScript("Chinese", "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f", 1.5)  # Han
UNSPACED_SCRIPTS: tuple[UnspacedScript, ...] = (
    KANA,
    HAN,
    UnspacedScript("Thai", "\u0e00-\u0e7f", 4.5),
    UnspacedScript("Lao", "\u0e80-\u0eff", 4.5),
    UnspacedScript("Khmer", "\u1780-\u17ff\u19e0-\u19ff", 4.6),
    UnspacedScript("Myanmar", "\u1000-\u109f\ua9e0-\ua9ff\uaa60-\uaa7f", 5.9),
)
_SCRIPT_CHARS = {script: re.compile(f"[{script.characters}]") for script in UNSPACED_SCRIPTS}
_UNSPACED = re.compile("[" + "".join(script.characters for script in UNSPACED_SCRIPTS) + "]")


def count_words(text: str) -> float:
    """Words of ``text``: whitespace tokens, with scripts written without spaces counted by characters.

    >>> count_words("A man is playing a guitar.")
    6.0
    >>> round(count_words("男性がギターを弾いている。"), 2)  # 12 characters at 2.3 per word
    5.22
    """
    japanese = _SCRIPT_CHARS[KANA].search(text) is not None
    words = 0.0
    for token in text.split():
        if _UNSPACED.search(token) is None:
            words += 1
            continue
        for script, pattern in _SCRIPT_CHARS.items():
            rate = KANA.chars_per_word if script is HAN and japanese else script.chars_per_word
            words += len(pattern.findall(token)) / rate
        words += 1 if any(ch.isalnum() for ch in _UNSPACED.sub("", token)) else 0
    return words


# --- identical, empty, ellipsis, json_fragment --------------------------------------------------

_WHITESPACE = re.compile(r"\s+")
FULL_STOPS = ".。।۔…"


def comparable(text: str) -> str:
    """``text`` as the identical rule compares it (the detectors docstring, "Comparing")."""
    text = _WHITESPACE.sub(" ", unicodedata.normalize("NFC", unquote(text)))
    return text.rstrip(FULL_STOPS + " ").casefold()


@DETECTORS.register("identical")
def identical(output: str, source: str, ctx: DetectionContext) -> bool:
    """The model gave the input back: the transformation did nothing."""
    return comparable(output) == comparable(source)


@DETECTORS.register("empty")
def empty(output: str, source: str, ctx: DetectionContext) -> bool:
    """Nothing but whitespace came back."""
    return not output.strip()


_ELLIPSIS = re.compile(r"(?:\.{2,}|…)(?:\s*(?:\.{2,}|…))*")


@DETECTORS.register("ellipsis")
def ellipsis(output: str, source: str, ctx: DetectionContext) -> bool:
    """Only ``...``, ``..`` or ``…`` (a refusal or a stall)."""
    return _ELLIPSIS.fullmatch(output.strip()) is not None


_CODE_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)
_JSON_START = re.compile(r"""\{\s*(?:["'}]|$)|\[\s*(?:["'\[\]{]|$)""")


def looks_like_json(text: str) -> bool:
    """``text`` starts with ``{`` or ``[`` and parses as JSON or continues as JSON does."""
    text = text.strip()
    if not text.startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except ValueError:
        return _JSON_START.match(text) is not None
    return True


@DETECTORS.register("json_fragment")
def json_fragment(output: str, source: str, ctx: DetectionContext) -> bool:
    """Structure or markup instead of text: a code fence, or JSON the source does not start like."""
    if _CODE_FENCE.search(output) and not _CODE_FENCE.search(source):
        return True
    return looks_like_json(output) and output.lstrip()[:1] != source.lstrip()[:1]


# --- reasoning_leak ---------------------------------------------------------------------------

_TASK_VERBS = r"translat\w*|paraphras\w*|rephras\w*|reword\w*|rewrit\w*|summari[sz]\w*|expand\w*|analy[sz]\w*"
_NOTE_WORDS = r"note|nota|remarque|hinweis|anmerkung|ملاحظة"
_REASONING_MARKERS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE | re.MULTILINE)
    for p in (
        r"</?think>",
        r"\bhere (?:are|is) my reasoning\b",
        rf"\blet me (?:think|(?:{_TASK_VERBS})\b|break (?:this|it) down)",
        r"\b(?:step|paso|étape|schritt|adım) \d+\s*:",
        r"\bthe user (?:wants|is asking|asks|asked|has asked|would like|needs|requested)\b",
        rf"\(\s*(?:{_NOTE_WORDS}|not)\s*:",
        rf"^[\s*_#>-]*(?:{_NOTE_WORDS}|explanation|explicación|explication|erklärung|açıklama)[\s*_]*:",
    )
)
_I_LL = re.compile(r"\bI['’]ll\b", re.IGNORECASE)
_FIRST_PERSON_FUTURE = re.compile(r"\bI(?:['’]ll| will| shall|['’]m going to| am going to)\b", re.IGNORECASE)
_OPENER = r"(?:(?:sure|okay|ok|alright|certainly|of course)\s*[!,.]?\s*)?"
_I_LL_AT_TASK = re.compile(
    rf"[\s*_#>]*{_OPENER}I['’]ll(?:\s+\S+){{0,4}}?\s+(?:{_TASK_VERBS}|provid\w*|help\w*|assist\w*|try\w*|explain\w*"
    r"|answer\w*|respond\w*|do my best)\b",
    re.IGNORECASE,
)


def _i_ll_leak(output: str, source: str, ctx: DetectionContext) -> bool:
    """The "I'll" rule of the detectors docstring."""
    if _I_LL.search(output) is None or _FIRST_PERSON_FUTURE.search(source):
        return False
    return not ctx.transformation.crosses_languages or _I_LL_AT_TASK.match(output) is not None


@DETECTORS.register("reasoning_leak")
def reasoning_leak(output: str, source: str, ctx: DetectionContext) -> bool:
    """Reasoning or commentary markers the source does not carry itself."""
    if any(marker.search(output) and not marker.search(source) for marker in _REASONING_MARKERS):
        return True
    return _i_ll_leak(output, source, ctx)


# --- prefix_leak ------------------------------------------------------------------------------

_LABEL = (
    r"(?:translated|paraphrased|rephrased|reworded|rewritten|expanded|summari[sz]ed|shortened|simplified"
    r"|formal|informal|casual|back-?translated)(?:\s+(?:text|version|sentence|query|question|passage|output))?"
    r"|translation|paraphrase|rephrasing|rewrite|summary|expansion|output"
    r"|traducci[oó]n|texto traducido|par[aá]frasis|resumen|traduction|texte traduit|r[ée]sum[ée]"
    r"|[üu]bersetzung|zusammenfassung|[çc]eviri|[öo]zet|ترجمة|الترجمة|ملخص|翻訳|翻译|译文"
)
_QUALIFIER = r"(?:\s*\([^()\n]{1,40}\)|\s+(?:in|into|to)\s+\w+|\s+of the (?:text|sentence|input|query|question))?"
_PRESENTED = re.compile(
    rf"\b(?:{_LABEL}|text|version|sentence|it|result|answer|texto|versi[oó]n|texte|metin)\b|النص", re.IGNORECASE
)
_PREFIX = re.compile(
    r"[\s*#_>]*(?:(?:sure|certainly|of course|absolutely|okay|ok|alright|claro|bien sûr|gerne|tabii)\s*[!,.]?\s*)?"
    r"[\s*#_>]*(?:(?P<here>(?:here(?:['’]s| is| are)|aquí (?:está|tienes)|voici|hier ist|işte|إليك)[^:：\n]{0,80})"
    rf"|(?:{_LABEL}){_QUALIFIER})[\s*_]*[:：]",
    re.IGNORECASE,
)


def _prefix(text: str) -> bool:
    match = _PREFIX.match(text)
    return match is not None and (match["here"] is None or _PRESENTED.search(match["here"]) is not None)


@DETECTORS.register("prefix_leak")
def prefix_leak(output: str, source: str, ctx: DetectionContext) -> bool:
    """The output starts with an instruction label ("Translation:", "Sure! Here's a paraphrase:", ...)."""
    return _prefix(output) and not _prefix(source)


# --- wrong_language ---------------------------------------------------------------------------


@DETECTORS.register("wrong_language")
def wrong_language(output: str, source: str, ctx: DetectionContext) -> bool:
    """The detector confidently reads another language than the expected one."""
    if not langid.is_supported(ctx.expected_language):
        return False
    found = langid.detect_language(output)
    if found is None or langid.same_language(found, ctx.expected_language):
        return False
    if langid.same_language(ctx.expected_language, ctx.source_language):
        source_found = langid.detect_language(source)
        if source_found is not None and not langid.same_language(source_found, ctx.source_language):
            return False
    return True


# --- runaway, truncated, summary_too_long ---------------------------------------------------------


@DETECTORS.register("runaway")
def runaway(output: str, source: str, ctx: DetectionContext) -> bool:
    """More than 5 x the input's words (not checked where growing is the point: expansion)."""
    n_in = count_words(source)
    return n_in > 0 and count_words(output) > RUNAWAY_FACTOR * n_in


@DETECTORS.register("truncated")
def truncated(output: str, source: str, ctx: DetectionContext) -> bool:
    """Cut at the token limit, or under 20% of the input's words (a short output by design, a summary: inputs
    of at most 3 words)."""
    if ctx.finish_reason == "length":
        return True
    n_in = count_words(source)
    if ctx.transformation.short_output and n_in > SHORT_SUMMARY_INPUT_WORDS:
        return False
    return count_words(output) * TRUNCATED_FRACTION_DENOMINATOR < n_in


@DETECTORS.register("summary_too_long")
def summary_too_long(output: str, source: str, ctx: DetectionContext) -> bool:
    """A summary with more words than its input defeats the purpose (checked for summarisation only)."""
    return count_words(output) > count_words(source)
