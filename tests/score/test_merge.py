"""Merged work units equal one whole run, exactly: `hteb-score merge` of per-dataset parts writes the
same files with the same content as one run over the same datasets, but for what is by nature one
process's (run_files.PER_RUN). Fast with the hashed bag-of-words encoder (scored_parts.py), and end to
end with the real model through the command line."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hteb_contract.errors import HtebError
from hteb_score.scoring.parts import merge_parts, read_parts
from refusal import run
from run_files import outputs
from scored_parts import SMALL, scored_part, with_identity, write_part


def test_merged_parts_equal_the_whole_run_hashed_encoder(tmp_path):
    whole = write_part(scored_part(None), tmp_path / "whole-part")
    parts = [write_part(scored_part([name]), tmp_path / name) for name in reversed(SMALL)]  # any order
    assert run("merge", whole, "--out", tmp_path / "whole")[0] == 0
    code, out, err = run("merge", *parts, "--out", tmp_path / "merged")
    assert code == 0, err
    expected = outputs(tmp_path / "whole")
    assert outputs(tmp_path / "merged") == expected
    assert expected["result_card.json"]["statistics"]["drift"] and len(expected) > 10  # cards with content
    assert json.loads((tmp_path / "merged" / "result_card.json").read_text())["timings"]["total_s"] > 4.0  # summed


def test_parts_of_a_larger_run_make_the_card_of_a_subset(tmp_path):
    """merge --datasets: per-dataset parts of a four-dataset run give the card of a run over two of them
    (in the order named), which is how a whole-revision run's parts also make the six-dataset findings."""
    subset = ["SciFact", "STSBenchmark"]
    assert (
        run(
            "merge",
            write_part(scored_part(None, planned=subset), tmp_path / "subset-part"),
            "--out",
            tmp_path / "subset",
        )[0]
        == 0
    )
    parts = [write_part(scored_part([name]), tmp_path / name) for name in SMALL]
    code, out, err = run("merge", *parts, "--datasets", "SciFact, STSBenchmark", "--out", tmp_path / "merged")
    assert code == 0, err
    assert outputs(tmp_path / "merged") == outputs(tmp_path / "subset")
    card = json.loads((tmp_path / "merged" / "result_card.json").read_text())
    assert card["dataset"]["datasets"] == subset
    assert read_parts(parts, subset).timings["total_s"] == 2.0  # the time of the two parts used, not of four


@pytest.mark.parametrize(
    "datasets, message",
    [
        ("Banking77", "merge --datasets Banking77: not one of "),
        (",", "--datasets ',' names nothing"),  # the one reader of a list of names (cli/options.names)
        ("SciFact,SciFact", "--datasets names 'SciFact' twice"),
    ],
)
def test_a_subset_outside_the_plan_is_refused(tmp_path, datasets, message):
    part = write_part(scored_part(["SciFact"]), tmp_path / "part")
    code, out, err = run("merge", part, "--datasets", datasets, "--out", tmp_path / "merged")
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "merged").exists()


def test_gzipped_parts_merge_as_the_parts_they_hold(tmp_path):
    """Parts kept gzipped (as docs/findings keeps them) merge exactly as the folders they came from."""
    folders = [write_part(scored_part([name]), tmp_path / name) for name in SMALL]
    files = []
    for folder in folders:
        files.append(tmp_path / f"{folder.name}.hteb_part.json.gz")
        files[-1].write_bytes(gzip.compress((folder / "hteb_part.json").read_bytes()))
    assert run("merge", *folders, "--out", tmp_path / "plain")[0] == 0
    code, _, err = run("merge", *files, "--out", tmp_path / "gzipped")
    assert code == 0, err
    assert outputs(tmp_path / "gzipped") == outputs(tmp_path / "plain")


def test_parts_of_dataset_folders_are_not_narrowed(shared_data, tmp_path):
    part = write_part(scored_part(["STS12"], planned=["STS12", "STSBenchmark"], source_dir=shared_data), tmp_path / "p")
    code, _, err = run("merge", part, "--datasets", "STS12", "--out", tmp_path / "merged")
    assert code != 0 and "scored dataset folders, whose digest covers its whole plan" in err


@pytest.mark.slow
def test_merged_parts_equal_the_whole_run_end_to_end(tmp_path):
    """all-MiniLM-L6-v2 on the sample's four small datasets: one run, and one --part run per dataset merged."""
    plan = ["--datasets", ",".join(SMALL), "--quiet"]
    code, whole_line, err = run(*plan, "--out", tmp_path / "whole")
    assert code == 0, err
    for name in SMALL:
        code, out, err = run(*plan, "--part", name, "--out", tmp_path / "parts" / name)
        assert code == 0, err
        assert f"part: {name} of 4 planned dataset(s)" in out
    code, merged_line, err = run("merge", *sorted((tmp_path / "parts").iterdir()), "--out", tmp_path / "merged")
    assert code == 0, err
    assert outputs(tmp_path / "merged") == outputs(tmp_path / "whole")
    card = json.loads((tmp_path / "merged" / "result_card.json").read_text())
    assert [f for f in card["flags"] if f["code"] == "missing_dataset"] == []
    assert merged_line.split(" -> ")[0] == whole_line.split(" -> ")[0]  # the same summary line
    assert merged_line.startswith(f"{card['model']['model_id']} [hteb] original {card['aggregates']['original']:.2f}")


def test_prompts_an_mteb_model_gave_each_task_are_united_not_compared():
    """An mteb model records the prompt it gave each task: parts of other tasks hold other prompts,
    and their merge holds every one, in the planned order (as one run records them)."""
    part = scored_part(["STSBenchmark"])
    given = {"STSBenchmark": {"type": "STS", "query": "q1"}, "SciFact": {"type": "Retrieval", "query": "q2"}}

    def with_prompts(*tasks):
        model = {**part.identity.model, "mteb": {"name": "m", "prompts": {t: given[t] for t in tasks}}}
        encode = {**part.identity.encode, "prompts": {f"{t}/query": given[t]["query"] for t in tasks}}
        return with_identity(part, model=model, encode=encode)

    merged = merge_parts([with_prompts("STSBenchmark"), with_prompts("SciFact"), with_prompts("STSBenchmark")])
    whole = with_prompts("STSBenchmark", "SciFact").identity
    assert merged.identity == whole
    assert list(merged.identity.model["mteb"]["prompts"]) == ["STSBenchmark", "SciFact"]
    other = with_identity(part, model={**whole.model, "mteb": {"name": "another", "prompts": {}}})
    with pytest.raises(HtebError, match='model.mteb.name: "m" vs "another"'):
        merge_parts([with_prompts("SciFact"), other])


@given(
    diffs=st.lists(st.one_of(st.none(), st.floats(0, 1e-3, allow_subnormal=False)), min_size=2, max_size=4),
    order=st.randoms(use_true_random=False),
)
@settings(max_examples=40, deadline=None)
def test_units_run_on_other_machines_merge_and_the_card_states_the_largest_difference(diffs, order):
    """OpenVINO's (or a lower precision's) difference from torch fp32 on the probe is measured where a unit
    runs and moves by ~1e-7 between machines (mpnet's units: 1.5e-7 here, 2.8e-7 on another machine): a
    measurement, not a setting. Parts that differ only in it merge, in any order, into the largest of them;
    a setting beside it is still compared."""
    stsb, scifact = scored_part(["STSBenchmark"]), scored_part(["SciFact"])
    parts = [
        with_identity(stsb if i % 2 == 0 else scifact, encode={**stsb.identity.encode, "max_diff_vs_torch_fp32": d})
        for i, d in enumerate(diffs)
    ]
    order.shuffle(parts)
    measured = [d for d in diffs if d is not None]
    merged = merge_parts(parts).identity.encode["max_diff_vs_torch_fp32"]
    assert merged == (max(measured) if measured else None)
    other = with_identity(scifact, encode={**stsb.identity.encode, "precision": "fp16"})
    with pytest.raises(HtebError, match='encode.precision: "fp32" vs "fp16"'):
        merge_parts([parts[0], other])


def test_parts_of_dataset_folders_merge_into_the_whole_run(shared_data, tmp_path):
    """--source-dir: every part names the digest of the whole run's folders, so its parts merge."""
    planned = ["STS12", "STSBenchmark"]
    whole = write_part(scored_part(None, planned=planned, source_dir=shared_data), tmp_path / "whole-part")
    parts = [
        write_part(scored_part([name], planned=planned, source_dir=shared_data), tmp_path / name) for name in planned
    ]
    assert run("merge", whole, "--out", tmp_path / "whole")[0] == 0
    code, _, err = run("merge", *parts, "--out", tmp_path / "merged")
    assert code == 0, err
    assert outputs(tmp_path / "merged") == outputs(tmp_path / "whole")
    assert json.loads((tmp_path / "merged" / "result_card.json").read_text())["dataset"]["datasets"] == planned


def _files(folder) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_merging_unchanged_parts_again_with_keep_timings_changes_no_file(tmp_path):
    """`make findings` merges every committed part again: --keep-timings keeps the earlier card's date and
    timings where the new card says the same otherwise, so no file changes; changed parts write a new card."""
    parts = [write_part(scored_part([name]), tmp_path / name) for name in SMALL]
    out = tmp_path / "merged"
    assert run("merge", *parts, "--out", out)[0] == 0
    first = _files(out)
    card = json.loads(first["result_card.json"])
    card["created"] = "2000-01-01T00:00:00+00:00"  # an earlier merge's, unmistakably
    (out / "result_card.json").write_text(json.dumps(card, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    code, said, err = run("merge", *parts, "--out", out, "--overwrite", "--keep-timings")
    assert code == 0 and "date and timings kept" in said, err
    again = json.loads((out / "result_card.json").read_text())
    assert (again["created"], again["timings"]) == (card["created"], card["timings"])
    kept = _files(out)
    assert kept["result_card.md"] == first["result_card.md"] and set(kept) == set(first)
    assert all(kept[name] == first[name] for name in first if not name.startswith("result_card."))
    # other parts (a subset of the datasets): a new card, its own date and timings
    code, said, err = run("merge", *parts, "--datasets", SMALL[0], "--out", out, "--overwrite", "--keep-timings")
    assert code == 0 and "kept" not in said, err
    assert json.loads((out / "result_card.json").read_text())["created"] != card["created"]


@pytest.mark.parametrize(
    "earlier", ["not json", "[1, 2]", "{}", '{"created": "x"}'], ids=["text", "list", "empty", "no-timings"]
)
def test_keep_timings_writes_a_new_card_over_one_that_is_not_an_earlier_card(tmp_path, earlier):
    parts = [write_part(scored_part([name]), tmp_path / name) for name in SMALL]
    out = tmp_path / "merged"
    assert run("merge", *parts, "--out", out)[0] == 0
    (out / "result_card.json").write_text(earlier, encoding="utf-8")
    code, said, err = run("merge", *parts, "--out", out, "--overwrite", "--keep-timings")
    assert code == 0 and "kept" not in said, err
    assert outputs(out)["result_card.json"]["dataset"]["datasets"] == list(SMALL)
