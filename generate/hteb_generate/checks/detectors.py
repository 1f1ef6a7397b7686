"""The ten error types of the paper's App. A.2 (docs/generating.md): the exact rules, one small registered rule each.

Why rules and not a model: the paper's error rates (Table 5) come from these rules, and the
published data must say per item which of them the kept output still breaks. This docstring is the
reference the dataset card points to; the rules are in ``detector_rules.py``, and the light
clean-ups that run before them (a closed ``<think>`` block, quotes around the whole output) are in
``cleanup.py``.

Which rules apply to a transformation is its `detectors` in the transformation table
(``hteb_contract/specs/transformations.yaml``); the facts a rule reads of a transformation
(whether a step answers in another language, whether its output is meant to be short) are its
row's too.

What a rule sees: the output after clean-up; the source, that is, the text the transformation
started from (for the two-step transformations the original text, not the intermediate one); the
transformation; the expected and source languages; and the engine's finish reason for the step
that produced the output (None when the engine gives none).

Words. A whitespace token counts as one word, unless it holds characters of a script written
without spaces (:data:`~hteb_generate.checks.detector_rules.UNSPACED_SCRIPTS`: Han, Hiragana and
Katakana, Thai, Lao, Khmer, Myanmar). Each such character counts as 1 / (its script's characters
per word) of a word, and the rest of the token counts as one more word if it has a letter or
digit. In a text with any Hiragana or Katakana, Han characters count at the Japanese rate.
Characters per word: Japanese 2.3, Chinese 1.5 (Han), Thai 4.5, Lao 4.5, Khmer 4.6,
Myanmar 5.9. These are measured on MASSIVE, which holds the same 2,974 test utterances in every
language (mteb's MassiveIntentClassification descriptive statistics): the language's mean
characters per utterance / English's mean characters per utterance x English characters per word
(5.04, counting the space, measured on Banking77). Lao is not in MASSIVE; it takes Thai's rate.
Source and output are counted the same way.

Comparing. Two texts are the same when they are equal after: removing quote pairs that wrap the
whole text (``cleanup.unquote``), Unicode NFC, collapsing runs of whitespace to one space,
dropping final full stops and ellipses (``.`` ``。`` ``।`` ``۔`` ``…``) and surrounding whitespace, and ``casefold``.

The rules, in ERROR_TYPES order:

- identical: the output and the source are the same (above).
- empty: the output is empty or whitespace only.
- ellipsis: the output is only ``...``, ``..`` or ``…`` (runs of them, spaces between runs).
- json_fragment: structure or markup instead of text. Either a line of the output opens a code
  fence (`````` at the start of a line) and the source has none, or the output looks like JSON and
  the source does not start with the same bracket. The output looks like JSON when, stripped, it
  starts with ``{`` or ``[`` and either parses as JSON, or continues (after whitespace) with a
  quote, a bracket or a brace, or ends there. A ``[`` followed by a word, as in "[Deleted] ...",
  is text.
- reasoning_leak: the output holds a reasoning or commentary marker that the source does not
  hold. The markers (case-insensitive):
  ``<think>`` or ``</think>`` (left after clean-up: an unclosed block);
  "here is/are my reasoning";
  "let me think", "let me translate/paraphrase/rephrase/reword/rewrite/summarise/expand/analyse";
  "let me break this/it down";
  "step N:" and its Spanish, French, German and Turkish forms (paso, étape, schritt, adım);
  "the user wants/is asking/asks/asked/has asked/would like/needs/requested";
  a parenthesised note "(Note:" (also nota, remarque, hinweis, anmerkung, not, ملاحظة);
  a line that opens with "Note:" or "Explanation:" (also nota, explicación, remarque,
  explication, hinweis, anmerkung, erklärung, açıklama, ملاحظة).
  "I'll" (or "I’ll") is the one marker that a faithful text can carry, so it has its own rule.
  It is never a leak when the source has an English first-person future ("I'll", "I will",
  "I shall", "I'm going to", "I am going to"). Otherwise, in translation, cross_translation and
  backtranslation (their output language differs from the source's, and the source's own
  first-person future cannot be read in every language), it is a leak only when it opens the
  output, with at most an opener ("Sure", "Okay", "OK", "Alright", "Certainly", "Of course", with
  ``!`` ``,`` or ``.``) before it, and a task verb follows it with at most four words between
  (any form of translate, paraphrase, rephrase, reword, rewrite, summarise, expand, analyse,
  provide, help, assist, try, explain, answer, respond; or "do my best"). "I'll translate it for
  you: ..." is a leak; "I'll call the bank tomorrow", a faithful rendering of "Llamaré al banco
  mañana", is not. In every other transformation, "I'll" anywhere in the output is a leak. Known limit: in a
  cross-language output, the other English markers are flagged even when they render the source
  faithfully (a source that says "el usuario quiere ..."), unless the source carries one of the
  listed non-English forms.
- prefix_leak: the output starts with an instruction label that the source does not start with.
  After optional markdown marks (``* # _ >``) and an optional opener ("Sure", "Certainly",
  "Of course", "Absolutely", "Okay", "OK", "Alright", "Claro", "Bien sûr", "Gerne", "Tabii",
  each optionally followed by ``!`` ``,`` or ``.``) comes one of two things. The first is a label:
  translation, translated text, paraphrase, paraphrased text, rephrased, reworded, rewritten,
  expanded, summarised/summarized, shortened, simplified, formal, informal, casual,
  back-translated (each optionally followed by text, version, sentence, query, question, passage
  or output), rephrasing, rewrite, summary, expansion, output, or the Spanish, French, German,
  Turkish, Arabic, Japanese or Chinese word for translation, paraphrase or summary (traducción,
  texto traducido, paráfrasis, resumen, traduction, texte traduit, résumé, Übersetzung,
  Zusammenfassung, çeviri, özet, ترجمة, ملخص, 翻訳, 翻译, 译文). The label may carry a qualifier:
  "(Spanish)", "in/into/to Spanish", "of the text/sentence/input/query/question". The second is a
  presentation, "here's/here is/here are/aquí está/aquí tienes/voici/hier ist/işte/إليك", followed
  by at most 80 characters that name what is presented: a label word above, or text, version,
  sentence, it, result, answer, texto, versión, texte, metin, النص. Either one ends with ``:`` or
  ``：``, with markdown marks and spaces allowed before it. "Summary of events:" and a label
  later in the output are no prefix leak.
- wrong_language: the language detector (``langid``) confidently names a language other than the
  expected one, the expected language is one it can recognise
  (``langid.UNSUPPORTED_BENCHMARK_LANGUAGES`` are never flagged), and, when the output should stay
  in the source language, the detector recognises the source text itself as that language.
  Otherwise the detector cannot read this text, and a mismatch proves nothing.
- runaway: output words > 5 x source words (exactly 5 x is fine); never for expansion and
  summarised_expansion; never for a source without words.
- truncated: the engine stopped at the token limit (finish reason ``length``), or output words <
  20% of source words (exactly 20% is fine); for summarisation, the word rule applies only when the
  source has at most 3 words, because a summary of a long text is meant to be short.
- summary_too_long: summarisation only, output words > source words. summarised_expansion is not
  checked: its last step summarises the *expansion*, and coming out somewhat longer than the
  original text is its expected result (the paper defines the rule "for Summarisation").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hteb_contract.errors import HtebError
from hteb_contract.common.registry import Registry
from hteb_contract.specs.transformations import TransformationSpec, transformation_spec  # noqa: F401 (the doctests)

#: The error types in the paper's order, each with the short label that heads its column in a dataset card's
#: error table (one place for both, so a new type cannot reach the card without one).
ERROR_LABELS: dict[str, str] = {
    "identical": "ident.",
    "empty": "empty",
    "ellipsis": "ellip.",
    "json_fragment": "json",
    "reasoning_leak": "reason.",
    "prefix_leak": "prefix",
    "wrong_language": "lang.",
    "runaway": "runaway",
    "truncated": "trunc.",
    "summary_too_long": "sum>in",
}
ERROR_TYPES: tuple[str, ...] = tuple(ERROR_LABELS)


@dataclass(frozen=True)
class DetectionContext:
    """What a rule needs besides the two texts.

    expected_language: ISO 639-3 code the output must be in (the target for translation and
    cross_translation, the source language otherwise; the caller passes the intermediate language
    when checking the first step of backtranslation). finish_reason: the engine's reason for
    ending the step that made the output ("stop", "length", ...; None when it gives none).
    """

    transformation: TransformationSpec  # the row whose detectors run (an intermediate step's: its `check`)
    expected_language: str
    source_language: str
    finish_reason: str | None = None


Detector = Callable[[str, str, DetectionContext], bool]
#: Error type -> rule, one per name of ERROR_TYPES (a test checks); the rules load on first lookup.
DETECTORS: Registry[Detector] = Registry("error type", modules=("hteb_generate.checks.detector_rules",))


def detect_errors(
    output: str,
    source: str,
    *,
    transformation: TransformationSpec,
    source_language: str,
    expected_language: str,
    finish_reason: str | None = None,
) -> list[str]:
    """Names of the error types ``output`` (cleaned: ``cleanup.clean_output``) has, in ERROR_TYPES order;
    only the rules the transformation's row lists run.

    >>> detect_errors("Summary: A man plays.", "A man is playing a guitar.",
    ...               transformation=transformation_spec("summarisation"), source_language="eng",
    ...               expected_language="eng")
    ['prefix_leak']
    """
    ctx = DetectionContext(transformation, expected_language, source_language, finish_reason)
    return [
        name for name in ERROR_TYPES if name in transformation.detectors and DETECTORS.get(name)(output, source, ctx)
    ]


def total_error_rate(errors_per_item: Iterable[Sequence[str]]) -> float:
    """Share of items with at least one error (an item counts once, however many it has)."""
    items = list(errors_per_item)
    if not items:
        raise HtebError("total error rate of zero items is undefined")
    return sum(1 for errors in items if errors) / len(items)


def error_rates(errors_per_item: Iterable[Sequence[str]]) -> dict[str, float]:
    """Per error type the share of items that have it, plus ``total`` (the paper's Table 5 row)."""
    items = list(errors_per_item)
    if not items:
        raise HtebError("error rates of zero items are undefined")
    rates = {name: sum(1 for errors in items if name in errors) / len(items) for name in ERROR_TYPES}
    rates["total"] = total_error_rate(items)
    return rates
