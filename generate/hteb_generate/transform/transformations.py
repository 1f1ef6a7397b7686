"""How the generator makes each LLM transformation of the transformation table
(hteb_contract.specs.transformations; paper Table 1, App. D; docs/generating.md, "The
transformations and their languages"): the prompt sets that its steps' templates name, and the
language plans that its `languages` names.

Why prompt sets: the paper's prompts (App. D, verbatim) are the default and what Gemma-3 was tuned
on; a 135M CPU model only paraphrases when shown examples, so other sets are selectable, and each
item records the set's id and the sha256 of exactly the templates that made it.
Layout of a request: the prompt as the system message, (a set's example exchanges,) the text as
the user message.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from hteb_contract.common.registry import Registry
from hteb_contract.specs.transformations import TransformationSpec, transformation_spec, transformation_table

from hteb_generate.transform import languages

# -- prompt sets --------------------------------------------------------------------------------

#: The templates every prompt set defines: the table's, in its order.
TEMPLATE_KEYS: tuple[str, ...] = tuple(t.name for t in transformation_table().templates)


@dataclass(frozen=True)
class Template:
    """A system prompt with `{target_language}`, and example (input, output) exchanges.

    Examples keyed by target language code ("" = any language) are used only for that language.
    """

    system: str
    examples: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)

    def messages(self, text: str, target: str) -> tuple[tuple[str, str], ...]:
        shots = self.examples.get(target, self.examples.get("", ()))
        turns = [("system", self.system.format(target_language=languages.name_of(target)))]
        for example_in, example_out in shots:
            turns += [("user", example_in), ("assistant", example_out)]
        return (*turns, ("user", text))

    def to_json(self) -> dict:
        return {"system": self.system, "examples": {k: [list(p) for p in v] for k, v in sorted(self.examples.items())}}


@dataclass(frozen=True)
class PromptSet:
    """Templates for every key of TEMPLATE_KEYS, under an id recorded in each item."""

    id: str
    templates: dict[str, Template]

    def __post_init__(self) -> None:
        if set(self.templates) != set(TEMPLATE_KEYS):
            raise ValueError(f"prompt set {self.id!r} must define exactly {TEMPLATE_KEYS}")

    def template(self, key: str) -> Template:
        return self.templates[key]

    def hash_of(self, keys: tuple[str, ...]) -> str:
        """sha256 of the named templates (the whole set when `keys` is all of them)."""
        payload = {key: self.templates[key].to_json() for key in keys}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()

    @property
    def sha256(self) -> str:
        return self.hash_of(TEMPLATE_KEYS)

    def template_id(self, transformation: TransformationSpec) -> str:
        """`paper/expand+summarise`: this set and the templates of the transformation's steps."""
        return f"{self.id}/{'+'.join(s.template for s in transformation.steps)}"


# App. D, verbatim (Gemma-3-27B-int4-AWQ prompts). Summarise ends with "Text to summarize:",
# and the text follows as the user message.
PAPER = PromptSet(
    "paper",
    {
        "paraphrase": Template(
            "Rephrase the following text while keeping its original meaning. IMPORTANT: You MUST answer in "
            "{target_language}. Do NOT translate the text to English or any other language. Only reply with "
            "the paraphrased text and only provide a single response -- no alternatives! Do not include "
            "explanations or notes."
        ),
        "style_change": Template(
            "Change the style of the following text. If the text is casual or informal, rewrite it in a formal "
            "style. If the text is formal or scientific, rewrite it in a casual or informal style. Preserve the "
            "original meaning while changing only the tone, style, and vocabulary. IMPORTANT: You MUST answer in "
            "{target_language}. Do NOT translate the text to English or any other language. Only reply with the "
            "rewritten text -- no explanations or notes!"
        ),
        "expand": Template(
            "Expand the following text by adding more details, context, and elaboration while preserving the "
            "same core meaning. IMPORTANT: If the input is a question, your output must also be a question -- do "
            "NOT answer it. If the input is a statement, your output must also be a statement. IMPORTANT: You "
            "MUST answer in {target_language}. Do NOT translate the text to English or any other language. Use "
            "similar words and maintain the original message. Only reply with the expanded text -- no "
            "explanations or notes!"
        ),
        "summarise": Template(
            "Your task is to SUMMARIZE the text below -- make it shorter while keeping the same meaning. DO NOT "
            "change the sentence type:\n"
            "- If input is a STATEMENT, output must be a STATEMENT\n"
            "- If input is a QUESTION, output must be a QUESTION (do NOT answer it!)\n"
            "Examples:\n"
            "- Statement \u2018I loved the movie\u2019 \u2192 \u2018Enjoyed the movie\u2019 (NOT \u2018Did you "
            "enjoy the movie?\u2019)\n"
            "- Question \u2018Where is my card?\u2019 \u2192 \u2018Card location?\u2019 (NOT \u2018Check your "
            "wallet\u2019)\n"
            "IMPORTANT: You MUST answer in {target_language}. Do NOT translate the text to English or any other "
            "language. Only output the summary, nothing else.\n"
            "Text to summarize:"
        ),
        "translate": Template(
            "Translate the following text to {target_language}. Provide only the translation -- no explanations "
            "or notes!"
        ),
    },
)

_GUITAR = "A man is playing a guitar."
_CARD = "Where is my card?"
_TRANSLATED = {
    "eng": ((_GUITAR, _GUITAR), (_CARD, _CARD)),
    "spa": ((_GUITAR, "Un hombre está tocando la guitarra."), (_CARD, "¿Dónde está mi tarjeta?")),
    "fra": ((_GUITAR, "Un homme joue de la guitare."), (_CARD, "Où est ma carte ?")),
    "deu": ((_GUITAR, "Ein Mann spielt Gitarre."), (_CARD, "Wo ist meine Karte?")),
    "tur": ((_GUITAR, "Bir adam gitar çalıyor."), (_CARD, "Kartım nerede?")),
    "ara": ((_GUITAR, "رجل يعزف على الغيتار."), (_CARD, "أين بطاقتي؟")),
}

# Few-shot set for small models (SmolLM2-135M paraphrases only with a system message plus two
# example pairs, MODELS.md). Translation examples exist for the six target/pivot languages;
# translating back into any other language runs zero-shot.
SMOLLM2_FEWSHOT = PromptSet(
    "smollm2-fewshot",
    {
        "paraphrase": Template(
            "Rephrase the text in {target_language} with different words, keeping its meaning. Reply with the "
            "rephrased text only.",
            {
                "": (
                    (_GUITAR, "A musician plays their guitar."),
                    ("The cat sat on the mat.", "A cat was sitting on the rug."),
                )
            },
        ),
        "style_change": Template(
            "Rewrite the text in {target_language} in the opposite style: casual text becomes formal, formal "
            "text becomes casual. Keep the meaning. Reply with the rewritten text only.",
            {
                "": (
                    ("hey, where's my card??", "Could you please tell me where my card is?"),
                    ("The results indicate a significant increase in revenue.", "Looks like we made way more money."),
                )
            },
        ),
        "expand": Template(
            "Expand the text in {target_language} with more details and context, keeping its meaning. A question "
            "stays a question. Reply with the expanded text only.",
            {
                "": (
                    (
                        _GUITAR,
                        "A man is sitting on a wooden chair and playing an acoustic guitar, strumming a gentle "
                        "melody for the people around him.",
                    ),
                    (_CARD, "Where is the new bank card that I ordered last week and still have not received?"),
                )
            },
        ),
        "summarise": Template(
            "Summarise the text in {target_language}: make it shorter, keep its meaning. A question stays a "
            "question. Reply with the summary only.",
            {
                "": (
                    (
                        "A man is sitting on a wooden chair and playing an acoustic guitar, strumming a gentle melody "
                        "for the people around him.",
                        "A man plays guitar for people.",
                    ),
                    (
                        "Where is the new bank card that I ordered last week and still have not received?",
                        "Where is my new card?",
                    ),
                )
            },
        ),
        "translate": Template(
            "Translate the text to {target_language}. Reply with the translation only.",
            dict(_TRANSLATED),
        ),
    },
)

PROMPT_SETS: Registry[PromptSet] = Registry("prompt set", entries={p.id: p for p in (PAPER, SMOLLM2_FEWSHOT)})

# -- transformations ----------------------------------------------------------------------------

SOURCE, TARGET, PIVOT = "source", "target", "pivot"

#: The LLM transformations of the table, in its order; the Noise axis's are rules (hteb_generate.transform.noise).
TRANSFORMATIONS: Registry[TransformationSpec] = Registry(
    "transformation", entries={t.name: t for t in transformation_table().transformations if not t.is_rule}
)


@dataclass(frozen=True)
class LanguagePlan:
    """The languages one text is transformed with (ISO 639-3)."""

    source: str
    target: str | None  # translation / cross_translation
    pivot: str | None  # backtranslation

    def of(self, role: str) -> str:
        value = {SOURCE: self.source, TARGET: self.target, PIVOT: self.pivot}[role]
        if value is None:
            raise ValueError(f"no {role} language in {self}")
        return value

    @property
    def expected(self) -> str:
        """The language the final output must be in."""
        return self.target or self.source


#: (transformation, seed, dataset, item, source language) -> its plan; every draw is keyed by the
#: transformation's name, so two transformations with one plan draw independently.
Planner = Callable[[str, int, str, str, str], LanguagePlan]

#: A transformation's `languages` in the table -> how its languages are drawn (docs/generating.md).
LANGUAGE_PLANS: Registry[Planner] = Registry("language plan")


@LANGUAGE_PLANS.register("source")
def _source(name: str, seed: int, dataset: str, item: str, source: str) -> LanguagePlan:
    """Every step in the text's own language."""
    return LanguagePlan(source, None, None)


@LANGUAGE_PLANS.register("run_target")
def _run_target(name: str, seed: int, dataset: str, item: str, source: str) -> LanguagePlan:
    """One target per run (translation)."""
    return LanguagePlan(source, languages.run_target(seed, dataset, name, source), None)


@LANGUAGE_PLANS.register("item_target")
def _item_target(name: str, seed: int, dataset: str, item: str, source: str) -> LanguagePlan:
    """A target drawn per text (cross_translation), so the two sides of a pair usually differ."""
    return LanguagePlan(
        source, languages.item_choice(seed, dataset, name, item, source, languages.TRANSLATION_TARGETS), None
    )


@LANGUAGE_PLANS.register("item_pivot")
def _item_pivot(name: str, seed: int, dataset: str, item: str, source: str) -> LanguagePlan:
    """A pivot drawn per text (backtranslation), there and back."""
    return LanguagePlan(source, None, languages.item_choice(seed, dataset, name, item, source, languages.PIVOTS))


def plan_languages(transformation: str, *, seed: int, dataset: str, item: str, source: str) -> LanguagePlan:
    """The language rules of docs/generating.md, from (seed, dataset, transformation, item) only:
    the plan the table names for `transformation`.

    `source` is the text's own language (TextRef.language), so each text of a cross-lingual pair gets
    its own plan: in an `en-de` pair the German sentence is paraphrased in German and translated or
    pivoted to a language other than German.
    """
    spec = transformation_spec(transformation)
    return LANGUAGE_PLANS.get(spec.languages or "")(spec.name, seed, dataset, item, source)
