"""`.eval_results/hteb-<label>.yaml` follows the Hub's documented evaluation-results format.

The rules below are the format's documented fields (https://huggingface.co/docs/hub/eval-results
and the specification it links, hub-docs `eval_results.yaml`; huggingface_hub's `EvalResultEntry`
mirrors them): a YAML list; each entry a `dataset` mapping with `id` (a Hub dataset ID, required),
`task_id` (required) and `revision` (optional, the dataset's commit), a numeric `value`
(required), and optional `verifyToken`, `date` (ISO-8601 date or datetime), `source` (`url`
required when given; `name`, `user`, `org`) and `notes`. Nothing else is allowed.
"""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
import yaml

from hteb_score.report.compare.inputs import load_card
from hteb_contract.hub_eval import declared_ids, eval_yaml
from hteb_score.report.card.model_index import eval_results_file_yaml, hub_dataset_id, model_index_yaml

ENTRY_KEYS, DATASET_KEYS, SOURCE_KEYS = (
    {"dataset", "value", "verifyToken", "date", "source", "notes"},
    {"id", "task_id", "revision"},
    {"url", "name", "user", "org"},
)
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def documented_format_errors(entries: object) -> list[str]:
    """Every way `entries` breaks the documented format (empty: it follows it)."""
    if not isinstance(entries, list) or not entries:
        return ["not a non-empty YAML list"]
    errors = []
    for n, entry in enumerate(entries):
        if not isinstance(entry, dict):
            errors.append(f"{n}: not a mapping")
            continue
        errors += [f"{n}: unknown key {k!r}" for k in set(entry) - ENTRY_KEYS]
        dataset = entry.get("dataset")
        if not isinstance(dataset, dict):
            errors.append(f"{n}: dataset missing")
        else:
            errors += [f"{n}: unknown dataset key {k!r}" for k in set(dataset) - DATASET_KEYS]
            if not (isinstance(dataset.get("id"), str) and HUB_ID.match(dataset["id"])):
                errors.append(f"{n}: dataset.id {dataset.get('id')!r} is not a Hub dataset ID")
            if not isinstance(dataset.get("task_id"), str) or not dataset["task_id"]:
                errors.append(f"{n}: dataset.task_id missing")
            if "revision" in dataset and not isinstance(dataset["revision"], str):
                errors.append(f"{n}: dataset.revision is not a string")
        if isinstance(entry.get("value"), bool) or not isinstance(entry.get("value"), (int, float)):
            errors.append(f"{n}: value {entry.get('value')!r} is not a number")
        if "date" in entry:
            try:
                dt.datetime.fromisoformat(str(entry["date"]).replace("Z", "+00:00"))
            except ValueError:
                errors.append(f"{n}: date {entry['date']!r} is not ISO-8601")
        source = entry.get("source")
        if source is not None and (not isinstance(source, dict) or "url" not in source or set(source) - SOURCE_KEYS):
            errors.append(f"{n}: source must have url and only {sorted(SOURCE_KEYS)}")
        if "notes" in entry and not isinstance(entry["notes"], str):
            errors.append(f"{n}: notes is not a string")
    return errors


def test_the_validator_refuses_what_the_documentation_forbids():
    good = [{"dataset": {"id": "Idavidrein/gpqa", "task_id": "gpqa_diamond"}, "value": 0.412}]
    assert documented_format_errors(good) == []
    for bad in (
        [{"dataset": {"id": "file:///x", "task_id": "t"}, "value": 1}],
        [{"dataset": {"id": "a/b"}, "value": 1}],
        [{"dataset": {"id": "a/b", "task_id": "t"}, "value": "1"}],
        [{"dataset": {"id": "a/b", "task_id": "t"}, "value": 1, "metric": "x"}],
        [{"dataset": {"id": "a/b", "task_id": "t"}, "value": 1, "source": {"name": "n"}}],
        [],
    ):
        assert documented_format_errors(bad)


def test_hub_revision_cards_give_a_file_in_the_documented_format(card_files, tmp_path, run_cli):
    code, _, err = run_cli("compare", *card_files[:2], "--out", tmp_path / "out", "--splits", "5")
    assert code == 0, err
    files = sorted((tmp_path / "out" / "model_index").glob("*/.eval_results/hteb-*.yaml"))
    assert len(files) == 2
    cards = [load_card(path).card for path in card_files[:2]]
    for path in files:
        entries = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert documented_format_errors(entries) == []
        assert len({e["dataset"]["revision"] for e in entries}) == 1  # the revision the card was scored on
        assert entries[0]["dataset"]["revision"] in {card["dataset"]["revision"] for card in cards}
        assert {e["dataset"]["id"] for e in entries} == {"hteb/sample"}
        assert {e["date"] for e in entries} <= {card["created"] for card in cards}


@pytest.mark.parametrize(
    "repo_id, expected",
    [
        ("hf://HTEB/revisions", "HTEB/revisions"),
        ("hteb/sample", "hteb/sample"),
        ("file:///work/store", None),
        ("/work/store", None),
        ("local:/data", None),
        ("./store", None),
        ("a/b/c", None),
    ],
)
def test_only_hub_stores_name_a_hub_dataset(repo_id, expected):
    assert hub_dataset_id(repo_id) == expected


def test_a_local_revision_gets_no_eval_results_file(card_files):
    scores = load_card(card_files[0])
    scores.card["dataset"]["repo_id"] = "file:///work/main/.hteb/store"
    assert eval_results_file_yaml(scores) is None


def _hub_card(card_files, tmp_path, name: str, **selection) -> object:
    card = json.loads(card_files[0].read_text())
    card["dataset"]["repo_id"] = "hf://hteb/sample"
    card["selection"] = {
        "preset": None,
        "min_judge": None,
        "datasets": None,
        "transformations": None,
        "seeds": None,
        **selection,
    }
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(card))
    return load_card(path)


def test_the_export_names_what_exists_and_tells_selections_apart(card_files, tmp_path):
    """Issue 23 item 6: the bare dataset id, configs the revision has, no made-up split, the
    selection machine-readable, and a filtered card's task ids distinct from the unfiltered one's,
    each id (the paper's threshold 3 included) one the revision's eval.yaml declares."""
    plain, judged = _hub_card(card_files, tmp_path, "plain"), _hub_card(card_files, tmp_path, "judged", min_judge=3.0)
    index = yaml.safe_load(model_index_yaml(plain))["model-index"][0]["results"]
    datasets = set(plain.original)
    for entry in index:
        assert entry["dataset"]["type"] == "hteb/sample" and "split" not in entry["dataset"]
        assert entry["dataset"].get("config") in datasets | {None}
        assert all(m["args"]["protocol"] == "hteb" and m["args"]["on_error"] == "original" for m in entry["metrics"])
    ids = {e["dataset"]["task_id"] for e in yaml.safe_load(eval_results_file_yaml(plain))}
    judged_entries = yaml.safe_load(eval_results_file_yaml(judged))
    assert ids.isdisjoint({e["dataset"]["task_id"] for e in judged_entries})
    assert all(e["dataset"]["task_id"].endswith(".judge3") and "min_judge=3;" in e["notes"] for e in judged_entries)
    variants = {
        d: {
            (r["transformation"], r["seed"])
            for r in plain.card["scores"]
            if r["dataset"] == d and r["transformation"] != "original"
        }
        for d in datasets
    }
    defined = declared_ids(eval_yaml("sample", variants, judged=True))
    assert ids | {e["dataset"]["task_id"] for e in judged_entries} <= defined
