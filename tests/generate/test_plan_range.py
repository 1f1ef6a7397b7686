"""`hteb-generate plan`'s range (issue 47 point 9): each part worked out by hand from its stated basis on a plan
of known costs, the range's properties over generated run shapes, and docs/gpu.md's printed plan and the figures
its prose quotes are what the command prints."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_generate.run.plan import Cost, Plan, make_plan
from hteb_generate.run.plan_range import (
    ERROR_RATE,
    RENDER_SECONDS,
    START_MINUTES,
    RunShape,
    parts,
    render_range,
    run_shape,
)
from hteb_generate.setup.config import build_config

ROOT = Path(__file__).resolve().parents[2]

#: 10,000 generation requests writing 300,000 tokens of 1,000,000 prefilled, 30,000 judge requests.
COST = Cost(
    texts=10_000,
    distinct=10_000,
    generation=10_000,
    judge=30_000,
    prompt_tokens=9e6,
    output_tokens=350_000.0,
    prefill_tokens=3e6,
    generation_output_tokens=300_000.0,
    generation_prefill_tokens=1e6,
)
SHAPE = RunShape(batch_size=4096, max_attempts=3, most_tokens=4096, steps=2, judge_stages=3, gpus=4)


def _plan(cost: Cost = COST, decode: float = 5500.0, prefill: float = 7300.0) -> Plan:
    return Plan({("D", "t"): cost}, "by hand", decode, prefill)


def test_each_part_is_its_stated_basis_worked_out_by_hand():
    found = {p.name: p for p in parts(_plan(), SHAPE)}
    assert list(found) == [
        "decode",
        "prefill",
        "retries",
        "chunk tails",
        "barriers",
        "cold starts",
        "template rendering",
    ]
    hour = 3600
    assert found["decode"].low == found["decode"].high == pytest.approx(350_000 / 5500 / hour)
    # prefill: 622 TFLOP/s over 54e9 FLOPs per token = 11,518.5 tokens/s, up to the plan's 7,300
    assert found["prefill"].low == pytest.approx(3e6 / (622e12 / 54e9) / hour)
    assert found["prefill"].high == pytest.approx(3e6 / 7300 / hour)
    generation = (300_000 / 5500 + 1e6 / 7300) / hour
    assert found["retries"].low == pytest.approx(generation * (0.03 + 0.03**2))  # a retry fails as often
    assert found["retries"].high == pytest.approx(generation * 0.03 * 2)
    # 10,000 requests over 2 steps: 5,000 a first-attempt stage, 2 chunks of 4,096, so 2 of the 4 GPUs' lanes
    # have a tail; a retry stage per later attempt and step (2 x 2), 150 requests, one chunk: one lane each; one
    # sequence alone: 3.35e12 / 16.3e9 = 205.5 tokens/s
    alone = 3.35e12 / 16.3e9
    assert found["chunk tails"].low == pytest.approx(2 * 2 * 30 / alone / hour)  # a mean request writes 30 tokens
    assert found["chunk tails"].high == pytest.approx((2 * 2 + 4 * 1) * 4096 / alone / hour)
    assert "2 first-attempt stages, 2 lane(s) each" in found["chunk tails"].rests_on
    # one engine in this process streams a stage's chunks: a tail per stage, 2 first-attempt ones, 3 x 2 in all
    streamed = {p.name: p for p in parts(_plan(), replace(SHAPE, gpus=1))}["chunk tails"]
    assert streamed.low == pytest.approx(2 * 30 / alone / hour)
    assert streamed.high == pytest.approx(3 * 2 * 4096 / alone / hour)
    assert "2 first-attempt stages" in streamed.rests_on and "and 4 retry stages (6 tails)" in streamed.rests_on
    # 3 + 8 chunks in all (30,000 judge requests); 2 x 3 + 3 stages, each waiting a mean chunk on 3 other GPUs
    total = 350_000 / 5500 / hour + 3e6 / 7300 / hour
    assert found["barriers"].low == 0 and found["barriers"].high == pytest.approx(9 * 3 * total / 11)
    assert (found["cold starts"].low, found["cold starts"].high) == pytest.approx((4 * 2 * 2 / 60, 4 * 2 * 10 / 60))
    assert found["template rendering"].low == pytest.approx(40_000 * 36e-6 / hour)
    assert found["template rendering"].high == pytest.approx(40_000 * 505e-6 / hour)
    text = render_range(_plan(), SHAPE)
    low, high = sum(p.low for p in found.values()), sum(p.high for p in found.values())
    assert f"GPU hours: {low:,.1f} to {high:,.1f}" in text
    assert f"wall-clock on 4 GPUs: {low / 4:,.1f} to {high / 4:,.1f} hours" in text


shapes = st.builds(
    RunShape,
    batch_size=st.integers(1, 10_000),
    max_attempts=st.integers(1, 5),
    most_tokens=st.integers(1, 8192),
    steps=st.integers(1, 3),
    judge_stages=st.integers(0, 6),
    gpus=st.integers(1, 16),
)
costs = st.builds(
    lambda generation, judge, output, prefill: Cost(
        texts=generation,
        distinct=generation,
        generation=generation,
        judge=judge,
        prompt_tokens=prefill * 3,
        output_tokens=output * 1.2,
        prefill_tokens=prefill * 2,
        generation_output_tokens=output,
        generation_prefill_tokens=prefill,
    ),
    st.integers(0, 10**7),
    st.integers(0, 3 * 10**7),
    st.floats(0, 1e9),
    st.floats(0, 1e10),
)


@settings(max_examples=200, deadline=None)
@given(cost=costs, shape=shapes, prefill=st.floats(100, 1e5))
def test_every_part_is_a_range_and_one_gpu_waits_for_no_other(cost, shape, prefill):
    found = parts(_plan(cost, prefill=prefill), shape)
    assert all(0 <= p.low <= p.high and math.isfinite(p.high) for p in found)
    by_name = {p.name: p for p in found}
    if shape.gpus == 1:
        assert by_name["barriers"].high == 0
    if prefill >= 622e12 / 54e9:  # a measured rate above the matmul ceiling: the plan's rate at both ends
        assert by_name["prefill"].low == by_name["prefill"].high
    if shape.max_attempts == 1:
        assert by_name["retries"].high == 0
    more = parts(_plan(cost, prefill=prefill), RunShape(**{**shape.__dict__, "gpus": shape.gpus + 1}))
    assert {p.name: p.high for p in more}["cold starts"] > by_name["cold starts"].high


def test_the_gpu_profiles_shape_is_its_configuration(tmp_path):
    config = build_config(
        seed="1339", profile="gpu", overrides={"cache_dir": str(tmp_path / "c"), "store": str(tmp_path / "s")}
    )
    shape = run_shape(config, 8)
    assert shape == RunShape(batch_size=4096, max_attempts=3, most_tokens=4096, steps=2, judge_stages=3, gpus=8)
    assert ERROR_RATE == 0.03 and RENDER_SECONDS[0] < RENDER_SECONDS[1] and START_MINUTES == (2.0, 10.0)


def test_the_plan_docs_gpu_md_prints_is_what_the_command_prints(tmp_path):
    page = (ROOT / "docs" / "gpu.md").read_text(encoding="utf-8")
    head = re.search(r"<!-- plan: hteb-generate plan --seed 1339 --by dataset --gpus (\d+) [^\n]*-->\n", page)
    assert head, "docs/gpu.md has no printed plan"
    printed = page[head.end() : page.index("\n<!-- end of plan -->")]
    gpus = int(head.group(1))
    config = build_config(
        seed="1339", profile="gpu", overrides={"cache_dir": str(tmp_path / "c"), "store": str(tmp_path / "s")}
    )
    plan = make_plan(config, counts="stats", tokens_per_second=5500.0)
    assert printed == plan.render("dataset") + "\n\n" + render_range(plan, run_shape(config, gpus))
    # the prose quotes the range as printed
    low, high, wall_low, wall_high = re.search(
        r"GPU hours: ([\d.]+) to ([\d.]+) .*wall-clock on \d+ GPUs: ([\d.]+) to ([\d.]+) hours", printed
    ).groups()
    prose = " ".join(page[page.index("<!-- end of plan -->") :].split())
    assert (
        f"On {gpus} GPUs the run is {low} to {high} GPU-hours, {wall_low} to {wall_high} hours of wall clock" in prose
    )
