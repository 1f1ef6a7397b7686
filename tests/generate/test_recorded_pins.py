"""A regeneration (`reproduce`, `remake`) loads the commit the revision's manifest records for a model the
registry names by a branch, never what the branch names today: the manifest's pins come first, and the Hub or
cache is asked only for a model the manifest does not name."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hteb_generate.engine.models import MODELS
from hteb_generate.setup.config import build_config
from hteb_generate.setup.engine_plan import engine_slots
from hteb_generate.setup.machine import Facts
from hteb_generate.setup.pins import MANIFEST_SOURCE, recorded_pins, resolve_pins

RECORDED = "fedcba9876543210fedcba9876543210fedcba98"


def _branch_named() -> tuple[str, str]:
    spec = next(s for _, s in MODELS.items() if s.hub and not s.pinned)  # the default generator, on `main`
    return spec.model_id, spec.revision


@pytest.fixture
def offline(tmp_path, monkeypatch):
    """No Hub and an empty cache: a branch resolved here would fail, so a commit found is the manifest's."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return Facts(hf_cache=str(tmp_path / "empty-cache"))


def test_the_manifest_commit_is_loaded_and_nothing_is_asked(offline, tmp_path):
    model_id, branch = _branch_named()
    manifest = {"generator": {"model_id": model_id, "revision": RECORDED}, "judge": None}
    pins = recorded_pins(manifest)
    assert {k: (p.commit, p.source) for k, p in pins.items()} == {f"{model_id}@{branch}": (RECORDED, MANIFEST_SOURCE)}
    cfg = build_config(seed="1339", profile="gpu", overrides={"cache_dir": str(tmp_path / "c")})
    facts = resolve_pins(cfg, replace(offline, pins=pins))
    assert {s.spec.revision for s in engine_slots(cfg, facts) if s.spec.model_id == model_id} == {RECORDED}
    # without the manifest's pin the branch is resolved afresh: here, offline, it cannot be
    asked = resolve_pins(cfg, offline).pins[f"{model_id}@{branch}"]
    assert asked.commit is None and "cannot resolve" in asked.source


def test_a_rule_made_revision_records_no_pin():
    assert recorded_pins({"generator": {"rules": "hteb-noise-rules@2"}, "judge": None}) == {}
