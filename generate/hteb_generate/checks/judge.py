"""Judge scores per item: an LLM judge's 1-5 quality and fluency, and ParaPLUIE.

Why both: the paper accepts a transformation when its mean quality and fluency are >= 3 (Sec.
2.4, App. A.3), and ParaPLUIE (the ParaPLUIE paper, Sec. 4; docs/papers.md) gives a calibrated meaning-equivalence score
with a natural threshold at 0 that needs no generation, only next-token log-probabilities.

- Quality and fluency: the paper gives the criteria (Sec. 2.4) but not its judge prompts, so the
  default prompt set ``hteb-judge-v1`` states those criteria; any other :class:`JudgePrompts` can
  be passed and is recorded by id and sha256. Decoding is greedy (temperature 0, top_p 1).
  :func:`parse_score` reads the first integer 1-5 of the answer; no such integer -> None (the
  score is missing, never guessed).
- ParaPLUIE: the FS-DIRECT template of the ParaPLUIE paper's App. A.3, verbatim, filled with A = source and
  B = output (our copy of the paper breaks off before the sixth example's answer; it is "No", as
  in public copies of the template, e.g. KramaBench's paraphrase few-shot); score = log p(yes) - log p(no) of the judge's next token. The template's worked
  answers are "Yes"/"No" right after the assistant header, so the answer token has no leading
  space; case and a stray leading space are both plausible, so each side sums the probability of
  its variants (:data:`YES`, :data:`NO`: "yes", "Yes", " yes", " Yes" and the same for no; each is a
  single token in SmolLM2's and Gemma-3's vocabularies). It is computed for every transformation:
  for translations it is a cross-lingual equivalence judgement, for the length transformations it
  is expected to be lower, since the texts deliberately differ in detail. The DIRECT template
  (the ParaPLUIE paper, Sec. 4.1.1) is registered too, for judges too small for the few-shot context:
  SmolLM2-135M scores every pair near -2.3 with FS-DIRECT (it copies the last example's "No"),
  while DIRECT separates a paraphrase (+0.17) from an unrelated sentence (-0.25).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from hteb_contract.errors import HtebError
from hteb_contract.common.registry import Registry
from hteb_contract.specs.transformations import TransformationSpec

if TYPE_CHECKING:
    from hteb_generate.engine.base import ChatRequest

Conversation = tuple[tuple[str, str], ...]

JUDGE_MAX_TOKENS = 8
YES: tuple[str, ...] = ("yes", "Yes", " yes", " Yes")
NO: tuple[str, ...] = ("no", "No", " no", " No")
CANDIDATES: tuple[str, ...] = YES + NO


@dataclass
class JudgePair:
    """One transformed text and what it came from (language codes are ISO 639-3)."""

    transformation: TransformationSpec  # its row (the judge task its quality prompt states)
    source_text: str
    output_text: str
    source_language: str
    target_language: str


@dataclass
class JudgeScores:
    """None where the judge gave no usable answer."""

    quality: float | None
    fluency: float | None
    parapluie: float | None


class Engine(Protocol):
    """The part of the generator's engine (``engine/base.py``) the judge uses."""

    def chat(self, requests: Sequence[ChatRequest]) -> list[str]: ...

    def next_token_logprobs(
        self, conversations: Sequence[Conversation], candidates: Sequence[str]
    ) -> list[dict[str, float]]: ...


@dataclass(frozen=True)
class JudgePrompts:
    """A judge prompt set; placeholders: {task} {source_language} {target_language} {source} {output}.

    {task} is the transformation's `judge_task` in the transformation table
    (hteb_contract.specs.transformations): the intended transformation. Rule-made ones have none:
    they are not judged."""

    id: str
    quality: str
    fluency: str

    @property
    def sha256(self) -> str:
        """Recorded beside every judge score, so a changed prompt can never pass as the old one."""
        return hashlib.sha256(json.dumps(asdict(self), sort_keys=True).encode("utf-8")).hexdigest()


DEFAULT_PROMPTS = JudgePrompts(
    id="hteb-judge-v1",
    quality=(
        "You rate an automatic text transformation.\n"
        "Intended transformation: {task}.\n"
        "Original text (language code {source_language}):\n{source}\n\n"
        "Transformed text (expected language code {target_language}):\n{output}\n\n"
        "Rate the transformation quality from 1 to 5: the degree to which the transformed text "
        "performs the intended transformation while preserving the meaning of the original text "
        "(for a transformation that lengthens the text, its core meaning). "
        "1 = fails, 3 = acceptable, 5 = excellent. Answer with one digit only."
    ),
    fluency=(
        "Rate the fluency of the following text from 1 to 5: the degree to which it reads as "
        "well-formed text in the language with code {target_language}. "
        "1 = unreadable, 3 = acceptable, 5 = perfectly fluent. Answer with one digit only.\n\n"
        "Text:\n{output}"
    ),
)
JUDGE_PROMPTS: Registry[JudgePrompts] = Registry("judge prompt set", entries={DEFAULT_PROMPTS.id: DEFAULT_PROMPTS})

_DIRECT_INSTRUCTION = (
    "You will receive two sentences A and B. Do these two sentences mean the same thing? "
    'Answer with only one word "yes" or "no".'
)
_DIRECT_OPENING: Conversation = (
    ("user", _DIRECT_INSTRUCTION),
    ("assistant", "Please provide the sentences for me to evaluate."),
)
_PAIR_TURN = 'A: "{source}"; B: "{hypothesis}"'
_FS_DIRECT_EXAMPLES: tuple[tuple[str, str, str], ...] = (
    (
        'Amrozi accused his brother, whom he called "the witness", of deliberately distorting his evidence .',
        "Amrozi accused his brother, whom he disparagingly referred to as 'the liar witness', of intentionally "
        + "twisting his testimony.",
        "No",
    ),
    (
        "Pennmakkal is an Indian Malayalam film from 1966, produced by J. Sasikumar and directed by KP Kottarakkara.",
        "The Indian Malayalam film 'Pennmakkal', released in 1966, was produced by J. Sasikumar and directed by "
        + "KP Kottarakkara.",
        "Yes",
    ),
    (
        "Sorkin , who faces charges of conspiracy to obstruct justice and lying to a grand jury , was to have been "
        + "tried separately.",
        "Despite being accused of conspiring to obstruct justice and perjury, Sorkin was supposed to stand trial "
        + "on his own.",
        "No",
    ),
    (
        "Gilroy police and FBI agents described Gehring as cooperative , but said Saturday that he had revealed "
        + "nothing about what had happened to the children .",
        "Although Gilroy police and FBI agents reported that Gehring was cooperative , he hadn't disclosed any "
        + "information about the children's whereabouts or what had happened to them as of Saturday .",
        "No",
    ),
    (
        'Whereas "e" the electric charge of the particle and A is the magnetic vector potential of the '
        + "electromagnetic field.",
        'The electric charge of the particle is denoted by "e", and the magnetic vector potential of the '
        + "electromagnetic field is denoted by 'A'.",
        "Yes",
    ),
    (
        "The Jidanul River is a tributary of the Jiul de Vest River in Romania.",
        "The Jidanul River is a mere insignificant stream that flows into the grand Jiul de Vest River in Romania.",
        "No",
    ),
)


@dataclass(frozen=True)
class ParapluieTemplate:
    """A ParaPLUIE template: fixed turns, then the pair turn with {source} and {hypothesis}."""

    id: str
    turns: Conversation

    @property
    def sha256(self) -> str:
        """Recorded beside every ParaPLUIE score."""
        body = json.dumps({"id": self.id, "turns": self.turns, "pair": _PAIR_TURN}, sort_keys=True)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()

    def conversation(self, source: str, hypothesis: str) -> Conversation:
        """The template filled with one pair, ending on the user turn the judge answers."""
        return (*self.turns, ("user", _PAIR_TURN.format(source=source, hypothesis=hypothesis)))


#: The ParaPLUIE paper, Sec. 4.1.3 / App. A.3: the template with the best accuracy at threshold 0 (default).
FS_DIRECT = ParapluieTemplate(
    id="parapluie-fs-direct",
    turns=_DIRECT_OPENING
    + tuple(
        turn
        for a, b, answer in _FS_DIRECT_EXAMPLES
        for turn in (("user", _PAIR_TURN.format(source=a, hypothesis=b)), ("assistant", answer))
    ),
)
#: The ParaPLUIE paper, Sec. 4.1.1: no examples; for judges too small to use the few-shot context.
DIRECT = ParapluieTemplate(id="parapluie-direct", turns=_DIRECT_OPENING)
PARAPLUIE_TEMPLATES: Registry[ParapluieTemplate] = Registry(
    "ParaPLUIE template", entries={t.id: t for t in (FS_DIRECT, DIRECT)}
)


_SCORE = re.compile(r"(?<![\d.])([1-5])(?![\d]|\.\d)")


def parse_score(text: str) -> float | None:
    """The first standalone integer 1-5 in a judge answer ("Score: 4/5" -> 4.0), else None.

    >>> parse_score("4"), parse_score("Rating: 3."), parse_score("4.5"), parse_score("10")
    (4.0, 3.0, None, None)
    """
    match = _SCORE.search(text)
    return float(match.group(1)) if match else None


def _fill(template: str, pair: JudgePair) -> str:
    spec = pair.transformation
    if spec.judge_task is None:
        raise HtebError(f"{spec.name} is made by rules and has no judge task: rule-made texts are not judged")
    return template.format(
        task=spec.judge_task,
        source_language=pair.source_language,
        target_language=pair.target_language,
        source=pair.source_text,
        output=pair.output_text,
    )


def judge_requests(
    pairs: Sequence[JudgePair], *, seed: int, max_tokens: int, prompts: JudgePrompts = DEFAULT_PROMPTS
) -> list[ChatRequest]:
    """Two greedy requests per pair, in order: pair i's quality at 2i, its fluency at 2i+1."""
    from hteb_generate.engine.base import ChatRequest  # the engine package is the generator's; keep it lazy

    requests = []
    for pair in pairs:
        for template in (prompts.quality, prompts.fluency):
            requests.append(
                ChatRequest(
                    messages=(("user", _fill(template, pair)),),
                    temperature=0.0,
                    top_p=1.0,
                    max_tokens=max_tokens,
                    seed=seed,
                )
            )
    return requests


def parapluie_conversations(pairs: Sequence[JudgePair], template: ParapluieTemplate = FS_DIRECT) -> list[Conversation]:
    """One conversation per pair (A = source text, B = output), FS-DIRECT by default."""
    return [template.conversation(pair.source_text, pair.output_text) for pair in pairs]


def _logsumexp(values: list[float]) -> float | None:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return None
    top = max(finite)
    return top + math.log(sum(math.exp(v - top) for v in finite))


def parapluie_score(logprobs: Mapping[str, float]) -> float | None:
    """log p(yes) - log p(no), each side summed over its variants; None if a side is absent."""
    yes = _logsumexp([logprobs[c] for c in YES if c in logprobs])
    no = _logsumexp([logprobs[c] for c in NO if c in logprobs])
    if yes is None or no is None:
        return None
    return yes - no


def score_pairs(
    engine: Engine,
    pairs: Sequence[JudgePair],
    *,
    seed: int,
    prompts: JudgePrompts = DEFAULT_PROMPTS,
    parapluie_template: ParapluieTemplate = FS_DIRECT,
    max_tokens: int = JUDGE_MAX_TOKENS,
) -> list[JudgeScores]:
    """All judge scores with one batched chat call and one batched log-probability call."""
    if not pairs:
        return []
    answers = engine.chat(judge_requests(pairs, seed=seed, max_tokens=max_tokens, prompts=prompts))
    logprobs = engine.next_token_logprobs(parapluie_conversations(pairs, parapluie_template), candidates=CANDIDATES)
    if len(answers) != 2 * len(pairs) or len(logprobs) != len(pairs):
        raise HtebError(
            f"judge engine returned {len(answers)} answers and {len(logprobs)} log-probability sets "
            f"for {len(pairs)} pairs"
        )
    return [
        JudgeScores(
            quality=parse_score(answers[2 * i]),
            fluency=parse_score(answers[2 * i + 1]),
            parapluie=parapluie_score(logprobs[i]),
        )
        for i in range(len(pairs))
    ]
