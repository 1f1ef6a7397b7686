"""Rule-based noise: the Noise axis's perturbations, made without an LLM.

Why rules: SAGE (the SAGE paper, Task 2 and App. A.6; docs/papers.md, docs/noise.md) measures
robustness to surface noise that keeps a text's meaning, with three exactly defined perturbations;
two common noise types of the augmentation literature join them. Each is a pure function of the
text and a generator seeded from the unit's key (run seed, dataset, transformation, text), so input
order, batch size and sharding change nothing, and a full-size revision needs only a CPU.

Definitions (SAGE's three, then ours), in rules version 1 (noise-1339's, kept as it was):
- ``random_capitalisation``: round(25%) of the character positions, drawn without replacement, are
  upper-cased; a character already upper-case, or without a one-character upper case, stays.
- ``character_deletion``: every 10th non-space character is removed; white space is never removed,
  so word boundaries stay where they were.
- ``numerisation``: e -> 3, i -> 1, a -> 4, o -> 0 (lower case only, every occurrence).
- ``keyboard_typos``: each ASCII letter is replaced, with probability 5%, by a neighbouring key on
  a QWERTY keyboard (drawn uniformly among its neighbours), keeping its case.
- ``punctuation_casing_loss``: lower-cased, every Unicode punctuation character removed, runs of
  white space collapsed to one space.

Version 2 (issue 34) reaches every script of the registry through one table
(hteb_contract/specs/noise_scripts.yaml): ``keyboard_typos`` types each letter on the keyboard of
its script (the language's national one where it has one: AZERTY for French, QWERTZ for German),
Hangul syllables on Dubeolsik jamo and Ethiopic syllables by their SERA consonant key;
``numerisation`` uses each script's look-alike digits where a convention exists. On English (QWERTY)
text version 2 gives exactly version 1's output; the other three rules are version 1's, and the
table declares where they do not apply (no case: random_capitalisation and the casing half of
punctuation_casing_loss change nothing).

Version 3 (issue 46) picks and edits extended grapheme clusters (hteb_generate.transform.graphemes),
never a code point inside one, and never joins two clusters into one: ``character_deletion`` deletes every
10th non-space cluster, ``random_capitalisation`` upper-cases 25% of the clusters, ``keyboard_typos``
draws once per cluster and moves its first code point (the key typed first) to a neighbouring key,
``punctuation_casing_loss`` drops punctuation clusters whole; an edit that would join its neighbours
is not made. A text's script is the script of most of its letters (as docs/noise.md says): a rule that needs
something of a script (case, look-alike digits, a keyboard) leaves a text whose script lacks it as it is (an
English name in an Arabic text is not upper-cased), and ``numerisation`` edits only the words of the text's
script, with that script's digits. On text whose clusters are single code points and whose words share one
script (plain English), version 3 gives version 2's output.

>>> numerisation("A good idea", None)
'A g00d 1d34'
>>> character_deletion("abcdefghijklmnopqrstu", None)
'abcdefghiklmnopqrsu'
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from hteb_contract.item_table import single_attempt_table
from hteb_contract.common import yaml_input
from hteb_contract.common.registry import Registry
from hteb_contract.errors import HtebError
from hteb_contract.specs.noise_scripts import TABLE_PATH as NOISE_SCRIPTS_PATH
from hteb_contract.specs.noise_scripts import adjacency, noise_scripts, text_script
from hteb_contract.sources import SourceDataset
from hteb_contract.specs.transformations import is_pair_rule, transformation_table

from hteb_generate.transform import sensitivity
from hteb_generate.transform.graphemes import clusters, rewrite, short_clusters, stays_apart
from hteb_generate.transform.keyboards import key_neighbours
from hteb_generate.seeding import derive_int

Perturbation = Callable[[str, np.random.Generator, "str | None"], str]

#: The rules versions: version -> perturbation name -> function(text, rng, language) -> text, one per
#: rule-made row of the transformation table (hteb_contract.specs.transformations), in its order
#: (tested). A revision names its version (the config's `noise_rules`); an old one is never changed.
RULE_SETS: dict[str, Registry[Perturbation]] = {
    "1": Registry("noise perturbation (rules version 1)"),
    "2": Registry("noise perturbation (rules version 2)"),
    "3": Registry("noise perturbation (rules version 3)"),
}
#: The version a new revision is made with: version 3, published as noise3-1339 (docs/noise.md); a published
#: revision of an older version is remade with the version its config names (`hteb-generate remake`).
CURRENT_RULES = "3"
#: The version of a revision whose config names none (those made before versions: noise-1339).
FIRST_RULES = "1"
#: The noise profile's label stem per rules version (label = STEM-SEED): a published label never moves, so a
#: new version publishes under a new one (noise-1339 is version 1's, noise2-1339 version 2's).
RULE_LABELS = {"1": "noise", "2": "noise2", "3": "noise3"}
PERTURBATIONS: Registry[Perturbation] = RULE_SETS[CURRENT_RULES]

CAPITALISED_SHARE = 0.25
DELETION_PERIOD = 10
TYPO_RATE = 0.05
NUMERALS = str.maketrans({"e": "3", "i": "1", "a": "4", "o": "0"})
QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
QWERTY_NEIGHBOURS = adjacency(QWERTY_ROWS)


def _both(name: str) -> Callable[[Perturbation], Perturbation]:
    """A rule whose definition is the same in versions 1 and 2 (version 3 edits grapheme clusters)."""

    def wrap(function: Perturbation) -> Perturbation:
        for version in ("1", "2"):
            RULE_SETS[version].add(name, function)
        return function

    return wrap


@_both("random_capitalisation")
def random_capitalisation(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    chars = list(text)
    count = round(CAPITALISED_SHARE * len(chars))
    for position in rng.choice(len(chars), size=count, replace=False) if count else ():
        upper = chars[position].upper()
        if len(upper) == 1:
            chars[position] = upper
    return "".join(chars)


@_both("character_deletion")
def character_deletion(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    kept, counted = [], 0
    for char in text:
        if not char.isspace():
            counted += 1
            if counted % DELETION_PERIOD == 0:
                continue
        kept.append(char)
    return "".join(kept)


@RULE_SETS["1"].register("numerisation")
def numerisation(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    return text.translate(NUMERALS)


@RULE_SETS["2"].register("numerisation")
def numerisation_by_script(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    """Each letter -> its script's look-alike digit (lower case only, every occurrence)."""
    return text.translate(_script_numerals())


@cache
def _script_numerals() -> dict[int, str]:
    table = noise_scripts()
    return {ord(letter): digit for script in table.scripts.values() for letter, digit in (script.digits or {}).items()}


@RULE_SETS["1"].register("keyboard_typos")
def keyboard_typos(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    chars = list(text)
    hits = rng.random(len(chars)) < TYPO_RATE
    for position in np.flatnonzero(hits):
        char = chars[position]
        near = QWERTY_NEIGHBOURS.get(char.lower())
        if near:
            typo = near[rng.integers(len(near))]
            chars[position] = typo.upper() if char.isupper() else typo
    return "".join(chars)


@RULE_SETS["2"].register("keyboard_typos")
def keyboard_typos_by_script(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    """Version 1's draws (one per character, then one per hit that has a neighbour), each letter on
    the keyboard of its own script (hteb_generate.transform.keyboards)."""
    chars = list(text)
    hits = rng.random(len(chars)) < TYPO_RATE
    for position in np.flatnonzero(hits):
        near = key_neighbours(chars[position], language)
        if near:
            chars[position] = near[rng.integers(len(near))]
    return "".join(chars)


@_both("punctuation_casing_loss")
def punctuation_casing_loss(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    stripped = "".join(c for c in text.lower() if not unicodedata.category(c).startswith("P"))
    return re.sub(r"\s+", " ", stripped).strip()


def _by_text_script(name: str) -> Callable[[Perturbation], Perturbation]:
    """A version 3 rule that applies to a text as the script table says it applies to the text's script: a
    text whose script lacks what the rule needs (case, look-alike digits, a keyboard) is left as it is, so a
    subset the table declares not applicable changes no text, whatever words of other scripts it quotes."""

    def wrap(function: Perturbation) -> Perturbation:
        def gated(text: str, rng: np.random.Generator, language: str | None = None) -> str:
            return function(text, rng, language) if noise_scripts().applies(name, text_script(text)) else text

        RULE_SETS["3"].add(name, gated)
        return function

    return wrap


@_by_text_script("random_capitalisation")
def capitalise_clusters(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    """round(25%) of the clusters upper-cased, where the upper case is one cluster."""
    units = clusters(text)
    count = round(CAPITALISED_SHARE * len(units))
    drawn = rng.choice(len(units), size=count, replace=False) if count else ()
    return rewrite(units, sorted(drawn), _upper)


def _upper(unit: str, before: str, after: str) -> str | None:
    upper = unit.upper()
    return upper if len(short_clusters(upper)) == 1 else None


@RULE_SETS["3"].register("character_deletion")
def delete_clusters(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    """Every 10th cluster not starting with white space deleted (word boundaries stay), unless deleting it would
    join its neighbours into one cluster."""
    units = clusters(text)
    counted = [i for i, unit in enumerate(units) if not unit[0].isspace()]
    return rewrite(units, counted[DELETION_PERIOD - 1 :: DELETION_PERIOD], lambda unit, before, after: "")


@_by_text_script("numerisation")
def numerise_text_script(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    """Each cluster that is a letter of the text's script with a look-alike digit -> that digit, in the words
    written in the text's script only (a Latin name in a Hebrew text stays)."""
    script = text_script(text)
    digits = _script_numerals_of(script) if script else {}
    if script is None or not digits:
        return text
    units = clusters(text)
    hits = [i for i in _words_of(units, script) if units[i] in digits]
    return rewrite(units, hits, lambda unit, before, after: digits[unit])


def _words_of(units: list[str], script: str) -> list[int]:
    """The positions of the clusters of `units` inside words (runs of clusters not starting with white space)
    whose script is `script`."""
    found: list[int] = []
    word: list[int] = []
    for position, unit in enumerate([*units, " "]):
        if not unit[0].isspace():
            word.append(position)
            continue
        if word and text_script("".join(units[i] for i in word)) == script:
            found += word
        word = []
    return found


@cache
def _script_numerals_of(script: str) -> dict[str, str]:
    return dict(noise_scripts().scripts[script].digits or {}) if script in noise_scripts().scripts else {}


@_by_text_script("keyboard_typos")
def typo_clusters(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    """Version 2's draws, one per cluster: a hit cluster's first code point (the key typed first) moves to a
    neighbouring key of its script's keyboard, the marks typed after it kept, where that stays one cluster."""
    units = clusters(text)
    hits = rng.random(len(units)) < TYPO_RATE

    def typo(unit: str, before: str, after: str) -> str | None:
        options = [near + unit[1:] for near in key_neighbours(unit[0], language)]
        options = [o for o in options if len(short_clusters(o)) == 1 and stays_apart(before, o, after)]
        return options[rng.integers(len(options))] if options else None

    return rewrite(units, np.flatnonzero(hits), typo)


@RULE_SETS["3"].register("punctuation_casing_loss")
def strip_clusters(text: str, rng: np.random.Generator, language: str | None = None) -> str:
    """Lower-cased, every cluster starting with punctuation dropped whole, runs of white space clusters collapsed
    to one space (none at either end); a drop that would join its neighbours is not made."""
    units = clusters(text.lower())
    punctuation = [i for i, unit in enumerate(units) if unicodedata.category(unit[0]).startswith("P")]
    runs = _space_runs(clusters(rewrite(units, punctuation, lambda unit, before, after: "")))
    spaces = [i for i, unit in enumerate(runs) if unit.isspace()]
    return rewrite(runs, spaces, lambda unit, before, after: " " if before and after else "")


def _space_runs(units: list[str]) -> list[str]:
    """`units` with each run of white space clusters joined into one unit."""
    runs: list[str] = []
    for unit in units:
        if runs and unit.isspace() and runs[-1].isspace():
            runs[-1] += unit
        else:
            runs.append(unit)
    return runs


def perturb(name: str, text: str, *, key: tuple, language: str | None = None, rules: str = CURRENT_RULES) -> str:
    """`text` (of `language`, ISO 639-3, for a national keyboard) under perturbation `name` of rules
    version `rules`, drawn from a generator seeded by `key` alone."""
    return rule_set(rules).get(name)(text, np.random.default_rng(derive_int("noise", *key)), language)


def rule_set(rules: str) -> Registry[Perturbation]:
    """The perturbations of rules version `rules`; an unknown version is a one-line error."""
    if rules not in RULE_SETS:
        raise HtebError(f"unknown noise rules version {rules!r}; known: {', '.join(RULE_SETS)}")
    return RULE_SETS[rules]


#: What a rule-made record names as its generator (with the version of its rules' definitions).
RULES_MODEL = "hteb-noise-rules"


@cache
def definitions_hash(rules: str = CURRENT_RULES) -> str:
    """sha256 of every constant the perturbations of version `rules` read (a changed rule changes every
    record's hash); version 2's also covers the whole script table (parsed once: 30 ms a time)."""
    definitions: dict[str, Any] = {
        "version": rules,
        "names": list(rule_set(rules).names()),
        "capitalised_share": CAPITALISED_SHARE,
        "deletion_period": DELETION_PERIOD,
        "typo_rate": TYPO_RATE,
        "qwerty_rows": QWERTY_ROWS,
        "numerals": {chr(k): v for k, v in NUMERALS.items()},
    }
    if rules != FIRST_RULES:
        definitions["scripts"] = yaml_input.read(NOISE_SCRIPTS_PATH)
    return hashlib.sha256(json.dumps(definitions, sort_keys=True).encode("utf-8")).hexdigest()


@cache
def rules_code_digest() -> str:
    """sha256 of the source of every module the rules run (this one, graphemes, keyboards, sensitivity, seeding).
    Why: `definitions_hash` covers the constants a version reads, not its code, and a published version's code
    never changes; a rule edited while a version is being made must not be served from a revision staged before
    the edit (the staging folder names this digest)."""
    from hteb_generate import seeding
    from hteb_generate.transform import graphemes, keyboards

    digest = hashlib.sha256()
    for module in (sensitivity, graphemes, keyboards, seeding):
        digest.update(Path(str(module.__file__)).read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


def is_rule(transformation: str) -> bool:
    """A transformation the table says rules make (these or the Sensitivity axis's), not an LLM (False for an
    unknown name)."""
    table = transformation_table()
    return transformation in table.names and table.get(transformation).is_rule


RuleEdit = Callable[[str, tuple, "str | None"], str]


def rule_edit(transformation: str, rules: str, sensitivity_rules: str) -> tuple[RuleEdit, str, str]:
    """What makes a rule's texts: (text, key, language) -> text, the hash of its definitions, its generator name."""
    if is_pair_rule(transformation):
        return (
            lambda text, key, language: sensitivity.edit(
                transformation, text, key=key, language=language, rules=sensitivity_rules
            ),
            sensitivity.definitions_hash(sensitivity_rules),
            sensitivity.RULES_MODEL,
        )
    return (
        lambda text, key, language: perturb(transformation, text, key=key, language=language, rules=rules),
        definitions_hash(rules),
        RULES_MODEL,
    )


def noise_tables(
    seed: int,
    name: str,
    dataset: SourceDataset,
    transformations: Iterable[str],
    *,
    corpus: bool = False,
    rules: str = CURRENT_RULES,
    sensitivity_rules: str = sensitivity.CURRENT_RULES,
) -> dict[str, pa.Table]:
    """Rule transformation (Noise, or Sensitivity's minimal pairs) -> its item table: one single-attempt record
    per text of `dataset` (no LLM, no judge), in ref order; `corpus`: per corpus title and text instead (the
    opt-in perturbed corpus of retrieval, SAGE Task 5). Columns, not a record per text: 419,000 of them for
    noise-1339.

    The key is (seed, dataset, transformation, text), as an LLM unit's: equal texts get equal noise."""
    found = dataset.corpus_text_columns() if corpus else dataset.text_columns()
    order = sorted(range(len(found["text"])), key=lambda i: (found["table"][i], found["item_id"][i], found["field"][i]))
    columns = {
        item: [found[source][i] for i in order]
        for source, item in (
            ("table", "split"),
            ("item_id", "item_id"),
            ("field", "field"),
            ("subset", "subset"),
            ("language", "source_language"),
            ("text", "original_text"),
        )
    }
    tables = {}
    for transformation in transformations:
        make, digest, model = rule_edit(transformation, rules, sensitivity_rules)
        tables[transformation] = single_attempt_table(
            dataset=name,
            task_type=dataset.info.task_type,
            transformation=transformation,
            seed=seed,
            generator_model=model,
            prompt_hash=digest,
            columns={
                **columns,
                "transformed_text": [
                    make(text, (seed, name, transformation, text), language)
                    for text, language in zip(columns["original_text"], columns["source_language"])
                ],
            },
        )
    return tables


def generator_block(rules: str = CURRENT_RULES, sensitivity_rules: str | None = None) -> dict[str, Any]:
    """The manifest's `generator` of a revision made by rules alone: the Noise rules of version `rules`, or, given
    `sensitivity_rules`, the Sensitivity axis's minimal pairs of that version (a revision holds one or the other)."""
    if sensitivity_rules is None:
        model, version, digest = RULES_MODEL, rules, definitions_hash(rules)
    else:
        model, version = sensitivity.RULES_MODEL, sensitivity_rules
        digest = sensitivity.definitions_hash(sensitivity_rules)
    return {"model_id": model, "revision": version, "engine": "rules", "prompt_set": "rules", "prompt_set_hash": digest}
