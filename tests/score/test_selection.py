"""--preset and --min-judge on the bundled sample (real SmolLM2 transformations and judge scores)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hteb_contract.records import ItemRecord
from hteb_contract.stores import open_store
from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from hteb_score.scoring.selection import PRESETS, judge_kept, judge_means
from refusal import run


def judge_mean(record: ItemRecord) -> float | None:
    """The mean of a record's judge quality and fluency, None when no judge rated it (the oracle)."""
    scores = [x for x in (record.judge.quality, record.judge.fluency) if x is not None]
    return sum(scores) / len(scores) if scores else None


@pytest.fixture(scope="module")
def revision():
    return open_store(f"file://{SAMPLE_STORE}").fetch(SAMPLE_REVISION)


def test_minimal_preset_is_the_papers_check_on_one_dataset_per_task_type(revision):
    datasets, transformations = PRESETS.get("minimal").choose(revision)
    assert transformations == ["paraphrasing", "expansion", "translation"]
    task_types = [s["task_type"] for s in revision.manifest["sources"] if s["name"] in datasets]
    assert (
        len(task_types)
        == len(set(task_types))
        == len(
            {
                s["task_type"]
                for s in revision.manifest["sources"]
                if {"paraphrasing", "expansion", "translation"} <= {t for t, _ in revision.variants(s["name"])}
            }
        )
    )
    firsts = {}
    for source in revision.manifest["sources"]:
        firsts.setdefault(source["task_type"], source["name"])
    assert datasets[0] == firsts[task_types[0]]
    assert PRESETS.get("full").choose(revision) == (revision.dataset_names(), None)


def test_a_preset_row_of_the_table_is_a_choice_with_its_help(revision, monkeypatch):
    """A preset is a row of transformations.yaml: its slots choose, its description is --preset's help."""
    from hteb_contract.specs.transformations import PresetSpec
    from hteb_score.scoring.selection import Preset

    quick = Preset(PresetSpec("lexical", "the lexical axis", (("backtranslation", "paraphrasing"),)))
    datasets, transformations = quick.choose(revision)
    held = {name: {t for t, _ in revision.variants(name)} for name in revision.dataset_names()}
    slot = next(t for t in ("backtranslation", "paraphrasing") if any(t in h for h in held.values()))
    assert transformations == [slot] and all(slot in held[name] for name in datasets)
    code, out, _ = run("score", "--help")
    words = " ".join(out.split())
    assert code == 0 and all(f"{n}: {' '.join(p.spec.description.split()[:3])}" in words for n, p in PRESETS.items())


def test_judge_filter_keeps_the_mean_at_or_above_the_threshold_and_every_unjudged_item(revision):
    kept, means = [], []
    for name in revision.dataset_names():
        for t, s in revision.variants(name):
            records, items = revision.items(name, t, s), revision.item_columns(name, t, s)
            means.extend(judge_means(items))
            kept.extend(judge_kept(judge_means(items), 3))
            assert judge_kept(judge_means(items), None) == [True] * len(records)
            for record, keep in zip(records, kept[-len(records) :]):
                scores = [x for x in (record.judge.quality, record.judge.fluency) if x is not None]
                assert keep == (not scores or sum(scores) / len(scores) >= 3)
    assert not all(kept) and any(keep and mean is not None for keep, mean in zip(kept, means))


@pytest.mark.slow
def test_min_judge_scores_only_kept_items_and_counts_them(revision, tmp_path: Path):
    code, out, err = run("--min-judge", "3", "--out", tmp_path / "f", "--quiet", "--datasets", "STSBenchmark,SciFact")
    assert code == 0, err
    card = json.loads((tmp_path / "f" / "result_card.json").read_text())
    assert card["selection"] == {
        "preset": None,
        "min_judge": 3,
        "datasets": ["STSBenchmark", "SciFact"],
        "transformations": None,
        "seeds": None,
    }
    for entry in card["error_policy"]:
        records = revision.items(entry["dataset"], entry["transformation"], entry["seed"])
        assert entry["items"] == len(records)
        assert entry["judge_dropped"] == sum(1 for r in records if judge_mean(r) is not None and judge_mean(r) < 3)
        assert entry["unjudged"] == sum(1 for r in records if judge_mean(r) is None)
    emptied = {(f["dataset"], f["transformation"]) for f in card["flags"] if f["code"] == "filtered_too_far"}
    backtranslation = next(
        e for e in card["error_policy"] if (e["dataset"], e["transformation"]) == ("STSBenchmark", "backtranslation")
    )
    assert backtranslation["judge_dropped"] == backtranslation["items"]  # SmolLM2's back-translations all fail
    assert ("STSBenchmark", "backtranslation") in emptied
    assert "## Quality filter: judge mean >= 3" in (tmp_path / "f" / "result_card.md").read_text()


@pytest.mark.slow
def test_compare_shows_the_shift_the_filter_causes(tmp_path: Path):
    for name, extra in (("all", ()), ("filtered", ("--min-judge", "3"))):
        code, _, err = run(*extra, "--out", tmp_path / name, "--quiet", "--datasets", "STSBenchmark,SciFact")
        assert code == 0, err
    code, _, err = run(
        "compare",
        tmp_path / "all" / "result_card.json",
        tmp_path / "filtered" / "result_card.json",
        "--out",
        tmp_path / "cmp",
    )
    assert code == 0, err
    rows = {m["model"] for m in json.loads((tmp_path / "cmp" / "comparison.json").read_text())["leaderboard"]}
    assert rows == {"sentence-transformers/all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2 [judge>=3]"}
