"""Typed item records: one transformed text of a revision (schema `hteb.item/3`).

The generator builds them, the revision writer validates and stores them as rows of one Arrow
schema (arrow.py), and the scorer reads them back; code on both sides uses attributes, never
string keys into a dict. `to_row()` / `from_row()` convert at the parquet boundary only.

A rule-made record (the noise rules: `prompt_set` "rule", `single_attempt`) carries only what a
rule has: one attempt, no decoding settings (`sampling` None), no generator revision (the rules'
definitions are hashed into `prompt_hash`) and no judge. `hteb.item/2`, which wrote invented
settings there (`max_tokens: 1`, `generator_revision: ''`), is read and upgraded to that form
(`from_row`); an LLM record of either version reads the same, an unknown revision '' as None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import dataclasses
from dataclasses import asdict, dataclass
from typing import Any

from hteb_contract.errors import ContractError
from hteb_contract.validation import SCHEMA_VERSIONS, validate

#: The prompt_set of a rule-made record.
RULE = "rule"
ITEM_V2 = "hteb.item/2"


@dataclass(frozen=True)
class Sampling:
    """The decoding settings of the first attempt (retries may run hotter; each attempt has its seed)."""

    temperature: float
    top_p: float
    max_tokens: int


@dataclass(frozen=True)
class Attempt:
    """One try at a text: the raw output and finish reason of each LLM step, the clean-ups applied
    to the last raw output (recorded, never silent), the final output and the errors it has."""

    attempt: int
    seed: int
    steps: tuple[str, ...]
    output: str
    errors: tuple[str, ...] = ()
    finish_reasons: tuple[str | None, ...] = ()
    cleanup: tuple[str, ...] = ()


@dataclass(frozen=True)
class Judge:
    """Judge scores of the kept output; None where there is no judge or no usable answer."""

    model: str | None = None
    quality: float | None = None
    fluency: float | None = None
    parapluie: float | None = None


@dataclass(frozen=True)
class ItemRecord:
    """One field of one source row under one (transformation, seed), with every attempt made."""

    dataset: str
    task_type: str
    subset: str  # the mteb hf_subset of the text's row ("default" when the dataset has none)
    split: str  # the source table, e.g. test or queries
    item_id: str
    field: str  # e.g. sentence1, machine_summaries[3]
    source_language: str
    transformation: str
    seed: int
    target_language: str | None
    intermediate_language: str | None
    original_text: str
    transformed_text: str  # the kept output
    generator_model: str
    generator_revision: str | None  # Hub commit or tag; None: none (a rule, a local model folder)
    prompt_set: str  # RULE for a rule-made record
    prompt_template_id: str
    prompt_hash: str
    sampling: Sampling | None  # None: rule-made, nothing was decoded
    attempts: tuple[Attempt, ...]
    errors: tuple[str, ...]  # the errors the kept output still has
    judge: Judge = dataclasses.field(default_factory=Judge)  # `field` is a field's name here
    fallback: bool = False  # every attempt has errors

    def kept_attempt(self) -> Attempt | None:
        """The attempt whose output is kept: the first without errors, else the last (None without attempts)."""
        return next((a for a in self.attempts if not a.errors), self.attempts[-1] if self.attempts else None)

    def contradiction(self) -> str | None:
        """What in this record contradicts its own attempts, or None: the kept text is the kept
        attempt's output, `errors` are that attempt's errors, `fallback` says whether every attempt has
        errors. A hash says the bytes are the sealed ones; this says the sealed record is sound.

        >>> from dataclasses import replace
        >>> record = single_attempt(dataset="D", task_type="STS", subset="default", ref=("test", "0", "sentence1"),
        ...     source_language="eng", transformation="paraphrasing", seed=1, original_text="a b", output="b a",
        ...     generator_model="rule", prompt_hash="0" * 64)
        >>> record.contradiction() is None, replace(record, fallback=True).contradiction()
        (True, 'fallback is true, but attempt 0 has no error')
        """
        kept = self.kept_attempt()
        if kept is None:
            return "the record has no attempt"
        if self.transformed_text != kept.output:
            return (
                f"transformed_text is not the output of the kept attempt {kept.attempt} (the first without "
                "errors, else the last)"
            )
        if self.errors != kept.errors:
            return f"errors {list(self.errors)} are not those of the kept attempt {kept.attempt} {list(kept.errors)}"
        every = all(a.errors for a in self.attempts)
        if self.fallback != every:
            return (
                "fallback is false, but every attempt has errors"
                if every
                else f"fallback is true, but attempt {kept.attempt} has no error"
            )
        return None

    @property
    def rule_made(self) -> bool:
        """Made by a rule, not an LLM: no decoding settings, no judge."""
        return self.prompt_set == RULE

    @property
    def ref(self) -> tuple[str, str, str]:
        """(split, item id, field): where the text sits in its source dataset."""
        return (self.split, self.item_id, self.field)

    def to_row(self) -> dict[str, Any]:
        """The record as a JSON/parquet row (`schema_version` first, lists for tuples)."""
        row = {"schema_version": SCHEMA_VERSIONS["item"], **asdict(self)}
        row["errors"] = list(self.errors)
        row["attempts"] = [
            dict(
                a,
                steps=list(a["steps"]),
                errors=list(a["errors"]),
                finish_reasons=list(a["finish_reasons"]),
                cleanup=list(a["cleanup"]),
            )
            for a in row["attempts"]
        ]
        return row

    @classmethod
    def from_row(cls, row: Mapping[str, Any], *, what: str) -> ItemRecord:
        """A validated record from a row (`hteb.item/3`, or `hteb.item/2` upgraded: see the module
        docstring); a row that breaks its item schema is a ContractError naming `what`."""
        validate("item", row, what=what)
        values = {k: v for k, v in row.items() if k != "schema_version"}
        values["generator_revision"], sampling = upgraded(
            row["schema_version"], row["prompt_set"], row["generator_revision"], row["sampling"]
        )
        values["sampling"] = None if sampling is None else Sampling(**sampling)
        values["attempts"] = tuple(
            Attempt(
                a["attempt"],
                a["seed"],
                tuple(a["steps"]),
                a["output"],
                tuple(a["errors"]),
                tuple(a["finish_reasons"]),
                tuple(a["cleanup"]),
            )
            for a in row["attempts"]
        )
        values["errors"] = tuple(row["errors"])
        values["judge"] = Judge(**row["judge"])
        record = cls(**values)
        contradiction = record.contradiction()
        if contradiction is not None:
            raise ContractError(f"{what}: the record contradicts its own attempts: {contradiction}")
        return record


def upgraded(version: str, prompt_set: str, generator_revision: str | None, sampling: Any) -> tuple[str | None, Any]:
    """(generator_revision, sampling) of a record as `hteb.item/3` states them: an `hteb.item/2`
    record's unknown revision '' is None, and a rule-made one has neither (see the module docstring)."""
    if version != ITEM_V2:
        return generator_revision, sampling
    if prompt_set == RULE:
        return None, None
    return generator_revision or None, sampling


def single_attempt(
    *,
    dataset: str,
    task_type: str,
    subset: str,
    ref: tuple[str, str, str],
    source_language: str,
    transformation: str,
    seed: int,
    original_text: str,
    output: str,
    generator_model: str,
    prompt_hash: str,
    errors: Sequence[str] = (),
    target_language: str | None = None,
) -> ItemRecord:
    """The record of a text made in one step without an LLM (a rule): one attempt, no judge, no sampling,
    no generator revision (`prompt_hash` names the rule's definitions)."""
    split, item_id, fld = ref
    errors = tuple(errors)
    return ItemRecord(
        dataset=dataset,
        task_type=task_type,
        subset=subset,
        split=split,
        item_id=item_id,
        field=fld,
        source_language=source_language,
        transformation=transformation,
        seed=seed,
        target_language=target_language,
        intermediate_language=None,
        original_text=original_text,
        transformed_text=output,
        generator_model=generator_model,
        generator_revision=None,
        prompt_set=RULE,
        prompt_template_id=transformation,
        prompt_hash=prompt_hash,
        sampling=None,
        attempts=(Attempt(0, seed, (output,), output, errors, (None,)),),
        errors=errors,
        fallback=bool(errors),
    )
