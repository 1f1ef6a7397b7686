"""Rule-made minimal pairs: the Sensitivity axis's edits, each meaning-changing rule with a meaning-keeping twin.

Why pairs: a model that ignores negation, numbers or who-did-what-to-whom keeps its score under any edit, so
robustness alone rewards a deaf model (issue 45; HEROS and Sentence Smith pair a foil with a paraphrase for the
same reason; SugarCrepe showed that foils without matched twins are won by plausibility alone). So each rule
here has a twin that edits the same span of the same text while keeping its meaning, and the scorer asks,
item by item, whether the model puts the twin nearer the original than the changed text
(hteb_score.scoring.sensitivity). Both rules of a pair find their span with one locator, the first span in
the text both can edit; where there is none, both leave the text as it was (flagged unchanged, never scored).

Definitions (sensitivity rules version 1), changed rule / its twin:
- ``negation_flip`` / ``negation_contraction`` (English): at the first auxiliary that is negated ("is not",
  "isn't", "cannot") the negation is removed / its contracted and expanded forms are swapped ("is not" <->
  "isn't", "cannot" <-> "can't", "will not" <-> "won't"); or, where a pronoun meets am/is/are/will/would
  ("it is"), "not" is inserted / the pair is contracted ("it's"). French: in "ne/n' VERB pas" both
  particles are removed / only "ne" is (spoken French's negation, meaning kept). Cues: the English modal and
  auxiliary verbs (Huddleston & Pullum 2002, ch. 9) and French "ne ... pas" (Grevisse, Le Bon usage, sec. 1022).
- ``number_change`` / ``number_words``: the first free-standing integer of 1-4 digits (no leading zero, not
  part of a decimal, time or date) gets one digit changed, same length / is written in words (num2words,
  in the text's language, where num2words has it).
- ``role_swap`` / ``role_reorder`` (English): in "from A to B" A and B are exchanged / the phrases are
  reordered ("to B from A"); in "A beat B" (beat, beats, defeated, defeats) A and B are exchanged / the clause
  is made passive ("B was beaten by A"). A and B: one or two capitalised words, or numbers.
- ``antonym_swap`` / ``synonym_swap`` (English): the first word that WordNet lists only as an adjective
  (not as a noun, verb or adverb), with a direct antonym and a one-word synonym in the same synset, is
  replaced by the antonym / by the synonym (WordNet 3.0, Debian's ``wordnet-base``: data.adj and the index
  files, read here because nltk's reader needs a ``lexnames`` file that package does not ship).

Every edit keeps the case of the word it replaces' first letter. A rule is a pure function of the text, its
language and a generator seeded from the unit's key (only ``number_change`` draws), as the Noise rules are.

>>> key = (1339, "doc")
>>> edit("negation_flip", "The room is not clean.", key=key, language="eng")
'The room is clean.'
>>> edit("negation_contraction", "The room is not clean.", key=key, language="eng")
"The room isn't clean."
>>> edit("negation_flip", "It is a good idea", key=key, language="eng")
'It is not a good idea'
>>> edit("negation_contraction", "It is a good idea", key=key, language="eng")
"It's a good idea"
>>> edit("role_swap", "Flights from Paris to Rome", key=key, language="eng")
'Flights from Rome to Paris'
>>> edit("role_reorder", "Flights from Paris to Rome", key=key, language="eng")
'Flights to Rome from Paris'
>>> edit("number_words", "I paid 25 dollars", key=key, language="eng")
'I paid twenty-five dollars'
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from num2words import num2words

from hteb_contract.common.registry import Registry
from hteb_contract.errors import HtebError

from hteb_generate.seeding import derive_int

Edit = Callable[[str, np.random.Generator, "str | None"], str]

#: The rules versions: version -> rule name -> function(text, rng, language) -> text, one per rule-made row of the
#: Sensitivity axis in the transformation table (tested). A revision names its version; an old one never changes.
RULE_SETS: dict[str, Registry[Edit]] = {"1": Registry("sensitivity rule (rules version 1)")}
CURRENT_RULES = "1"
RULES = RULE_SETS[CURRENT_RULES]
#: What a rule-made record names as its generator.
RULES_MODEL = "hteb-sensitivity-rules"
#: The label stem of a sensitivity revision (label = STEM-SEED).
LABEL_STEM = "sensitivity"
#: Where Debian's wordnet-base puts WordNet 3.0 (`apt-get install wordnet-base`); HTEB_WORDNET overrides it.
WORDNET_DIR = Path("/usr/share/wordnet")


@dataclass(frozen=True)
class Span:
    """Where a pair's two edits go: text[start:end] becomes `changed` under the rule, `kept` under its twin."""

    start: int
    end: int
    changed: str
    kept: str


Locator = Callable[[str, "str | None"], "Span | None"]


def _cased(template: str, replacement: str) -> str:
    """`replacement` with the first letter's case of `template` (the word it replaces)."""
    if template[:1].isupper() and replacement[:1].islower():
        return replacement[:1].upper() + replacement[1:]
    return replacement


# --- negation ----------------------------------------------------------------------------------------------
#: English auxiliaries: base -> (negated, contracted negation).
EN_NEGATIONS = {
    "is": ("is not", "isn't"),
    "are": ("are not", "aren't"),
    "was": ("was not", "wasn't"),
    "were": ("were not", "weren't"),
    "do": ("do not", "don't"),
    "does": ("does not", "doesn't"),
    "did": ("did not", "didn't"),
    "can": ("cannot", "can't"),
    "could": ("could not", "couldn't"),
    "will": ("will not", "won't"),
    "would": ("would not", "wouldn't"),
    "should": ("should not", "shouldn't"),
    "has": ("has not", "hasn't"),
    "have": ("have not", "haven't"),
    "had": ("had not", "hadn't"),
    "must": ("must not", "mustn't"),
}
#: A pronoun's contraction with am/is/are/will/would: what "not" is inserted after, or what is contracted.
EN_CONTRACTIONS = {"am": "'m", "is": "'s", "are": "'re", "will": "'ll", "would": "'d"}
EN_PRONOUNS = ("i", "you", "we", "they", "he", "she", "it", "that", "there")
_NEGATED_FORMS = {
    form: (base, expanded, contracted)
    for base, (expanded, contracted) in EN_NEGATIONS.items()
    for form in (expanded, contracted)
}
_NEGATED = re.compile(
    r"\b(" + "|".join(sorted(map(re.escape, _NEGATED_FORMS), key=len, reverse=True)) + r")\b(?!\s+only\b)",
    re.IGNORECASE,
)
_PRONOUN_AUX = re.compile(
    r"\b(" + "|".join(EN_PRONOUNS) + r")\s+(" + "|".join(EN_CONTRACTIONS) + r")\b(?!\s+not\b|n't)", re.IGNORECASE
)
_FR_NEGATED = re.compile(r"\b(?:(je)\s+)?(ne\s+|n['’])(\w+)\s+pas\b", re.IGNORECASE)
_VOWEL = re.compile(r"[aeiouyhâàéèêîôû]", re.IGNORECASE)


def _english_negation(text: str) -> Span | None:
    found = [m for m in (_NEGATED.search(text), _PRONOUN_AUX.search(text)) if m]
    if not found:
        return None
    match = min(found, key=lambda m: m.start())
    if match.re is _NEGATED:
        form = match.group(1)
        base, expanded, contracted = _NEGATED_FORMS[form.lower()]
        other = contracted if form.lower() == expanded else expanded
        return Span(match.start(), match.end(), _cased(form, base), _cased(form, other))
    pronoun, aux = match.group(1), match.group(2)
    return Span(match.start(), match.end(), f"{pronoun} {aux} not", pronoun + EN_CONTRACTIONS[aux.lower()])


def _french_negation(text: str) -> Span | None:
    match = _FR_NEGATED.search(text)
    if match is None:
        return None
    je, verb = match.group(1), match.group(3)
    subject = "" if je is None else (je[0] + "'" if _VOWEL.match(verb) else je + " ")
    start = match.start() if je is not None else match.start(2)
    lead = subject if je is not None else ""
    changed, kept = f"{lead}{verb}", f"{lead}{verb} pas"
    return Span(start, match.end(), _cased(text[start], changed), _cased(text[start], kept))


NEGATION_LOCATORS: dict[str, Callable[[str], Span | None]] = {"eng": _english_negation, "fra": _french_negation}


def negation_span(text: str, language: str | None) -> Span | None:
    locate = NEGATION_LOCATORS.get(language or "")
    return None if locate is None else locate(text)


# --- numbers -----------------------------------------------------------------------------------------------
#: ISO 639-3 -> num2words' language code, for the languages of HTEB's datasets num2words writes every integer of
#: 0-9999 in (tested; its Amharic fails on 8,100 of them, so Amharic is not applicable).
NUMBER_LANGUAGES = {
    "eng": "en",
    "fra": "fr",
    "arb": "ar",
    "ind": "id",
    "tel": "te",
    "deu": "de",
    "spa": "es",
    "por": "pt",
    "ita": "it",
    "rus": "ru",
    "tur": "tr",
    "vie": "vi",
    "pol": "pl",
}
_INTEGER = re.compile(r"(?<![\w.,:/-])([1-9]\d{0,3}|0)(?![\w]|[.,:/-]\d)")


def number_span(text: str, language: str | None) -> Span | None:
    code = NUMBER_LANGUAGES.get(language or "")
    match = None if code is None else _INTEGER.search(text)
    if match is None or code is None:
        return None
    digits = match.group(1)
    return Span(match.start(), match.end(), digits, num2words(int(digits), lang=code))


def _other_digits(digits: str, rng: np.random.Generator) -> str:
    """`digits` with one digit, drawn, replaced by another (never a leading zero: the same length)."""
    position = int(rng.integers(len(digits)))
    choices = [
        d for d in "0123456789" if d != digits[position] and not (d == "0" and position == 0 and len(digits) > 1)
    ]
    return digits[:position] + choices[int(rng.integers(len(choices)))] + digits[position + 1 :]


# --- roles -------------------------------------------------------------------------------------------------
_NAME = r"(?:[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)?|\d+(?![.,]?\d))"  # a number: whole, not part of a decimal
_FROM_TO = re.compile(rf"\bfrom\s+({_NAME})\s+to\s+({_NAME})\b")
#: A verb of beating -> the passive that keeps its tense.
BEAT_PASSIVES = {
    "beat": "was beaten by",
    "beats": "is beaten by",
    "defeated": "was defeated by",
    "defeats": "is defeated by",
}
_BEAT = re.compile(rf"\b({_NAME})\s+({'|'.join(BEAT_PASSIVES)})\s+({_NAME})\b")


def role_span(text: str, language: str | None) -> Span | None:
    if language != "eng":
        return None
    found = [m for m in (_FROM_TO.search(text), _BEAT.search(text)) if m]
    if not found:
        return None
    match = min(found, key=lambda m: m.start())
    if match.re is _FROM_TO:
        a, b = match.group(1), match.group(2)
        return Span(match.start(), match.end(), f"from {b} to {a}", f"to {b} from {a}")
    a, verb, b = match.groups()
    return Span(match.start(), match.end(), f"{b} {verb} {a}", f"{b} {BEAT_PASSIVES[verb]} {a}")


# --- antonyms ----------------------------------------------------------------------------------------------
def wordnet_dir() -> Path:
    return Path(os.environ.get("HTEB_WORDNET", WORDNET_DIR))


@cache
def adjective_pairs() -> dict[str, tuple[str, str]]:
    """WordNet adjective -> (its direct antonym, a one-word synonym of the same synset), for every adjective
    that is no noun, verb or adverb and has both (the first such sense in WordNet's sense order); missing
    WordNet files are a one-line error naming the package."""
    folder = wordnet_dir()
    try:
        data = (folder / "data.adj").read_text(encoding="utf-8")
        other = set()
        for pos in ("noun", "verb", "adv"):
            other |= _index_words((folder / f"index.{pos}").read_text(encoding="utf-8"))
        order = _index_senses((folder / "index.adj").read_text(encoding="utf-8"))
    except OSError as err:
        raise HtebError(
            f"the antonym rules need WordNet 3.0 in {folder} (apt-get install wordnet-base, or set HTEB_WORDNET): "
            f"{err.strerror or err}"
        ) from None
    synsets = _adjective_synsets(data)
    pairs: dict[str, tuple[str, str]] = {}
    for word, offsets in order.items():
        if word in other or not word.isalpha():
            continue
        for offset in offsets:
            words, antonyms = synsets[offset]
            antonym = antonyms.get(word)
            synonym = next((w for w in words if w != word and w.isalpha()), None)
            if antonym and synonym and antonym.isalpha():
                pairs[word] = (antonym, synonym)
                break
    return pairs


def _index_words(index: str) -> set[str]:
    return {line.split(" ", 1)[0] for line in index.splitlines() if line and not line.startswith(" ")}


def _index_senses(index: str) -> dict[str, list[str]]:
    """index.adj: lemma -> its synset offsets in sense order (wndb(5WN): the last `synset_cnt` fields)."""
    senses = {}
    for line in index.splitlines():
        if not line or line.startswith(" "):
            continue
        fields = line.split()
        count = int(fields[2])
        senses[fields[0]] = fields[-count:]
    return senses


def _adjective_synsets(data: str) -> dict[str, tuple[list[str], dict[str, str]]]:
    """data.adj: offset -> (its words, word -> direct antonym word), from the lexical `!` pointers."""
    parsed: dict[str, tuple[list[str], list[tuple[int, str, int]]]] = {}
    for line in data.splitlines():
        if not line or line.startswith(" "):
            continue
        fields = line.split(" | ", 1)[0].split()
        count = int(fields[3], 16)
        words = [re.sub(r"\(\w+\)$", "", fields[4 + 2 * i]).lower() for i in range(count)]
        at = 4 + 2 * count
        pointers = []
        for i in range(int(fields[at])):
            symbol, target, _pos, st = fields[at + 1 + 4 * i : at + 5 + 4 * i]
            if symbol == "!":
                pointers.append((int(st[:2], 16), target, int(st[2:], 16)))
        parsed[fields[0]] = (words, pointers)
    return {
        offset: (words, {words[s - 1]: parsed[t][0][w - 1] for s, t, w in pointers if s and w and t in parsed})
        for offset, (words, pointers) in parsed.items()
    }


_WORD = re.compile(r"\b[A-Za-z]+\b")


def antonym_span(text: str, language: str | None) -> Span | None:
    if language != "eng":
        return None
    pairs = adjective_pairs()
    for match in _WORD.finditer(text):
        word = match.group(0)
        found = pairs.get(word.lower())
        if found and (word.islower() or word[1:].islower()):
            antonym, synonym = found
            return Span(match.start(), match.end(), _cased(word, antonym), _cased(word, synonym))
    return None


# --- the rules ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RulePair:
    """A meaning-changing rule, its meaning-keeping twin and the locator both edit by."""

    changed: str
    kept: str
    locate: Locator
    languages: tuple[str, ...]
    #: the changed rule's own draw on the span's text (None: the locator's `changed`)
    redraw: Callable[[str, np.random.Generator], str] | None = None


PAIRS = (
    RulePair("negation_flip", "negation_contraction", negation_span, tuple(NEGATION_LOCATORS)),
    RulePair("number_change", "number_words", number_span, tuple(NUMBER_LANGUAGES), _other_digits),
    RulePair("role_swap", "role_reorder", role_span, ("eng",)),
    RulePair("antonym_swap", "synonym_swap", antonym_span, ("eng",)),
)


def _register(pair: RulePair) -> None:
    def changed(text: str, rng: np.random.Generator, language: str | None = None) -> str:
        span = pair.locate(text, language)
        if span is None:
            return text
        new = span.changed if pair.redraw is None else pair.redraw(text[span.start : span.end], rng)
        return text[: span.start] + new + text[span.end :]

    def kept(text: str, rng: np.random.Generator, language: str | None = None) -> str:
        span = pair.locate(text, language)
        return text if span is None else text[: span.start] + span.kept + text[span.end :]

    RULES.add(pair.changed, changed)
    RULES.add(pair.kept, kept)


for _pair in PAIRS:
    _register(_pair)


def pair_of(rule: str) -> RulePair:
    """The pair a rule belongs to (as the changed rule or as the twin)."""
    return next(p for p in PAIRS if rule in (p.changed, p.kept))


def languages_of(rule: str) -> tuple[str, ...]:
    """The languages (ISO 639-3) a rule has a locator for: a subset in another is declared not applicable."""
    return pair_of(rule).languages


def edit(name: str, text: str, *, key: tuple, language: str | None = None, rules: str = CURRENT_RULES) -> str:
    """`text` (of `language`, ISO 639-3) under rule `name`, drawing from a generator seeded by `key` alone."""
    if rules not in RULE_SETS:
        raise HtebError(f"unknown sensitivity rules version {rules!r}; known: {', '.join(RULE_SETS)}")
    return RULE_SETS[rules].get(name)(text, np.random.default_rng(derive_int("sensitivity", *key)), language)


@cache
def definitions_hash(rules: str = CURRENT_RULES) -> str:
    """sha256 of every constant the rules of version `rules` read, WordNet's adjective file included (another
    WordNet makes other antonyms: another hash, so a revision is never rebuilt from it unnoticed)."""
    definitions: dict[str, Any] = {
        "version": rules,
        "pairs": [[p.changed, p.kept, list(p.languages)] for p in PAIRS],
        "negations": EN_NEGATIONS,
        "contractions": EN_CONTRACTIONS,
        "pronouns": EN_PRONOUNS,
        "french": _FR_NEGATED.pattern,
        "integer": _INTEGER.pattern,
        "name": _NAME,
        "beat": BEAT_PASSIVES,
        "num2words": _num2words_version(),
        "wordnet_adjectives": hashlib.sha256(json.dumps(adjective_pairs(), sort_keys=True).encode()).hexdigest(),
    }
    return hashlib.sha256(json.dumps(definitions, sort_keys=True).encode("utf-8")).hexdigest()


def _num2words_version() -> str:
    from importlib.metadata import version

    return version("num2words")
