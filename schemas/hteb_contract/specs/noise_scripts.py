"""The Noise rules per script (`noise_scripts.yaml` beside this file): which rule applies to a text of
each writing system and how (its keyboard, its look-alike digits, whether it has case), read by the
generator's rules (noise rules version 2), the scorer and docs/noise.md.

Why the script is read from the characters, not from the dataset table's subset scripts: a subset's
declared script can be wrong (mteb lists MasakhaNEWS `orm` as Ethiopic; Oromo is written in Latin
letters), a pair subset holds two scripts (STS17 `en-ar`), and a text may mix scripts (a Hindi text
with English words). Each character's own script picks its keyboard, so every letter is typed on the
layout that has it; a text's script (for what applies to it) is the script of most of its letters.

>>> table = noise_scripts()
>>> table.script_of("ж"), table.script_of("क"), table.script_of("7"), text_script("Привет, мир")
('Cyrl', 'Deva', None, 'Cyrl')
>>> table.applies("random_capitalisation", "Arab"), table.applies("keyboard_typos", "Arab")
(False, True)
>>> sorted(table.neighbours("Latn", "fra")["a"])
['q', 'z']
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from hteb_contract.common import yaml_input
from hteb_contract.errors import ContractError
from hteb_contract.specs.transformations import transformation_spec

TABLE_PATH = Path(__file__).resolve().parent / "noise_scripts.yaml"
NO_KEY = "_"
#: The share of a subset's texts a rule declared applicable must change (tests/generate/test_noise_scripts.py);
#: the scorer flags a variant subset whose rule changed less, and leaves it out of the rule's figure.
APPLIED_SHARE = 0.5
#: The rules whose behaviour depends on the script, and what each needs of it.
SCRIPT_RULES = ("keyboard_typos", "numerisation", "random_capitalisation", "punctuation_casing_loss")


@dataclass(frozen=True)
class ScriptRules:
    """One script's row: how its letters are named in Unicode, whether it has case, its standard
    layout (None: keyboard_typos does not apply, `no_layout` says why) and its look-alike digits."""

    code: str
    unicode: tuple[str, ...]
    cased: bool
    layout: str | None
    digits: dict[str, str] | None
    no_layout: str | None = None
    no_digits: str | None = None


#: What a rule may need of a script (a rule row's `needs`): the script's row -> why it lacks it (None: it has it).
NEEDS: dict[str, Callable[[ScriptRules], str | None]] = {
    "layout": lambda row: row.no_layout if row.layout is None else None,
    "digits": lambda row: row.no_digits if row.digits is None else None,
    "case": lambda row: None if row.cased else "the script has no case",
}


@dataclass(frozen=True)
class Layout:
    """A keyboard: its letter rows (or those of `from_` shifted by `offset`) and its source;
    `syllables`: consonant key -> first syllable of its series, for a script typed phonetically."""

    name: str
    source: str
    rows: tuple[str, ...]
    syllables: dict[str, str] | None = None
    shifted: dict[str, str] | None = None


class NoiseScripts:
    """The checked table: scripts, layouts and national layouts per language."""

    def __init__(self, data: dict[str, Any]) -> None:
        raw_layouts = data["layouts"]
        self.layouts: dict[str, Layout] = {}
        for name, row in raw_layouts.items():
            rows = row.get("rows")
            if rows is None:
                base = raw_layouts.get(row.get("from"), {}).get("rows")
                if base is None:
                    raise ContractError(f"{TABLE_PATH.name}: layout {name!r} has neither rows nor a `from` with rows")
                rows = [_shift(r, int(row.get("offset", 0))) for r in base]
            self.layouts[name] = Layout(name, row["source"], tuple(rows), row.get("syllables"), row.get("shifted"))
        self.scripts = {
            code: ScriptRules(
                code,
                tuple(r["unicode"]),
                bool(r["cased"]),
                r.get("layout"),
                r.get("digits"),
                r.get("no_layout"),
                r.get("no_digits"),
            )
            for code, r in data["scripts"].items()
        }
        self.languages: dict[str, dict[str, str]] = dict(data.get("languages") or {})
        for code, script in self.scripts.items():
            if script.layout is None and not script.no_layout or script.digits is None and not script.no_digits:
                raise ContractError(
                    f"{TABLE_PATH.name}: script {code}: a rule declared not applicable needs its reason"
                )
            if script.layout is not None and script.layout not in self.layouts:
                raise ContractError(f"{TABLE_PATH.name}: script {code}: unknown layout {script.layout!r}")
        for language, by_script in self.languages.items():
            for code, layout in by_script.items():
                if code not in self.scripts or layout not in self.layouts:
                    raise ContractError(
                        f"{TABLE_PATH.name}: language {language}: unknown script or layout {code}: {layout}"
                    )
        self._by_word = {word: code for code, s in self.scripts.items() for word in s.unicode}
        self._by_char: dict[str, str | None] = {}  # script_of's answers: a text asks of each character

    def script_of(self, char: str) -> str | None:
        """The script of a letter or mark (by its Unicode name's first word); None for anything else."""
        if char not in self._by_char:
            letter = unicodedata.category(char)[0] in "LM"
            word = unicodedata.name(char, "").split(" ", 1)[0]
            self._by_char[char] = self._by_word.get(word) if letter else None
        return self._by_char[char]

    def applies(self, rule: str, script: str | None) -> bool:
        """Whether `rule` changes texts of `script` at all (an unknown script or None: only the rules
        that need nothing of a script, character_deletion and punctuation_casing_loss)."""
        return self.why_not(rule, script) is None

    def why_not(self, rule: str, script: str | None) -> str | None:
        """Why `rule` does not apply to `script` (None: it applies), as its row's `needs` says: a rule that
        needs nothing of a script applies to every text; one that does, to a script of the table that has it."""
        need = transformation_spec(rule).needs
        if need is None:
            return None
        row = self.scripts.get(script or "")
        if row is None:
            return f"script {script or 'unknown'} is not in the table"
        return NEEDS[need](row)

    def layout_for(self, script: str, language: str | None) -> Layout | None:
        """The keyboard a typist of `language` uses for `script`: the national one, else the script's standard one."""
        name = self.languages.get(language or "", {}).get(script) or self.scripts[script].layout
        return None if name is None else self.layouts[name]

    @cache
    def neighbours(self, script: str, language: str | None) -> dict[str, str]:
        """Each key of the layout -> the keys touching it (left, right, two above, two below)."""
        layout = self.layout_for(script, language)
        if layout is None:
            return {}
        near = adjacency(layout.rows)
        return {**near, **{letter: near[key] for letter, key in (layout.shifted or {}).items()}}


def adjacency(rows: tuple[str, ...]) -> dict[str, str]:
    """Each key's neighbours on staggered rows: left and right on its row, and the keys touching it on
    the rows above and below (rows are offset by half a key, so a key touches two keys of each)."""
    where = {key: (row, col) for row, keys in enumerate(rows) for col, key in enumerate(keys) if key != NO_KEY}
    neighbours = {}
    for key, (row, col) in where.items():
        near = [
            other
            for other, (r, c) in where.items()
            if (r == row and abs(c - col) == 1)
            or (r == row - 1 and c in (col, col + 1))
            or (r == row + 1 and c in (col - 1, col))
        ]
        neighbours[key] = "".join(sorted(near))
    return neighbours


def _shift(row: str, offset: int) -> str:
    """A layout row moved to another Indic block; a code point the block lacks becomes no key."""
    keys = []
    for key in row:
        moved = chr(ord(key) + offset) if key != NO_KEY else NO_KEY
        keys.append(moved if moved == NO_KEY or bool(unicodedata.name(moved, "")) else NO_KEY)
    return "".join(keys)


@cache
def noise_scripts() -> NoiseScripts:
    """The table, read and checked once."""
    data = yaml_input.read(TABLE_PATH)
    try:
        return NoiseScripts(data)
    except (KeyError, TypeError, ValueError) as error:
        raise ContractError(f"{TABLE_PATH.name}: {error}") from None


def text_script(text: str) -> str | None:
    """The script of most of a text's letters (None: no letter of a known script)."""
    counts = Counter(map(noise_scripts().script_of, text))
    counts.pop(None, None)
    return counts.most_common(1)[0][0] if counts else None


TABLE_START = "<!-- the rules per script: written by hteb_contract.specs.noise_scripts.markdown_table (tested) -->"
TABLE_END = "<!-- end of the rules per script -->"


def markdown_table() -> str:
    """docs/noise.md's table of the rules per script and per language, with each layout's source."""
    table = noise_scripts()
    lines = [
        "| script | keyboard_typos (layout, source) | numerisation | random_capitalisation | punctuation_casing_loss |",
        "|---|---|---|---|---|",
    ]
    for code, row in table.scripts.items():
        keys = (
            f"{table.layouts[row.layout].name}: {table.layouts[row.layout].source}"
            if row.layout
            else f"not applicable: {row.no_layout}"
        )
        digits = (
            ", ".join(f"{k}->{v}" for k, v in row.digits.items()) if row.digits else f"not applicable: {row.no_digits}"
        )
        cased = "applies" if row.cased else "not applicable: no case"
        punctuation = "punctuation and case" if row.cased else "punctuation only (no case)"
        lines.append(f"| {code} | {keys} | {digits} | {cased} | {punctuation} |")
    lines += ["", "| language | script | national layout (keyboard_typos) |", "|---|---|---|"]
    lines += [
        f"| {language} | {code} | {name}: {table.layouts[name].source} |"
        for language, by_script in table.languages.items()
        for code, name in by_script.items()
    ]
    return "\n".join([TABLE_START, "", *lines, "", TABLE_END])
