"""The dataset card's Table 5 layout: rates per error type and a total that counts an item once."""

from __future__ import annotations

from dataclasses import replace

from hteb_contract.records import ItemRecord, Judge, single_attempt
from hteb_generate.revision.card import _sampling, error_table, judge_table


def _record(
    dataset: str, transformation: str, errors: list[str], quality=None, fluency=None, parapluie=None
) -> ItemRecord:
    record = single_attempt(
        dataset=dataset,
        task_type="STS",
        subset="default",
        ref=("test", "0", "sentence1"),
        source_language="eng",
        transformation=transformation,
        seed=1,
        original_text="a",
        output="b",
        generator_model="m",
        prompt_hash="0" * 64,
        errors=errors,
    )
    return replace(record, judge=Judge("m", quality, fluency, parapluie))


def test_error_table_rates_and_total_counting_an_item_once():
    records = [
        _record("STSBenchmark", "paraphrasing", ["identical", "wrong_language"]),
        _record("STSBenchmark", "paraphrasing", ["identical"]),
        _record("STSBenchmark", "paraphrasing", []),
        _record("STSBenchmark", "paraphrasing", []),
        _record("SciFact", "translation", ["prefix_leak"]),
    ]
    lines = error_table(records).splitlines()
    assert lines[0].startswith("| dataset | transformation | n | ident. | empty |") and lines[0].endswith("| total |")
    row = next(line for line in lines if "| STSBenchmark | paraphrasing |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "4" and cells[3] == "50.0"  # identical in 2 of 4
    assert cells[3 + 6] == "25.0"  # wrong_language in 1 of 4
    assert cells[-1] == "50.0"  # total: 2 items have an error, not 3 errors
    assert next(line for line in lines if "SciFact" in line).split("|")[-2].strip() == "100.0"


def test_judge_table_acceptance_is_mean_of_quality_and_fluency_at_least_3():
    records = [
        _record("D", "expansion", [], quality=4, fluency=2, parapluie=0.5),  # mean 3 -> accepted
        _record("D", "expansion", [], quality=2, fluency=3, parapluie=-1.0),  # mean 2.5 -> not
        _record("D", "expansion", [], quality=None, fluency=5, parapluie=None),  # no quality -> not counted
    ]
    row = next(line for line in judge_table(records).splitlines() if line.startswith("| expansion"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == ["expansion", "3", "3.00", "3.33", "50.0%", "-0.25", "50.0%"]


def test_rows_line_describes_the_sampler():
    every = {"sample": None, "max_texts": None, "max_list": None}
    assert _sampling(every) == "every row of each source"
    sampled = _sampling({**every, "sample": 4})
    assert "4 evaluation row(s) per language subset, dealt out label by label" in sampled
    assert "kept in dataset order" in sampled and "the first 4 queries with relevance judgements" in sampled
    assert "the first 40 other documents" in sampled and "the first 4 evaluation row" not in sampled
