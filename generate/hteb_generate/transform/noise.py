"""Rule-based noise: the Noise axis's perturbations, made without an LLM.

Why rules: SAGE (the SAGE paper, Task 2 and App. A.6; docs/papers.md, docs/noise.md) measures
robustness to surface noise that keeps a text's meaning, with three exactly defined perturbations;
two common noise types of the augmentation literature join them. Each is a pure function of the
text and a generator seeded from the unit's key (run seed, dataset, transformation, text), so input
order, batch size and sharding change nothing, and a full-size revision needs only a CPU.

Definitions (SAGE's three, then ours):
- ``random_capitalisation``: round(25%) of the character positions, drawn without replacement, are
  upper-cased; a character already upper-case, or without a one-character upper case, stays.
- ``character_deletion``: every 10th non-space character is removed; white space is never removed,
  so word boundaries stay where they were.
- ``numerisation``: e -> 3, i -> 1, a -> 4, o -> 0 (lower case only, every occurrence).
- ``keyboard_typos``: each ASCII letter is replaced, with probability 5%, by a neighbouring key on
  a QWERTY keyboard (drawn uniformly among its neighbours), keeping its case.
- ``punctuation_casing_loss``: lower-cased, every Unicode punctuation character removed, runs of
  white space collapsed to one space.

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
from typing import Any

import numpy as np
import pyarrow as pa

from hteb_contract.item_table import single_attempt_table
from hteb_contract.common.registry import Registry
from hteb_contract.sources import SourceDataset
from hteb_contract.specs.transformations import transformation_table

from hteb_generate.transform.languages import derive_int

Perturbation = Callable[[str, np.random.Generator], str]

#: Perturbation name -> function(text, rng) -> text: one per rule-made row of the transformation table
#: (hteb_contract.specs.transformations), in its order (tested).
PERTURBATIONS: Registry[Perturbation] = Registry("noise perturbation")

CAPITALISED_SHARE = 0.25
DELETION_PERIOD = 10
TYPO_RATE = 0.05
NUMERALS = str.maketrans({"e": "3", "i": "1", "a": "4", "o": "0"})
QWERTY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _qwerty_neighbours() -> dict[str, str]:
    """Each letter's neighbours: left and right on its row, and the keys touching it on the rows
    above and below (rows are offset by half a key, so a key touches two keys of each)."""
    where = {key: (row, col) for row, keys in enumerate(QWERTY_ROWS) for col, key in enumerate(keys)}
    neighbours = {}
    for key, (row, col) in where.items():
        near = []
        for other, (other_row, other_col) in where.items():
            if other_row == row and abs(other_col - col) == 1:
                near.append(other)
            elif other_row == row - 1 and other_col in (col, col + 1):
                near.append(other)
            elif other_row == row + 1 and other_col in (col - 1, col):
                near.append(other)
        neighbours[key] = "".join(sorted(near))
    return neighbours


QWERTY_NEIGHBOURS = _qwerty_neighbours()


@PERTURBATIONS.register("random_capitalisation")
def random_capitalisation(text: str, rng: np.random.Generator) -> str:
    chars = list(text)
    count = round(CAPITALISED_SHARE * len(chars))
    for position in rng.choice(len(chars), size=count, replace=False) if count else ():
        upper = chars[position].upper()
        if len(upper) == 1:
            chars[position] = upper
    return "".join(chars)


@PERTURBATIONS.register("character_deletion")
def character_deletion(text: str, rng: np.random.Generator) -> str:
    kept, counted = [], 0
    for char in text:
        if not char.isspace():
            counted += 1
            if counted % DELETION_PERIOD == 0:
                continue
        kept.append(char)
    return "".join(kept)


@PERTURBATIONS.register("numerisation")
def numerisation(text: str, rng: np.random.Generator) -> str:
    return text.translate(NUMERALS)


@PERTURBATIONS.register("keyboard_typos")
def keyboard_typos(text: str, rng: np.random.Generator) -> str:
    chars = list(text)
    hits = rng.random(len(chars)) < TYPO_RATE
    for position in np.flatnonzero(hits):
        char = chars[position]
        near = QWERTY_NEIGHBOURS.get(char.lower())
        if near:
            typo = near[rng.integers(len(near))]
            chars[position] = typo.upper() if char.isupper() else typo
    return "".join(chars)


@PERTURBATIONS.register("punctuation_casing_loss")
def punctuation_casing_loss(text: str, rng: np.random.Generator) -> str:
    stripped = "".join(c for c in text.lower() if not unicodedata.category(c).startswith("P"))
    return re.sub(r"\s+", " ", stripped).strip()


def perturb(name: str, text: str, *, key: tuple) -> str:
    """`text` under perturbation `name`, drawn from a generator seeded by `key` alone."""
    return PERTURBATIONS.get(name)(text, np.random.default_rng(derive_int("noise", *key)))


#: What a rule-made record names as its generator: the rules and the version of their definitions.
RULES_MODEL = "hteb-noise-rules"
RULES_VERSION = "1"


def definitions_hash() -> str:
    """sha256 of every constant the perturbations read (a changed rule changes every record's hash)."""
    definitions = {"version": RULES_VERSION, "names": list(PERTURBATIONS.names()), "capitalised_share": CAPITALISED_SHARE,
                   "deletion_period": DELETION_PERIOD, "typo_rate": TYPO_RATE, "qwerty_rows": QWERTY_ROWS,
                   "numerals": {chr(k): v for k, v in NUMERALS.items()}}
    return hashlib.sha256(json.dumps(definitions, sort_keys=True).encode("utf-8")).hexdigest()


def is_rule(transformation: str) -> bool:
    """A transformation the table says these rules make, not an LLM (False for an unknown name)."""
    table = transformation_table()
    return transformation in table.names and table.get(transformation).is_rule


def noise_tables(seed: int, name: str, dataset: SourceDataset, transformations: Iterable[str], *,
                 corpus: bool = False) -> dict[str, pa.Table]:
    """Rule transformation -> its item table: one single-attempt record per text of `dataset` (no LLM,
    no judge), in ref order; `corpus`: per corpus title and text instead (the opt-in perturbed corpus of
    retrieval, SAGE Task 5). Columns, not a record per text: 419,000 of them for noise-1339.

    The key is (seed, dataset, transformation, text), as an LLM unit's: equal texts get equal noise."""
    found = dataset.corpus_text_columns() if corpus else dataset.text_columns()
    order = sorted(range(len(found["text"])), key=lambda i: (found["table"][i], found["item_id"][i], found["field"][i]))
    columns = {item: [found[source][i] for i in order] for source, item in
               (("table", "split"), ("item_id", "item_id"), ("field", "field"), ("subset", "subset"),
                ("language", "source_language"), ("text", "original_text"))}
    digest = definitions_hash()
    return {transformation: single_attempt_table(
        dataset=name, task_type=dataset.info.task_type, transformation=transformation, seed=seed,
        generator_model=RULES_MODEL, prompt_hash=digest,
        columns={**columns, "transformed_text": [perturb(transformation, text, key=(seed, name, transformation, text))
                                                 for text in columns["original_text"]]})
        for transformation in transformations}


def generator_block() -> dict[str, Any]:
    """The manifest's `generator` of a revision made by the rules alone."""
    return {"model_id": RULES_MODEL, "revision": RULES_VERSION, "engine": "rules", "prompt_set": "rules",
            "prompt_set_hash": definitions_hash()}
