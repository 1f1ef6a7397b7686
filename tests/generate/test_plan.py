"""`hteb-generate plan`: numbers worked out by hand on a real dataset, every registered dataset planned
from its row's statistics (tests/contract/test_dataset_specs.py holds them to the installed mteb), and
the command printing its table without loading torch or vLLM."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import pytest
from hteb_contract.specs.transformations import transformation_spec
from hteb_contract.errors import HtebError
from hteb_generate.setup.config import build_config
from hteb_generate.checks.judge import (
    DEFAULT_PROMPTS,
    PARAPLUIE_TEMPLATES,
    JudgePair,
    judge_requests,
    parapluie_conversations,
)
from hteb_generate.run.plan import PREFILL_TOKENS_PER_SECOND, Cost, make_plan
from hteb_generate.sources.sources_table import SOURCES, lookup_source
from hteb_generate.transform.transformations import PROMPT_SETS

ENTRY = "from hteb_generate.cli import main; main()"


def _prompt(messages) -> int:
    """The stated rule on Latin text: ceil(characters / 4) per message, plus 4 for its chat markers."""
    return sum(math.ceil(len(content) / 4) + 4 for _, content in messages)


def _shared(messages) -> int:
    """The stated rule's tokens of a conversation before its first text (marked \\x00), its markers counted
    for the messages wholly before it."""
    whole = []
    for _, content in messages:
        if "\x00" in content:
            return _prompt(whole) + math.ceil(len(content.split("\x00")[0]) / 4)
        whole.append(("", content))
    raise AssertionError("no text in the conversation")


def _cpu_plan(shared_data, tmp_path, **overrides):
    given = {
        "datasets": "STSBenchmark",
        "max_texts": 2,
        "data_dir": str(shared_data),
        "cache_dir": str(tmp_path / "cache"),
        "store": str(tmp_path / "store"),
        **overrides,
    }
    return make_plan(build_config(seed="1339", profile="cpu", overrides=given), counts="local", tokens_per_second=10.0)


def test_counts_and_tokens_of_one_real_sts_row_by_hand(shared_data, tmp_path):
    """STSBenchmark's first test row, as the cpu profile takes it (max 2 texts): "A girl is styling her
    hair." (27 characters: 7 tokens) and "A girl is brushing her hair." (28: 7 tokens); max_tokens 48."""
    plan = _cpu_plan(shared_data, tmp_path, transformations="paraphrasing,summarised_expansion", judge_model="none")
    prompts = PROMPT_SETS.get("smollm2-fewshot")
    para, expand, summ = (
        _prompt(prompts.template(k).messages("", "eng")) for k in ("paraphrase", "expand", "summarise")
    )
    paraphrasing = plan.costs[("STSBenchmark", "paraphrasing")]
    # each text: prompt = template + 7, output = 1 x 7; prefilled: the text and its message's 4 markers
    assert paraphrasing == Cost(
        texts=2,
        distinct=2,
        generation=2,
        judge=0,
        prompt_tokens=2 * (para + 7),
        output_tokens=2 * 7,
        prefill_tokens=2 * (7 + 4),
        generation_output_tokens=2 * 7,  # no judge: all of it the generation's
        generation_prefill_tokens=2 * (7 + 4),
    )
    # each text: expand 7 -> min(48, 4 x 7) = 28; summarise those 28 -> 0.5 x 28 = 14
    two_step = plan.costs[("STSBenchmark", "summarised_expansion")]
    assert two_step == Cost(
        texts=2,
        distinct=2,
        generation=4,
        judge=0,
        prompt_tokens=2 * ((expand + 7) + (summ + 28)),
        output_tokens=2 * (28 + 14),
        prefill_tokens=2 * ((7 + 4) + (28 + 4)),
        generation_output_tokens=2 * (28 + 14),
        generation_prefill_tokens=2 * ((7 + 4) + (28 + 4)),
    )
    assert plan.total.generation == 6 and plan.decode_hours == pytest.approx((14 + 84) / 10 / 3600)
    assert plan.prefill_hours == pytest.approx((22 + 86) / PREFILL_TOKENS_PER_SECOND / 3600)
    assert plan.gpu_hours == plan.decode_hours + plan.prefill_hours


def test_the_judge_adds_three_requests_per_distinct_text(shared_data, tmp_path):
    plan = _cpu_plan(shared_data, tmp_path, transformations="paraphrasing")
    pair = JudgePair(transformation_spec("paraphrasing"), "", "", "eng", "eng")
    quality, fluency = (
        _prompt(r.messages) for r in judge_requests([pair], seed=0, max_tokens=1, prompts=DEFAULT_PROMPTS)
    )
    parapluie = _prompt(parapluie_conversations([pair], PARAPLUIE_TEMPLATES.get("parapluie-direct"))[0])
    text = output = 7  # each sentence, and its paraphrase
    judge_prompt = quality + text + output + fluency + output + parapluie + text + output
    paraphrasing = plan.costs[("STSBenchmark", "paraphrasing")]
    assert (paraphrasing.generation, paraphrasing.judge) == (2, 6)
    prompt = _prompt(PROMPT_SETS.get("smollm2-fewshot").template("paraphrase").messages("", "eng")) + text
    assert paraphrasing.prompt_tokens == 2 * (prompt + judge_prompt)
    # prefilled per request: everything from its first text on; the text before it is shared by the stage
    marked = JudgePair(transformation_spec("paraphrasing"), "\x00", "\x00", "eng", "eng")
    conversations = [r.messages for r in judge_requests([marked], seed=0, max_tokens=1, prompts=DEFAULT_PROMPTS)]
    conversations += parapluie_conversations([marked], PARAPLUIE_TEMPLATES.get("parapluie-direct"))
    shared = sum(_shared(c) for c in conversations)
    assert shared > 0 and paraphrasing.prefill_tokens == 2 * ((text + 4) + judge_prompt - shared)
    assert paraphrasing.output_tokens == 2 * (output + 2 + 2 + 1)  # two one-digit answers, one log-probability
    # what a retry repeats: the generation's share alone, without the judge's
    assert (paraphrasing.generation_output_tokens, paraphrasing.generation_prefill_tokens) == (
        2 * output,
        2 * (text + 4),
    )


def test_every_registered_dataset_has_statistics_and_sci_fact_counts_its_300_queries(tmp_path):
    config = build_config(
        seed="1339", profile="gpu", overrides={"cache_dir": str(tmp_path / "cache"), "store": str(tmp_path / "store")}
    )
    plan = make_plan(config, counts="stats", tokens_per_second=5500.0)
    assert {d for d, _ in plan.costs} == {lookup_source(n).name for n in SOURCES.names()}
    scifact = plan.costs[("SciFact", "backtranslation")]
    assert (scifact.texts, scifact.distinct, scifact.generation, scifact.judge) == (300, 300, 600, 900)
    assert plan.decode_hours == pytest.approx(plan.total.output_tokens / 5500 / 3600)
    # the run's prefill: every source text and every output the judge reads, once per request
    total = plan.total
    assert 0 < total.prefill_tokens < total.prompt_tokens and plan.prefill_hours > plan.decode_hours
    assert plan.gpu_hours == pytest.approx(plan.decode_hours + total.prefill_tokens / PREFILL_TOKENS_PER_SECOND / 3600)


def test_statistics_of_whole_datasets_do_not_plan_a_sampled_profile(tmp_path, shared_data):
    config = build_config(
        seed="1",
        profile="cpu",
        overrides={
            "cache_dir": str(tmp_path / "cache"),
            "store": str(tmp_path / "store"),
            "data_dir": str(shared_data),
        },
    )
    with pytest.raises(HtebError, match="^--counts stats describes whole datasets, but this profile samples them"):
        make_plan(config, counts="stats", tokens_per_second=1.0)


def _cli(*args: str, cwd) -> subprocess.CompletedProcess:
    probe = (
        "import sys\nfrom hteb_generate.cli import main\ntry:\n    main()\nfinally:\n"
        "    print('LOADED', sorted(m for m in ('torch', 'vllm', 'transformers') if m in sys.modules))"
    )
    return subprocess.run(
        [sys.executable, "-c", probe, *args], capture_output=True, text=True, cwd=cwd, timeout=300, env=os.environ
    )


@pytest.mark.slow  # a fresh interpreter
def test_plan_prints_its_table_without_loading_torch_or_vllm(tmp_path, shared_data):
    done = _cli("plan", "--seed", "1339", "--by", "dataset", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.split("\n\n| part |")[0].splitlines()  # the table; the range follows it
    assert lines[0] == (
        "| dataset | texts | distinct | generation requests | judge requests | prompt tokens | "
        "prefill tokens | output tokens |"
    )
    assert len([line for line in lines if line.startswith("| ") and "**total**" not in line]) == 1 + len(SOURCES)
    hours = next(line for line in lines if line.startswith("GPU hours: "))
    assert "tokens / 5,500 tokens/s) + prefill " in hours and "tokens / 7,300 tokens/s)" in hours
    assert done.stdout.splitlines()[-1] == "LOADED []" and "| chunk tails |" in done.stdout
    local = _cli("plan", "--seed", "1339", "--profile", "cpu", "--data-dir", str(shared_data), cwd=tmp_path)
    assert local.returncode == 0 and "| STSBenchmark | paraphrasing |" in local.stdout, local.stderr
    assert local.stdout.splitlines()[-1] == "LOADED []"
    bad = _cli("plan", "--seed", "1339", "--tokens-per-second", "0", cwd=tmp_path)
    assert bad.returncode == 2
    assert bad.stderr.strip() == "error: --tokens-per-second must be a finite number above 0, got 0.0"
