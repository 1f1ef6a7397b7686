"""`hteb-generate plan`: what a run will ask of the LLM, and the GPU hours, without loading a model.

Per dataset x transformation: the texts transformed (items, with repeats), the distinct texts (what
the run transforms: a text with the same languages is transformed once), the LLM requests of the
first attempts (two per text for the two-step transformations; a retry repeats its steps and is
not counted) and of the judge (2 chat requests and 1 log-probability request per distinct text),
and the estimated prompt and output tokens.

Counts come from the sources themselves (`local`: ../shared/data; `hub`: the Hub, loaded as a run
loads them; both sampled as the profile samples) with the run's own units and language choices,
or from mteb's descriptive statistics (`stats`: each row's `stats` in the contract's dataset table,
hteb_contract/specs/datasets.yaml: whole datasets, distinct texts counted per field and language
choices not drawn).

Token rules (`budget.py`): a text's tokens are its characters over a per-script rate; a prompt is
its messages' tokens (instruction, examples, the text) plus 4 per message for the chat template's
markers; a step writes `budget.EXPECTED` times its input's tokens (expand 4, summarise 0.5, the
others 1), never more than its `max_tokens`; a second step's input is the first step's output; a
judge answer is 2 tokens (a digit and the end of turn), a log-probability request 1.

GPU hours = decode hours + prefill hours. Decode: output tokens / --tokens-per-second. Prefill:
the prompt tokens vLLM's prefix cache cannot serve / --prefill-tokens-per-second. Every request of
a stage shares the part of its prompt before its first text (instruction, examples, the judge's
preamble), which the prefix cache computes once per stage; the text, and whatever follows it, is
prefilled for every request (vLLM caches whole 16-token blocks only, so up to 15 tokens of the
shared part are computed again: not counted). vLLM overlaps the two phases in one batch (chunked
prefill), so their sum is the time when neither hides the other.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from functools import lru_cache
from pathlib import Path

from hteb_contract.errors import HtebError
from hteb_contract.sources import SourceDataset
from hteb_contract.specs.transformations import TransformationSpec

from hteb_generate.transform import budget
from hteb_generate.bounds import POSITIVE, check_number
from hteb_generate.setup.config import GenerateConfig
from hteb_generate.checks.judge import PARAPLUIE_TEMPLATES, JudgePair, judge_requests, parapluie_conversations
from hteb_generate.sources.source_loading import load_source
from hteb_generate.sources.sources_table import lookup_source
from hteb_generate.transform.transformations import PROMPT_SETS, TRANSFORMATIONS, LanguagePlan
from hteb_generate.run.units import plan_units

#: Gemma 3 27B (BF16) with vLLM: about 22,000 output tokens/s on one node of 4 H100s, so 5,500 per H100.
#: Derived, not measured: the int4 AWQ model on one GPU may be faster or slower.
TOKENS_PER_SECOND = 5500.0
TOKENS_PER_SECOND_SOURCE = (
    "Gemma 3 27B (BF16) with vLLM: 22,000 output tokens/s on one 4xH100 node ('1 million tokens per second: Qwen 3.5 "
    "27B on GKE with B200 GPUs', Google Cloud community on Medium, recalling 'Optimize Gemma 3 Inference: vLLM on "
    "GKE', 2025, https://medium.com/google-cloud/optimize-gemma-3-inference-vllm-on-gke-c071a08f7c78) divided by 4: "
    "derived, not measured for the int4 AWQ model on one GPU (bench/bench_gpu_rates.py measures it)"
)
#: Prefill is compute-bound: 2 FLOPs per parameter per token, 2 x 27e9 for Gemma 3 27B, on an H100 SXM's 989 dense
#: BF16 TFLOP/s (NVIDIA's H100 datasheet) at 40% utilisation: 989e12 x 0.4 / 54e9 = 7,300 prompt tokens/s.
PREFILL_TOKENS_PER_SECOND = 7300.0
PREFILL_SOURCE = (
    "Gemma 3 27B's 2 x 27e9 FLOPs per prompt token on an H100 SXM's 989 dense BF16 TFLOP/s (NVIDIA datasheet) at 40% "
    "utilisation: derived, not measured (bench/bench_gpu_rates.py measures it)"
)
SHARED_END = "\x00"  # stands for a request's texts: its prompt before the first one is shared by the whole stage
CHAT_MARKERS = 4  # tokens the chat template adds around each message
JUDGE_ANSWER = 2  # a digit and the end of turn
COUNTS = ("local", "hub", "stats")


@dataclass(frozen=True)
class Cost:
    """LLM work of transforming (and judging) some texts."""

    texts: int = 0
    distinct: int = 0
    generation: int = 0
    judge: int = 0
    prompt_tokens: float = 0.0
    output_tokens: float = 0.0
    prefill_tokens: float = 0.0  # prompt tokens the prefix cache cannot serve: what is prefilled per request
    generation_output_tokens: float = 0.0  # of those output tokens, the generation steps' (what a retry repeats)
    generation_prefill_tokens: float = 0.0  # and of the prefilled ones

    def __add__(self, other: Cost) -> Cost:
        return Cost(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(Cost)))

    def times(self, n: int) -> Cost:
        return Cost(*(getattr(self, f.name) * n for f in fields(Cost)))


class Estimator:
    """The cost of one distinct text under a run's prompts, budgets and judge."""

    def __init__(self, cfg: GenerateConfig) -> None:
        self.cfg = cfg
        self.prompts = PROMPT_SETS.get(cfg.prompt_set)
        self.template = lru_cache(maxsize=None)(self._template)
        self.judge_templates = lru_cache(maxsize=None)(self._judge_templates)

    @staticmethod
    def _messages(messages: Iterable[tuple[str, str]]) -> int:
        return sum(budget.estimate_tokens(content.replace(SHARED_END, "")) + CHAT_MARKERS for _, content in messages)

    @staticmethod
    def _shared(messages: Iterable[tuple[str, str]]) -> int:
        """Tokens before the first text (SHARED_END): the prefix every request of the stage shares (the
        markers of the message holding the text are not: its end of turn and the reply's start follow it)."""
        tokens = 0
        for _, content in messages:
            head, found, _ = content.partition(SHARED_END)
            if found:
                return tokens + budget.estimate_tokens(head)
            tokens += budget.estimate_tokens(content) + CHAT_MARKERS
        return tokens

    def _template(self, key: str, language: str) -> tuple[int, int]:
        """Tokens of a step's prompt without its text, and those of its shared prefix."""
        messages = self.prompts.template(key).messages(SHARED_END, language)
        return self._messages(messages), self._shared(messages)

    def _judge_templates(self, transformation: TransformationSpec) -> tuple[tuple[int, int], ...]:
        """Tokens of the quality, fluency and ParaPLUIE prompts without their texts, each with its shared prefix."""
        pair = JudgePair(transformation, SHARED_END, SHARED_END, "eng", "eng")
        quality, fluency = judge_requests([pair], seed=0, max_tokens=1)
        (parapluie,) = parapluie_conversations([pair], PARAPLUIE_TEMPLATES.get(self.cfg.parapluie_template))
        return tuple((self._messages(m), self._shared(m)) for m in (quality.messages, fluency.messages, parapluie))

    def cost(self, transformation: TransformationSpec, tokens: float, plan: LanguagePlan) -> Cost:
        """One distinct text of `tokens` tokens, first attempt and judge."""
        prompt = output = shared = 0.0
        text = tokens
        for step in transformation.steps:
            room = budget.step_budget(step)
            cap = budget.max_tokens_for(room, text, self.cfg.max_tokens, self.cfg.max_tokens_ceiling)
            template, prefix = self.template(step.template, plan.of(step.language))
            prompt += template + text
            shared += prefix
            text = min(cap, room.expected * text)
            output += text
        generation_output, generation_prefill = output, prompt - shared
        judged = 0
        if self.cfg.judge_model is not None:
            (quality, q_prefix), (fluency, f_prefix), (parapluie, p_prefix) = self.judge_templates(transformation)
            prompt += quality + tokens + text + fluency + text + parapluie + tokens + text
            shared += q_prefix + f_prefix + p_prefix
            output += 2 * JUDGE_ANSWER + 1
            judged = 3
        return Cost(
            distinct=1,
            generation=len(transformation.steps),
            judge=judged,
            prompt_tokens=prompt,
            output_tokens=output,
            prefill_tokens=prompt - shared,
            generation_output_tokens=generation_output,
            generation_prefill_tokens=generation_prefill,
        )


@dataclass(frozen=True)
class Plan:
    """The estimate of a run: one cost per (dataset, transformation), rendered as a table."""

    costs: Mapping[tuple[str, str], Cost]
    counts: str  # where the counts come from
    tokens_per_second: float  # output (decode) tokens per second per GPU
    prefill_tokens_per_second: float = PREFILL_TOKENS_PER_SECOND

    @property
    def total(self) -> Cost:
        return sum(self.costs.values(), Cost())

    @property
    def decode_hours(self) -> float:
        return self.total.output_tokens / self.tokens_per_second / 3600

    @property
    def prefill_hours(self) -> float:
        return self.total.prefill_tokens / self.prefill_tokens_per_second / 3600

    @property
    def gpu_hours(self) -> float:
        return self.decode_hours + self.prefill_hours

    #: `hteb-generate plan --by`: rows per (dataset, transformation), per dataset or per transformation.
    GROUPINGS = ("both", "dataset", "transformation")

    def grouped(self, by: str) -> dict[tuple[str, ...], Cost]:
        """Costs per (dataset, transformation), per dataset or per transformation."""
        if by == "both":
            return {key: cost for key, cost in self.costs.items()}
        index = {"dataset": 0, "transformation": 1}[by]
        groups: dict[tuple[str, ...], Cost] = {}
        for key, cost in self.costs.items():
            groups[(key[index],)] = groups.get((key[index],), Cost()) + cost
        return groups

    def render(self, by: str = "both") -> str:
        """A Markdown table and the totals, GPU hours and the rules they rest on."""
        names = ["dataset", "transformation"] if by == "both" else [by]
        columns = [
            "texts",
            "distinct",
            "generation requests",
            "judge requests",
            "prompt tokens",
            "prefill tokens",
            "output tokens",
        ]
        lines = ["| " + " | ".join(names + columns) + " |", "|" + "---|" * (len(names) + len(columns))]

        def cells(cost: Cost) -> list[str]:
            values = (
                cost.texts,
                cost.distinct,
                cost.generation,
                cost.judge,
                cost.prompt_tokens,
                cost.prefill_tokens,
                cost.output_tokens,
            )
            return [f"{round(v):,}" for v in values]

        for key, cost in self.grouped(by).items():
            lines.append("| " + " | ".join([*key, *cells(cost)]) + " |")
        total = self.total
        lines.append("| " + " | ".join(["**total**", *[""] * (len(names) - 1), *cells(total)]) + " |")
        requests = total.generation + total.judge
        lines += [
            "",
            f"Counts: {self.counts}. LLM requests: {requests:,} ({total.generation:,} first-attempt generation steps, "
            f"{total.judge:,} judge); retries are not counted here (the range below counts them).",
            f"GPU hours: {self.gpu_hours:,.1f} = decode {self.decode_hours:,.1f} "
            f"({round(total.output_tokens):,} output tokens / {self.tokens_per_second:,.0f} tokens/s) "
            f"+ prefill {self.prefill_hours:,.1f} "
            f"({round(total.prefill_tokens):,} prefill tokens / {self.prefill_tokens_per_second:,.0f} tokens/s); "
            "prefill tokens: each request's prompt from its first text on (the part before it is shared by the "
            "stage and served by vLLM's prefix cache).",
        ]
        return "\n".join(lines)


def _empty(cfg: GenerateConfig, datasets: Iterable[str]) -> dict[tuple[str, str], Cost]:
    return {(d, t): Cost() for d in datasets for t in cfg.transformations}


def plan_from_sources(cfg: GenerateConfig, datasets: Mapping[str, SourceDataset]) -> dict[tuple[str, str], Cost]:
    """Exact counts from loaded sources: the run's own items and distinct units."""
    estimator = Estimator(cfg)
    units, items = plan_units(cfg, datasets)
    costs = _empty(cfg, datasets)
    for item in items:
        costs[(item.dataset, item.transformation)] += Cost(texts=1)
    for unit in units:
        key = (unit.dataset, unit.transformation.name)
        costs[key] += estimator.cost(unit.transformation, budget.estimate_tokens(unit.text), unit.plan)
    return costs


def plan_from_stats(cfg: GenerateConfig) -> dict[tuple[str, str], Cost]:
    """Counts of whole datasets from mteb's descriptive statistics (each dataset row's `stats`)."""
    if cfg.sample is not None or cfg.max_texts is not None:
        raise HtebError("--counts stats describes whole datasets, but this profile samples them: use --counts local")
    estimator = Estimator(cfg)
    costs = _empty(cfg, cfg.datasets)
    for name in cfg.datasets:
        entry = lookup_source(name)
        if entry.stats is None:
            raise HtebError(f"no mteb statistics for {entry.name}: its row of datasets.yaml has no `stats`")
        language = entry.languages[0]
        plan = LanguagePlan(language, language, language)  # the prompts' language names differ by a token or two
        for subset in entry.subsets:
            if subset not in entry.stats:
                raise HtebError(f"no mteb statistics for {entry.name} subset {subset!r} in datasets.yaml")
            for stats in entry.stats[subset]:
                tokens = budget.estimate_tokens_of_chars(stats.chars / max(stats.texts, 1), stats.script)
                for t_name in cfg.transformations:
                    one = estimator.cost(TRANSFORMATIONS.get(t_name), tokens, plan)
                    costs[(entry.name, t_name)] += one.times(stats.unique * len(cfg.seeds)) + Cost(
                        texts=stats.texts * len(cfg.seeds)
                    )
    return costs


def make_plan(
    cfg: GenerateConfig,
    *,
    counts: str,
    tokens_per_second: float,
    prefill_tokens_per_second: float = PREFILL_TOKENS_PER_SECOND,
) -> Plan:
    """The plan of the run `cfg` describes, with counts from `counts` (local, hub or stats)."""
    check_number("--tokens-per-second", tokens_per_second, POSITIVE)
    check_number("--prefill-tokens-per-second", prefill_tokens_per_second, POSITIVE)
    rates = (tokens_per_second, prefill_tokens_per_second)
    if counts == "stats":
        return Plan(plan_from_stats(cfg), "mteb 2.26.24 descriptive statistics (whole datasets)", *rates)
    datasets = {}
    for name in cfg.datasets:
        entry = lookup_source(name)
        datasets[entry.name] = load_source(
            entry,
            source=counts,
            data_dir=Path(cfg.data_dir),
            sample=cfg.sample,
            max_texts=cfg.max_texts,
            max_list=cfg.max_list,
        )
    where = cfg.data_dir if counts == "local" else "the Hub at the pinned revisions"
    sampled = f", {cfg.sample} rows per subset, at most {cfg.max_texts} texts per dataset" if cfg.sample else ""
    return Plan(plan_from_sources(cfg, datasets), f"the sources in {where}{sampled}", *rates)
