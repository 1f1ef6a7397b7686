"""Transforming the distinct texts of a run: stages, retries, error detection, judging.

Why units: identical source texts of a dataset that get the same languages are one unit,
transformed once and fanned out to every item that holds them. A unit's generation seed is read
off (run seed, dataset, transformation, text, languages, attempt), so neither the input order nor
the batch size can change any output of a deterministic engine.

Stages: every attempt of every unit runs step by step, one batched engine call per
(attempt, step) across all datasets and transformations. A unit whose output has an error is
retried with a new derived seed (and `retry_temperature`, since a greedy retry would repeat the
same answer, with the generator's published top_k and top_p) up to `max_attempts`; every attempt is kept.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from tqdm import tqdm

from hteb_contract.records import Attempt, Sampling
from hteb_contract.specs.transformations import TransformationSpec

from hteb_generate.checks import judge as judge_module
from hteb_generate.transform.budget import step_max_tokens
from hteb_generate.transform.cleanup import clean_output
from hteb_generate.checks.detectors import ERROR_TYPES, detect_errors
from hteb_generate.engine import CachedEngine, ChatRequest, ChatResult
from hteb_generate.seeding import engine_seed
from hteb_generate.transform.transformations import LanguagePlan, PromptSet


@dataclass
class TextJob:
    """One distinct text to transform, with every attempt made on it."""

    seed: int
    dataset: str
    transformation: TransformationSpec
    text: str
    plan: LanguagePlan
    attempts: list[Attempt] = field(default_factory=list)
    judge: judge_module.JudgeScores | None = None

    @property
    def key(self) -> tuple:
        p = self.plan
        return (self.seed, self.dataset, self.transformation.name, self.text, p.source, p.target, p.pivot)

    def attempt_seed(self, attempt: int) -> int:
        return engine_seed(*self.key, "attempt", attempt)

    @property
    def kept(self) -> Attempt:
        """The first attempt without errors, else the last one."""
        return next((a for a in self.attempts if not a.errors), self.attempts[-1])


@dataclass(frozen=True)
class Decoding:
    """How units are decoded: the first attempt's `sampling` (what each item record keeps), and the
    retries: at least `retry_temperature`, at most `max_attempts` in all, each step's max_tokens
    growing with its input up to `max_tokens_ceiling` (budget.step_max_tokens)."""

    sampling: Sampling
    retry_temperature: float
    max_attempts: int
    max_tokens_ceiling: int | None = None
    #: a retry's top_k and top_p: the generator's published sampling defaults (None: the whole vocabulary,
    #: and the first attempt's top_p), so a sampled retry draws no off-script token from a 262k vocabulary
    retry_top_k: int | None = None
    retry_top_p: float | None = None

    def nucleus(self, attempt: int) -> tuple[float, int]:
        """The (top_p, top_k) of attempt `attempt` (0: the first attempt's, top_k 0 = whole vocabulary)."""
        if attempt == 0:
            return self.sampling.top_p, 0
        top_p = self.sampling.top_p if self.retry_top_p is None else self.retry_top_p
        return top_p, self.retry_top_k or 0


def _errors(unit: TextJob, steps: list[str], finish_reasons: list[str | None]) -> list[str]:
    """The output's errors, an intermediate step's under its `check_as` (backtranslation's pivot
    step must really be a translation into the pivot language)."""
    plan, spec = unit.plan, unit.transformation
    found = {"truncated"} if "length" in finish_reasons[:-1] else set()  # an earlier step cut by max_tokens
    found |= set(
        detect_errors(
            steps[-1],
            unit.text,
            transformation=spec,
            source_language=plan.source,
            expected_language=plan.expected,
            finish_reason=finish_reasons[-1],
        )
    )
    for index, step in enumerate(spec.steps[:-1]):
        if step.check is not None:
            found |= set(
                detect_errors(
                    steps[index],
                    unit.text,
                    transformation=step.check,
                    source_language=plan.source,
                    expected_language=plan.of(step.language),
                    finish_reason=finish_reasons[index],
                )
            )
    return [e for e in ERROR_TYPES if e in found]


class _Progress:
    """A tqdm bar per stage, its postfix counting cached, generated, retried and failed requests."""

    def __init__(self, engines: Sequence[CachedEngine], desc: str, total: int, retried: int) -> None:
        self.engines = engines
        self.start = [(e.hits, e.calls) for e in engines]
        self.retried = retried
        self.bar = tqdm(total=total, desc=desc, unit="req", file=sys.stderr, leave=True, dynamic_ncols=True)

    def counts(self) -> tuple[int, int]:
        hits = sum(e.hits - s[0] for e, s in zip(self.engines, self.start))
        calls = sum(e.calls - s[1] for e, s in zip(self.engines, self.start))
        return hits, calls

    def __call__(self, answered: int) -> None:
        """Count `answered` more requests; one bar may span several engine calls (the judge's two)."""
        hits, calls = self.counts()
        self.bar.n += answered
        self.bar.set_postfix(cached=hits, generated=calls, retried=self.retried, refresh=False)
        self.bar.refresh()

    def close(self, failed: int | None = None) -> None:
        hits, calls = self.counts()
        extra = {} if failed is None else {"failed": failed}
        self.bar.n = self.bar.total
        self.bar.set_postfix(cached=hits, generated=calls, retried=self.retried, **extra, refresh=False)
        self.bar.close()


@contextmanager
def _reporting(engine: CachedEngine, progress: _Progress) -> Iterator[None]:
    engine.on_progress = progress
    try:
        yield
    finally:
        engine.on_progress = None


def _chat(engine: CachedEngine, requests: list[ChatRequest], progress: _Progress) -> list[ChatResult]:
    with _reporting(engine, progress):
        return engine.chat_results(requests)


def transform_units(units: Sequence[TextJob], engine: CachedEngine, prompts: PromptSet, decoding: Decoding) -> None:
    """Run every attempt of every unit (in place): stage per (attempt, step), retry on errors."""
    pending = [u for u in units if not u.attempts]
    sampling = decoding.sampling
    for attempt in range(decoding.max_attempts):
        if not pending:
            break
        temperature = sampling.temperature if attempt == 0 else max(sampling.temperature, decoding.retry_temperature)
        top_p, top_k = decoding.nucleus(attempt)
        inputs = {id(u): u.text for u in pending}
        steps: dict[int, list[str]] = {id(u): [] for u in pending}
        finish: dict[int, list[str | None]] = {id(u): [] for u in pending}
        for index in range(max(len(u.transformation.steps) for u in pending)):
            active = [u for u in pending if len(u.transformation.steps) > index]
            requests = []
            for unit in active:
                step = unit.transformation.steps[index]
                messages = prompts.template(step.template).messages(inputs[id(unit)], unit.plan.of(step.language))
                max_tokens = step_max_tokens(step, inputs[id(unit)], sampling.max_tokens, decoding.max_tokens_ceiling)
                requests.append(
                    ChatRequest(messages, temperature, top_p, max_tokens, unit.attempt_seed(attempt), top_k)
                )
            progress = _Progress(
                [engine], f"attempt {attempt + 1} step {index + 1}", len(requests), len(requests) if attempt else 0
            )
            outputs = _chat(engine, requests, progress)
            for unit, output in zip(active, outputs):
                steps[id(unit)].append(output.text)
                finish[id(unit)].append(output.finish_reason)
                inputs[id(unit)] = output.text
            last = index == max(len(u.transformation.steps) for u in pending) - 1
            failed = None
            if last:
                for unit in pending:
                    out, reasons = steps[id(unit)], finish[id(unit)]
                    cleaned = clean_output(out[-1], unit.text)  # detectors read the cleaned output
                    unit.attempts.append(
                        Attempt(
                            attempt,
                            unit.attempt_seed(attempt),
                            tuple(out),
                            cleaned.output,
                            tuple(_errors(unit, [*out[:-1], cleaned.output], reasons)),
                            finish_reasons=tuple(reasons),
                            cleanup=cleaned.applied,
                        )
                    )
                failed = sum(1 for u in pending if u.attempts[-1].errors)
            progress.close(failed)
        pending = [u for u in pending if u.attempts[-1].errors]


def judge_units(
    units: Sequence[TextJob],
    engine: CachedEngine,
    *,
    prompts: judge_module.JudgePrompts,
    template: judge_module.ParapluieTemplate,
) -> None:
    """Judge scores for each unit's kept output: one batched chat and one log-prob call per run seed."""
    for seed in sorted({u.seed for u in units}):
        group = [u for u in units if u.seed == seed]
        pairs = [
            judge_module.JudgePair(u.transformation, u.text, u.kept.output, u.plan.source, u.plan.expected)
            for u in group
        ]
        progress = _Progress([engine], f"judge seed {seed}", 3 * len(pairs), 0)
        with _reporting(engine, progress):
            scores = judge_module.score_pairs(engine, pairs, seed=seed, prompts=prompts, parapluie_template=template)
        progress.close()
        for unit, score in zip(group, scores):
            unit.judge = score
